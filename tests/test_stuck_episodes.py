"""Stuck-replica episodes (relplan/analyses/stuck.py), checked on paper.

A built incident, seconds from T0, metrics every 15 s from 0 to 300 (vLLM V1 names):
  pod r0 (node label gpu-node-1): vllm:num_requests_running 2 throughout;
    vllm:generation_tokens_total 10 * t up to 90 (900), flat at 900 until 210, then
    900 + 10 * (t - 210) (1050 at 225).
  pod r1 (no node label): running 1 until 225 and 0 from 240; tokens 5 * t until 240, then
    flat: nothing runs while the counter is flat, so it is not stuck.
Proxy attempts: s1 on r0 sent 50, client_gone at 200; s2 on r0 sent 100, delivered at 230;
  s3 on r0 sent 0, delivered at 60; s4 on r1 sent 100, delivered at 130.
t0 = the first attempt (0), T = the last proxy time (230): evaluations every 15 s, 0..225.

The rule (stuck_replica): running > 0 and increase(tokens[1m]) == 0. increase() reads the
samples in [t - 60, t] (relplan.alerts evaluates as Prometheus 2.x): at 135 they are 75 (750)
.. 135 -> risen; at 150 they are 90 .. 150, all 900 -> it holds; it holds through 210
([150, 210], all 900); at 225 the sample 1050 is in the range -> it stops. So one episode
on r0: start 150 - 60 = 90 (the first flat sample: the last token came in (75, 90]), end
225 (135 s), not ongoing; the `for: 1m` is reached at 210, so it alerted (the health
signal fires 210..225).
Streams caught: s1 (50..200) and s2 (100..230) overlap [90, 225); s3 ended at 60, s4 is on
r1 -> 2 caught, 1 of them not delivered (s1).

Engine-trace road, no metrics (seconds from T0):
r0: y1 scheduled 0, tokens at 2, 3, 4, 5, then none; aborted at 100 (its client left at 99).
    y2 scheduled 10, never a step, aborted at 95. y3 scheduled 120, tokens 121, 122, finished.
    Running span [0, 100] (y1 and y2 merged); no token from 5 to 121 -> one stretch
    [max(5, 0), min(121, 100)] = [5, 100], 95 s >= 60; executions 2; alerted needs 60 + 60 s
    -> no. Streams: a1 (0..99) and a2 (9..94) on r0, both client_gone -> 2 caught, 2 failed.
r1: y4 scheduled 0, a token every 10 s until it finishes at 200: no stretch of 60 s.
    y5 scheduled 210, tokens at 211, 212, no terminal event: it runs until its last record
    (212), so the end of the trace is not taken for a hang.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan import workspace
from relplan.alerts.health import evaluate_health
from relplan.alerts.rules import health_rules
from relplan.analyses import AnalyzeOptions, analyze
from relplan.analyses.stuck import StuckEpisodes, stuck_rule
from tests.helpers.incident import T0, _insert, add_source, insert_events, insert_steps
from tests.helpers.report_samples import collected


def _gen_r0(t: int) -> float:
    return 10 * t if t <= 90 else 900 if t <= 210 else 900 + 10 * (t - 210)


def _samples() -> list[tuple[float, str, dict[str, str], float]]:
    r0 = {"pod": "r0", "node": "gpu-node-1", "model_name": "m"}
    r1 = {"pod": "r1", "model_name": "m"}
    out: list[tuple[float, str, dict[str, str], float]] = []
    for t in range(0, 301, 15):
        out.append((t, "vllm:num_requests_running", r0, 2))
        out.append((t, "vllm:generation_tokens_total", r0, _gen_r0(t)))
        out.append((t, "vllm:num_requests_running", r1, 1 if t <= 225 else 0))
        out.append((t, "vllm:generation_tokens_total", r1, 5 * min(t, 240)))
    return out


def build(path: Path, replica_names: tuple[str, str] = ("r0", "r1")) -> Path:
    con = workspace.connect(path)
    try:
        sid = add_source(con, "metrics", "openmetrics", "metrics.om.txt")
        con.execute(  # one insert: executemany costs about 1 ms of CPU a row
            "insert into metric_samples (t, name, labels, value, source_id, source_row)"
            " select s.t, s.n, map(s.k, s.v), s.value, $sid, s.row from (select unnest($rows) s)",
            {
                "sid": sid,
                "rows": [
                    {"t": T0 + t, "n": n, "k": list(lab), "v": list(lab.values())}
                    | {"value": float(v), "row": i + 1}
                    for i, (t, n, lab, v) in enumerate(_samples())
                ],
            },
        )
        sid = add_source(con, "proxy", "jsonl", "proxy.jsonl")
        a, b = replica_names
        rows = [
            ("s1", 50, 200, "client_gone", a),
            ("s2", 100, 230, "delivered", a),
            ("s3", 0, 60, "delivered", a),
            ("s4", 100, 130, "delivered", b),
        ]
        _insert(
            con,
            "attempts",
            [
                "call_id",
                "attempt",
                "t_planned",
                "t_sent",
                "t_end",
                "outcome",
                "attached",
                "replica",
                "source_id",
                "source_row",
            ],
            [
                (c, 0, T0 + s, T0 + s, T0 + e, o, False, r, sid, i + 1)
                for i, (c, s, e, o, r) in enumerate(rows)
            ],
        )
    finally:
        con.close()
    return path


def _stuck(path: Path) -> StuckEpisodes:
    con = workspace.connect(path, read_only=True)
    try:
        res = analyze(con, AnalyzeOptions(only=["stuck"]))
    finally:
        con.close()
    s = res.get(StuckEpisodes)
    assert s is not None, res.skipped
    return s


@pytest.fixture(scope="module")
def stuck(tmp_path_factory: pytest.TempPathFactory) -> StuckEpisodes:
    return _stuck(build(tmp_path_factory.mktemp("stuck") / "ws.duckdb"))


def test_one_episode_on_the_replica_whose_counter_stopped(stuck: StuckEpisodes) -> None:
    assert len(stuck.episodes) == 1
    e = stuck.episodes[0]
    assert (e.replica, e.start_s, e.end_s, e.duration_s) == ("r0", 90, 225, 135)
    assert not e.ongoing
    assert e.alerted
    assert e.peak_running == 2
    assert stuck.range_s == 60
    assert stuck.replica_label == "pod"


def test_the_episode_names_its_node_and_the_streams_it_caught(stuck: StuckEpisodes) -> None:
    e = stuck.episodes[0]
    assert e.node == "gpu-node-1"
    assert (e.streams_caught, e.streams_failed) == (2, 1)
    assert "2 streams caught" in stuck.finding


def test_the_definition_is_the_health_rules_and_agrees_with_its_alert(
    tmp_path: Path, stuck: StuckEpisodes
) -> None:
    rule = next(r for r in health_rules("pod") if r.signal == "stuck_replica")
    assert stuck.expr == rule.expr == stuck_rule("pod", {}).expr
    con = workspace.connect(build(tmp_path / "ws.duckdb"), read_only=True)
    try:
        health = evaluate_health(con, start=T0, end=T0 + 225, step=15)
    finally:
        con.close()
    signal = next(s for s in health.signals if s.signal == "stuck_replica")
    [fired] = signal.intervals
    assert (fired.replica, fired.start - T0, fired.end - T0) == ("r0", 210, 225)
    e = stuck.episodes[0]
    assert e.start_s <= fired.start - T0 < fired.end - T0 <= e.end_s


def test_streams_are_unknown_when_the_gateway_names_replicas_otherwise(tmp_path: Path) -> None:
    s = _stuck(build(tmp_path / "ws.duckdb", ("10.0.0.7:8000", "10.0.0.8:8000")))
    e = s.episodes[0]
    assert e.streams_caught is None
    assert "names replicas differently" in e.null_reasons["streams_caught"]


def test_skipped_without_the_two_metrics(tmp_path: Path) -> None:
    con = workspace.connect(build(tmp_path / "ws.duckdb"))
    try:
        con.execute("delete from metric_samples where name = 'vllm:generation_tokens_total'")
        res = analyze(con, AnalyzeOptions(only=["stuck"]))
    finally:
        con.close()
    assert res.get(StuckEpisodes) is None
    [skip] = res.skipped
    assert "vllm:num_requests_running" in skip.reason


def test_the_report_lists_each_episode_with_a_timeline(tmp_path: Path) -> None:
    from relplan.report.charts import chart_specs

    con = workspace.connect(build(tmp_path / "ws.duckdb"), read_only=True)
    try:
        data = collected(con, "stuck")
    finally:
        con.close()
    sec = data.stuck
    assert sec.available
    [row] = sec.table.rows
    assert row[:2] == ["r0", "gpu-node-1"]
    assert row[2] == "00:01:30–00:03:45"
    assert row[3:] == ["135 s", "yes", "2", "2 (1 not delivered)"]
    assert "stuck" in chart_specs(data)


def _trace_workspace(path: Path) -> Path:
    events = [
        (0, "y1", "scheduled", None, "r0"),
        (2, "y1", "first_token", None, "r0"),
        (100, "y1", "aborted", None, "r0"),
        (10, "y2", "scheduled", None, "r0"),
        (95, "y2", "aborted", None, "r0"),
        (120, "y3", "scheduled", None, "r0"),
        (121, "y3", "first_token", None, "r0"),
        (122, "y3", "finished", None, "r0"),
        (0, "y4", "scheduled", None, "r1"),
        (1, "y4", "first_token", None, "r1"),
        (200, "y4", "finished", None, "r1"),
        (210, "y5", "scheduled", None, "r1"),
        (211, "y5", "first_token", None, "r1"),
    ]
    steps = [
        *[(t - 1, t, "y1", 100 if t == 2 else 0, 1, "r0") for t in (2, 3, 4, 5)],
        (120, 121, "y3", 50, 1, "r0"),
        (121, 122, "y3", 0, 1, "r0"),
        (0, 1, "y4", 10, 1, "r1"),
        *[(t - 1, t, "y4", 0, 1, "r1") for t in range(10, 201, 10)],
        (210, 211, "y5", 20, 1, "r1"),
        (211, 212, "y5", 0, 1, "r1"),
    ]
    con = workspace.connect(path)
    try:
        insert_events(con, events)
        insert_steps(con, [(a, b, x, c, 0, d, r) for a, b, x, c, d, r in steps])
        sid = add_source(con, "proxy", "jsonl", "proxy.jsonl")
        _insert(
            con,
            "attempts",
            [
                "call_id",
                "attempt",
                "t_planned",
                "t_sent",
                "t_end",
                "outcome",
                "attached",
                "replica",
                "execution_id",
                "source_id",
                "source_row",
            ],
            [
                ("a1", 0, T0, T0, T0 + 99, "client_gone", False, "r0", "y1", sid, 1),
                ("a2", 0, T0 + 9, T0 + 9, T0 + 94, "client_gone", False, "r0", "y2", sid, 2),
            ],
        )
    finally:
        con.close()
    return path


def test_without_metrics_the_engine_trace_gives_the_episodes(tmp_path: Path) -> None:
    s = _stuck(_trace_workspace(tmp_path / "ws.duckdb"))
    assert s.source == "engine trace"
    [e] = s.episodes
    assert (e.replica, e.start_s, e.end_s, e.duration_s) == ("r0", 5, 100, 95)
    assert (e.executions, e.alerted, e.ongoing, e.node) == (2, False, False, None)
    assert (e.streams_caught, e.streams_failed) == (2, 2)
    assert "no node" in e.null_reasons["node"]


def test_the_text_output_lists_each_episode(stuck: StuckEpisodes) -> None:
    from relplan.text.heavy import render_stuck

    lines = render_stuck(stuck).splitlines()
    assert lines[0] == "Stuck replicas (from the metrics)"
    row = next(ln for ln in lines if ln.startswith("r0"))
    assert row.split()[:2] == ["r0", "gpu-node-1"]
    assert row.split()[-3:] == ["135", "yes", "2"]
