"""evaluate_health on workspaces: the function the analyses and the report call."""

from __future__ import annotations

from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from relplan import workspace
from relplan.alerts.health import HealthResult, evaluate_health
from relplan.alerts.promql_series import SeriesStore, make_labels
from relplan.alerts.rules import Thresholds
from relplan.errors import NoDataError
from relplan.text.analyze import render_health
from tests.helpers.alerts_scenarios import T0, fill, healthy_store, storm_store

START = T0 / 1000


def _run(store: SeriesStore, tmp_path: Path, **kw: object) -> HealthResult:
    con = workspace.connect(tmp_path / "w.duckdb")
    try:
        fill(con, store)
        return evaluate_health(con, **kw)  # type: ignore[arg-type]
    finally:
        con.close()


def _intervals(result: HealthResult) -> dict[str, list[tuple[str | None, float, float, bool]]]:
    return {
        s.signal: [(i.replica, i.start - START, i.end - START, i.ongoing) for i in s.intervals]
        for s in result.signals
    }


def test_storm_workspace_gives_the_hand_checked_intervals(tmp_path: Path) -> None:
    """Same scenario as the promtool proof (storm_store of tests/helpers/alerts_scenarios.py):
    replica c stuck at [420, 615), replica a diverging from 165 s to the end (ongoing); the
    replica label is found on the data (pod); the proxy signal is skipped for want of Envoy
    metrics."""
    result = _run(storm_store(), tmp_path, rules=Thresholds(preemption_rate=0.1))
    got = _intervals(result)
    assert result.replica_label == "pod"
    assert result.replicas == ["a", "b", "c"]
    assert (result.start, result.end, result.step_s) == (START, START + 900, 15.0)
    assert result.evaluations == 61
    assert got["stuck_replica"] == [("c", 420.0, 615.0, False)]
    assert got["counter_divergence"] == [("a", 165.0, 915.0, True)]
    skipped = {s.signal: s.skipped_reason for s in result.signals if not s.evaluated}
    assert skipped == {
        "retry_amplification": "needs the metric envoy_cluster_upstream_rq_retry,"
        " envoy_cluster_upstream_rq_total"
    }


def test_storm_json_snapshot(tmp_path: Path, snapshot: SnapshotAssertion) -> None:
    result = _run(storm_store(), tmp_path, rules=Thresholds(preemption_rate=0.1))
    assert result.model_dump(mode="json") == snapshot


def test_render_names_each_firing_interval(tmp_path: Path) -> None:
    result = _run(storm_store(), tmp_path, rules=Thresholds(preemption_rate=0.1))
    text = render_health(result)
    assert "stuck_replica" in text
    assert "c        " in text or " c " in text
    # wall-clock times (issue 13): 420 and 615 s after the first evaluation
    assert "2025-11-30 00:07:00 UTC" in text
    assert "2025-11-30 00:10:15 UTC" in text
    assert "retry_amplification" in text
    assert "skipped: needs the metric envoy_cluster_upstream_rq_retry" in text
    assert text.splitlines()[-1].startswith("Fired: ")


@pytest.mark.slow
def test_healthy_workspace_fires_nothing(tmp_path: Path) -> None:
    result = _run(healthy_store(), tmp_path)
    assert all(not s.intervals for s in result.signals)
    assert render_health(result).splitlines()[-1] == "No engine health signal fired."


def test_window_and_step_are_the_callers(tmp_path: Path) -> None:
    """Evaluating only [600, 900] every 30 s: the stuck alert needs a minute of pending
    again from 600 s, so with for 1m it does not fire before 660 s; the sample at 615 s
    ends the flat stretch, so it never fires in this window."""
    result = _run(storm_store(), tmp_path, start=START + 600, end=START + 900, step=30)
    assert result.evaluations == 11
    assert _intervals(result)["stuck_replica"] == []


def test_replica_label_precedence_and_override(tmp_path: Path) -> None:
    s = SeriesStore()
    s.add(
        make_labels("vllm:num_requests_waiting", {"replica": "r1", "instance": "10.0.0.1:8000"}),
        [T0, T0 + 15_000],
        [1, 2],
    )
    assert _run(s, tmp_path).replica_label == "replica"
    other = tmp_path / "other"
    other.mkdir()
    assert _run(s, other, replica_label="instance").replicas == ["10.0.0.1:8000"]


def test_older_vllm_metric_names_are_used_when_the_new_ones_are_absent(tmp_path: Path) -> None:
    s = SeriesStore()
    times = [T0 + 15_000 * i for i in range(41)]
    s.add(make_labels("vllm:gpu_cache_usage_perc", {"pod": "a"}), times, [0.99] * 41)
    s.add(make_labels("vllm:num_requests_waiting", {"pod": "a"}), times, [20.0] * 41)
    result = _run(s, tmp_path)
    cache = next(x for x in result.signals if x.signal == "cache_full_while_queueing")
    assert "vllm:gpu_cache_usage_perc" in cache.expr
    assert [(i.start - START, i.ongoing) for i in cache.intervals] == [(60.0, True)]


def test_a_workspace_without_metrics_says_what_is_missing(tmp_path: Path) -> None:
    con = workspace.connect(tmp_path / "empty.duckdb")
    try:
        with pytest.raises(NoDataError, match="needs vLLM metrics"):
            evaluate_health(con)
    finally:
        con.close()
