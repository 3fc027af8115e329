"""The restart analysis on the small built incident of tests/helpers/restarts_incident.py,
whose docstring holds the arithmetic every number here is checked against."""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan import workspace
from relplan.analyses import analyze
from relplan.analyses.options import AnalyzeOptions
from relplan.analyses.restarts import Restarts
from tests.helpers import restarts_incident


def _run(tmp_path: Path, *, with_gateway: bool = True) -> Restarts:
    db = restarts_incident.build(tmp_path / "w.duckdb", with_gateway=with_gateway)
    with workspace.open_workspace(db, read_only=True) as con:
        r = analyze(con, AnalyzeOptions(only=["restarts"])).get(Restarts)
    assert r is not None
    return r


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> Restarts:
    return _run(tmp_path_factory.mktemp("restarts"))


def test_restarts_are_found_once_each_with_time_cause_and_kind(result: Restarts) -> None:
    got = [(r.pod, r.t_s, r.count, r.kind, r.cause, r.time_from) for r in result.restarts]
    assert got == [
        ("vllm-a", 310.0, 1, "crash", "oom", "terminated timestamp"),
        ("vllm-a", 480.0, 2, "crash", "oom", "counter samples"),
        ("vllm-b", 600.0, 1, "crash", "liveness", "kill event"),
        ("vllm-c", 900.0, 1, "planned", "stop", "kill event"),
        ("vllm-d", 960.0, 1, "planned", "stop", "kill event"),
    ]
    assert result.restarts[1].bracket_s == (450.0, 480.0)
    assert [r.last_terminated_reason for r in result.restarts[:3]] == ["OOMKilled"] * 2 + ["Error"]


def test_totals_per_replica(result: Restarts) -> None:
    assert (result.crashes, result.planned, result.replicas_seen) == (4, 2, 4)
    assert result.crashes_per_replica == 1.0
    assert result.planned_per_replica == 0.5
    assert [(r.pod, r.crashes, r.planned, r.streams_killed) for r in result.replicas] == [
        ("vllm-a", 3, 0, 3),
        ("vllm-b", 1, 0, 2),
        ("vllm-c", 0, 1, 0),
        ("vllm-d", 0, 1, 0),
    ]


def test_streams_killed_are_the_attempts_cut_at_each_restart(result: Restarts) -> None:
    assert [r.streams_killed for r in result.restarts] == [2, 1, 2, 0, 1]
    assert result.restarts[3].streams_finished == 1  # c1 drained at vllm-c's stop
    assert result.streams_killed_per_crash == 1.25


def test_down_to_ready_from_the_readiness_gauge_and_first_served(result: Restarts) -> None:
    assert [r.down_to_ready_s for r in result.restarts[:3]] == [80.0, 60.0, 60.0]
    assert [r.down_to_first_served_s for r in result.restarts[:3]] == [90.0, 80.0, 50.0]
    assert result.mean_down_to_ready_s == pytest.approx(200 / 3)


def test_probe_failures_before_and_the_crash_loop(result: Restarts) -> None:
    assert [r.probes_failed_before for r in result.restarts] == [
        [],
        [],
        ["Liveness"],
        ["Readiness"],
        [],
    ]
    assert result.crash_loops == ["vllm-a"]
    assert [r.crash_loop for r in result.restarts] == [True, True, False, False, False]


def test_the_rollout_is_told_apart_and_did_not_drain(result: Restarts) -> None:
    assert [r.rollout for r in result.restarts] == [None, None, None, 0, 0]
    (ro,) = result.rollouts
    assert (ro.start_s, ro.end_s, ro.pods, ro.restarts) == (900.0, 960.0, 2, 2)
    assert (ro.streams_dropped, ro.drained, ro.readiness_failed_first) == (1, False, 1)
    assert result.streams_dropped_per_rollout == 1.0


def test_the_node_with_repeats_and_an_xid_is_a_cordon_candidate(result: Restarts) -> None:
    got = [
        (n.node, n.crashes, n.pods_crashed, n.xid_codes, n.cordon_candidate) for n in result.nodes
    ]
    assert got == [("n1", 4, 2, [79], True), ("n2", 0, 0, [], False)]
    assert result.nodes[0].why == "4 crashes on it; Xid 79 with a crash"


def test_without_a_gateway_log_the_streams_are_unknown_not_zero(tmp_path: Path) -> None:
    db = restarts_incident.build(tmp_path / "w.duckdb", with_gateway=False)
    with workspace.open_workspace(db, read_only=True) as con:
        r = analyze(con, AnalyzeOptions(only=["restarts"])).get(Restarts)
    assert r is not None
    assert {x.streams_killed for x in r.restarts} == {None}
    assert r.streams_killed_per_crash is None
    assert r.rollouts[0].drained is None
    assert r.crashes == 4


def test_the_finding_names_the_numbers(result: Restarts) -> None:
    assert result.finding == (
        "4 crash(es) and 2 planned restart(s) on 4 pod(s) (1.00 crashes per replica in the"
        " window); 1.2 streams killed per crash; 67 s down per crash; crash loop on vllm-a;"
        " 1 rollout(s), 0 drained; cordon candidate(s): n1."
    )


def test_the_same_incident_from_real_input_files_gives_the_same_restarts(
    tmp_path: Path, result: Restarts
) -> None:
    """Proxy JSON Lines, an OpenMetrics dump and `kubectl get events -o json`, through
    `relplan ingest` and `relplan analyze --only restarts`."""
    from relplan.cli import app
    from tests.helpers.fast_cli import CliRunner

    files = restarts_incident.write_files(tmp_path / "in")
    db = tmp_path / "files.duckdb"
    runner = CliRunner()
    res = runner.invoke(app, ["ingest", "--db", str(db), *map(str, files)])
    assert res.exit_code == 0, res.stderr
    with workspace.open_workspace(db, read_only=True) as con:
        formats = con.execute("select format from sources order by source_id").fetchall()
        again = analyze(con, AnalyzeOptions(only=["restarts"])).get(Restarts)
    assert formats == [("jsonl",), ("openmetrics",), ("kube_events",)]
    assert again == result
    text = runner.invoke(app, ["analyze", "--db", str(db), "--only", "restarts"])
    assert text.exit_code == 0, text.stderr
    assert "Crashes, restarts and rollouts" in text.stdout
    assert "Cordon candidate n1: 4 crashes on it; Xid 79 with a crash." in text.stdout
    assert "Rollout 1: 2 pods from 900 s to 960 s, 1 streams dropped, did not drain" in text.stdout
    assert result.finding in text.stdout
