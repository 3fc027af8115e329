"""The streaming evaluator (relplan/alerts/shards.py, samples.py): evaluating a few replicas
at a time gives exactly what evaluating the whole fleet at once gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan import workspace
from relplan.alerts import promql_parser, rules, shards
from relplan.alerts.health import evaluate_health
from relplan.alerts.promql_series import SeriesStore, make_labels
from relplan.alerts.samples import load_store, stream_stores
from tests.helpers.alerts_scenarios import T0, fill, random_store, storm_store


def _fleet() -> SeriesStore:
    """random_store's three replicas, storm_store's under other names, an Envoy cluster
    whose series carry a pod label of their own, and one vLLM series without a pod label."""
    store = random_store(7)
    for labels, s in storm_store().series.items():
        d = dict(labels)
        if "pod" in d:
            d["pod"] = "storm-" + d["pod"]
        store.add_arrays(tuple(sorted(d.items())), s.t, s.v)
    for pod, name, step in (
        ("envoy-1", "envoy_cluster_upstream_rq_total", 30.0),
        ("envoy-2", "envoy_cluster_upstream_rq_total", 10.0),
        ("envoy-1", "envoy_cluster_upstream_rq_retry", 12.0),
        ("envoy-2", "envoy_cluster_upstream_rq_retry", 0.0),
    ):
        lab = make_labels(name, {"pod": pod, "envoy_cluster_name": "vllm"})
        store.add(lab, [T0 + 15_000 * i for i in range(80)], [step * i for i in range(80)])
    lab = make_labels("vllm:num_requests_waiting", {"engine": "0"})
    store.add(lab, [T0 + 15_000 * i for i in range(80)], [float(i % 30) for i in range(80)])
    return store


def test_every_health_rule_shards_by_its_grouping_label() -> None:
    got = {
        r.signal: shards.shard_label(promql_parser.parse(r.expr))
        for r in rules.health_rules("pod", proxy=True)
    }
    assert got == {
        "preemption_storm": "pod",
        "cache_full_while_queueing": "pod",
        "queue_growing": "pod",
        "stuck_replica": "pod",
        "counter_divergence": "pod",
        "retry_amplification": "envoy_cluster_name",
    }


@pytest.mark.parametrize(
    ("expr", "label"),
    [
        ("sum(rate(x[5m]))", None),  # aggregates every replica together
        ("x > 1", None),  # no grouping to shard by
        ("sum by (pod) (x) / on (node) sum by (pod, node) (y)", None),  # matches across pods
        ("sum by (pod) (x) / ignoring (pod) sum by (pod) (y)", None),
        ("max by (pod) (sum without (pod) (x))", None),  # the inner sum merges pods
        ("sum by (pod, node) (x) > on (pod, node) sum by (node, pod) (y)", "node"),
        ("sum by (pod) (x) and sum without (engine) (y)", "pod"),
    ],
)
def test_a_rule_that_combines_replicas_is_not_sharded(expr: str, label: str | None) -> None:
    assert shards.shard_label(promql_parser.parse(expr)) == label


def test_batches_hold_whole_shards_within_the_budget() -> None:
    found = shards.shards([("b", 4), ("a", 3), ("c", 10), ("a", 1), ("d", 2)])
    assert [(s.value, s.samples) for s in found] == [("a", 4), ("b", 4), ("c", 10), ("d", 2)]
    assert shards.batches(found, 8) == [["a", "b"], ["c"], ["d"]]
    assert shards.batches(found, None) == [["a", "b", "c", "d"]]
    assert shards.batches([], 8) == []


def test_streamed_stores_hold_every_series_once(tmp_path: Path) -> None:
    con = workspace.connect(tmp_path / "w.duckdb")
    try:
        fill(con, _fleet())
        names = ["vllm:num_requests_waiting", "envoy_cluster_upstream_rq_total"]
        whole = load_store(con, names, 0, 2e10)
        parts = list(stream_stores(con, names, 0, 2e10, "pod", budget=100))
    finally:
        con.close()
    assert len(parts) > 3
    seen = [k for p in parts for k in p.series]
    assert sorted(seen) == sorted(whole.series)
    for p in parts:
        for k, s in p.series.items():
            assert (s.t == whole.series[k].t).all()
            assert (s.v == whole.series[k].v).all()


@pytest.mark.parametrize("budget", [1, 700, 5_000])
def test_streamed_health_equals_the_whole_fleet_at_once(tmp_path: Path, budget: int) -> None:
    con = workspace.connect(tmp_path / "w.duckdb")
    try:
        fill(con, _fleet())
        whole = evaluate_health(con, replica_label="pod", batch_samples=None)
        streamed = evaluate_health(con, replica_label="pod", batch_samples=budget)
    finally:
        con.close()
    assert sum(len(s.intervals) for s in whole.signals) > 5
    assert {s.signal for s in whole.signals if s.intervals} >= {
        "stuck_replica",
        "counter_divergence",
        "retry_amplification",
    }
    assert streamed == whole


def test_streaming_restores_duckdbs_memory_limit(tmp_path: Path) -> None:
    con = workspace.connect(tmp_path / "w.duckdb")
    try:
        fill(con, _fleet())
        query = "select current_setting('memory_limit')"
        before = con.execute(query).fetchall()[0][0]
        seen = []
        for _ in stream_stores(con, ["vllm:num_requests_waiting"], 0, 2e10, "pod", budget=50):
            seen.append(con.execute(query).fetchall()[0][0])
        after = con.execute(query).fetchall()[0][0]
    finally:
        con.close()
    assert len(seen) > 2
    assert set(seen) == {"244.1 MiB"}  # samples.STREAM_MEMORY_LIMIT, 256 MB
    # Restored as DuckDB displays it (to 0.1 MiB): '953.6 MiB' may read back '953.5 MiB'.
    assert after.split()[1] == before.split()[1]
    assert float(after.split()[0]) == pytest.approx(float(before.split()[0]), abs=0.11)
