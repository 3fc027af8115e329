"""Pushed-down evaluation (relplan/alerts/pushdown.py) against Debian's Prometheus on
loopback, backfilled from an OpenMetrics file: the health signals and the SLO burn-rate
alerts the server computes from the rule expressions equal relplan's offline evaluation of
the same file ingested into a workspace, exactly (same evaluation grid, same 5-minute
lookback, no staleness markers in a backfilled TSDB), and far fewer bytes are fetched than a
raw pull of the same metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relplan import workspace
from relplan.alerts import pushdown, slo, slo_eval
from relplan.alerts.health import evaluate_health
from relplan.alerts.promql_series import SeriesStore, make_labels
from relplan.errors import InputError, UsageError
from tests.helpers.alerts_scenarios import T0, openmetrics_text, random_store, storm_store
from tests.helpers.ingest import ingest
from tests.helpers.prometheus import PrometheusServers

START, END = T0 / 1000, T0 / 1000 + 1185


def _store() -> SeriesStore:
    """random_store's three replicas, storm_store's two as storm-*, an Envoy cluster that
    retries, and request counters by finish reason for the SLO."""
    store = random_store(11)
    for labels, s in storm_store().series.items():
        d = dict(labels)
        if "pod" in d:
            d["pod"] = "storm-" + d["pod"]
        store.add_arrays(tuple(sorted(d.items())), s.t, s.v)
    times = [T0 + 15_000 * i for i in range(80)]
    for name, per_step in (
        ("envoy_cluster_upstream_rq_total", 40.0),
        ("envoy_cluster_upstream_rq_retry", 12.0),
    ):
        lab = make_labels(name, {"envoy_cluster_name": "vllm"})
        store.add(lab, times, [per_step * i for i in range(80)])
    for pod in ("a", "b"):
        for reason, rate in (("stop", 50.0), ("error", 0.0 if pod == "a" else 10.0)):
            lab = make_labels("vllm:request_success_total", {"pod": pod, "finished_reason": reason})
            errors_from = 40 if reason == "error" else 0  # errors start half-way
            store.add(
                lab,
                times,
                [
                    rate * max(0, i - errors_from) if reason == "error" else rate * i
                    for i in range(80)
                ],
            )
    return store


@pytest.fixture(scope="module")
def served(
    prometheus_server: PrometheusServers, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    """(server URL, workspace) holding the same OpenMetrics file."""
    tmp = tmp_path_factory.mktemp("pushdown")
    om = tmp / "metrics.om.txt"
    om.write_text(openmetrics_text(_store()))
    db = tmp / "w.duckdb"
    ingest(db, om)
    return prometheus_server.serve(om), db


def _offline_health(db: Path, **kw: object):  # type: ignore[no-untyped-def]
    con = workspace.connect(db, read_only=True)
    try:
        return evaluate_health(con, start=START, end=END, step=15.0, **kw)  # type: ignore[arg-type]
    finally:
        con.close()


@pytest.mark.parametrize("step", [15.0, 7.0])
def test_pushed_down_health_equals_the_offline_evaluation(
    served: tuple[str, Path], step: float
) -> None:
    url, db = served
    con = workspace.connect(db, read_only=True)
    try:
        offline = evaluate_health(con, start=START, end=END, step=step)
    finally:
        con.close()
    remote = pushdown.Remote(url)
    pushed = pushdown.evaluate_health_remote(remote, start=START, end=END, step=step)
    fired = {s.signal for s in offline.signals if s.intervals}
    assert fired >= {"stuck_replica", "counter_divergence", "retry_amplification"}
    assert offline.replica_label == "pod"
    assert pushed == offline
    # One query_range per rule plus three label lookups; results only.
    assert remote.stats.requests == len(offline.signals) + 3


def test_pushed_down_slo_burn_equals_the_offline_evaluation(served: tuple[str, Path]) -> None:
    url, db = served
    rs = slo.slo_rules(
        0.99,
        30 * 86400,
        'sum by (pod) (rate(vllm:request_success_total{finished_reason="error"}[$window]))',
        "sum by (pod) (rate(vllm:request_success_total[$window]))",
    )
    con = workspace.connect(db, read_only=True)
    try:
        offline = slo_eval.evaluate_slo_workspace(con, rs, start=START, end=END, step=15.0)
    finally:
        con.close()
    ts = slo_eval.slo_grid(START, END, 15.0)
    remote = pushdown.Remote(url)
    pushed = slo_eval.evaluate_slo(rs, pushdown.slo_vectors_remote(remote, rs, ts), ts)
    assert pushed == offline
    page = next(s for s in offline.signals if s.signal == "slo_burn_page")
    assert [i.labels["pod"] for i in page.intervals] == ["b"]  # pod a has no errors
    assert all(b.peak_burn_rate is not None and b.peak_burn_rate > 0 for b in offline.burn)
    assert remote.stats.requests == len(rs.records)


def test_pushdown_fetches_a_fraction_of_a_raw_pull(served: tuple[str, Path]) -> None:
    url, _ = served
    remote = pushdown.Remote(url)
    pushdown.evaluate_health_remote(remote, start=START, end=END, step=15.0)
    raw = pushdown.Remote(url)
    names = sorted(raw.names(START, END))
    pushdown.raw_pull(raw, names, START - 600, END, 15.0)
    assert raw.stats.requests == len(names) + 1  # the names, then one query_range each
    # Only the points where a rule's condition holds come back; this small incident fires
    # much of the time (bench/pushdown.py measures a fleet).
    assert remote.stats.points * 4 < raw.stats.points
    assert remote.stats.bytes_fetched * 3 < raw.stats.bytes_fetched


def test_a_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(UsageError, match="http"):
        pushdown.Remote("localhost:9090")


def test_a_window_ending_before_it_starts_is_refused_before_any_request() -> None:
    remote = pushdown.Remote("http://127.0.0.1:9")  # nothing listens: no request is made
    with pytest.raises(UsageError, match="before its start"):
        pushdown.evaluate_health_remote(remote, start=END, end=START)
    assert remote.stats.requests == 0
    with pytest.raises(UsageError, match="before its start"):
        slo_eval.slo_grid(END, START, 15.0)


def test_an_unreachable_server_is_an_input_error_naming_it() -> None:
    remote = pushdown.Remote("http://127.0.0.1:9", timeout=10)  # loopback, nothing listens
    with pytest.raises(InputError, match="cannot reach the server") as err:
        pushdown.evaluate_health_remote(remote, start=START, end=END)
    assert "127.0.0.1:9" in str(err.value)


def test_a_server_without_vllm_metrics_in_the_window_is_an_input_error(
    served: tuple[str, Path],
) -> None:
    url, _ = served
    with pytest.raises(InputError, match="no vLLM metrics"):
        pushdown.evaluate_health_remote(
            pushdown.Remote(url), start=START - 90 * 86400, end=START - 89 * 86400
        )


def _cli(*args: str) -> tuple[int, str, str]:
    from relplan.cli import app
    from tests.helpers.fast_cli import CliRunner

    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.stdout, res.stderr


def test_alerts_eval_with_a_prometheus_url_prints_what_the_workspace_gives(
    served: tuple[str, Path],
) -> None:
    url, db = served
    window = ["--from", f"{START:.3f}", "--to", f"{END:.3f}", "--step", "15s"]
    slo_flags = [
        "--slo-errors",
        'sum by (pod) (rate(vllm:request_success_total{finished_reason="error"}[$window]))',
        "--slo-total",
        "sum by (pod) (rate(vllm:request_success_total[$window]))",
        "--slo",
        "99",
    ]
    code, offline, _ = _cli("alerts", "eval", "--db", str(db), *window, *slo_flags, "--json")
    assert code == 0, offline
    code, pushed, err = _cli(
        "alerts", "eval", "--prometheus-url", url, *window, *slo_flags, "--json"
    )
    assert code == 0, err
    assert json.loads(pushed) == json.loads(offline)
    assert json.loads(pushed)["slo"]["signals"][0]["intervals"]
    assert f"pushed down to {url}" in err
    assert "bytes fetched" in err


def test_alerts_eval_with_a_prometheus_url_needs_the_window(served: tuple[str, Path]) -> None:
    url, _ = served
    code, _, err = _cli("alerts", "eval", "--prometheus-url", url, "--to", f"{END:.3f}")
    assert code == 2
    assert "--from" in err
    code, _, err = _cli("alerts", "eval", "--prometheus-url", url, "--from", "0", "--to", "60")
    assert code == 2
    assert "needs --db" in err


def test_analyze_with_a_prometheus_url_takes_health_from_the_server(
    served: tuple[str, Path],
) -> None:
    url, db = served
    window = ["--from", f"{START:.3f}", "--to", f"{END:.3f}", "--only", "health", "--json"]
    code, offline, err = _cli("analyze", "--db", str(db), *window)
    assert code == 0, err
    code, pushed, err = _cli("analyze", "--db", str(db), *window, "--prometheus-url", url)
    assert code == 0, err
    health = json.loads(pushed)["health"]
    assert health == json.loads(offline)["health"]
    assert any(s["intervals"] for s in health["signals"])
