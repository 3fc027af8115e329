"""Proof by the real tool: promtool checks every generated rule file, and `promtool test rules`
checks relplan's offline evaluation (firing alerts with their labels and annotations at every
evaluation, and the exact value of every sub-expression) on the same input series.

Skips without promtool on a user's machine; fails under CI=true (tests/conftest.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from relplan.alerts import promtool, rules, slo
from relplan.alerts.health import firing_intervals
from relplan.alerts.promql_series import SeriesStore, make_labels
from tests.helpers.alerts_scenarios import T0, healthy_store, random_store, storm_store

pytestmark = pytest.mark.usefixtures("promtool_bin")

STEP_MS = 15_000


def _write(tmp: Path, rule_text: str, unit_text: str) -> Path:
    (tmp / "rules.yml").write_text(rule_text)
    test = tmp / "test.yml"
    test.write_text(unit_text)
    return test


def _prove(
    tmp: Path,
    store: SeriesStore,
    alerts: list[rules.AlertRule],
    records: list[rules.RecordingRule] | None = None,
    **kw: int,
) -> promtool.UnitTest:
    rule_text = rules.dump_yaml(rules.rule_file_dict(alerts, records))
    (tmp / "rules.yml").write_text(rule_text)
    checked = promtool.check_rules(tmp / "rules.yml")
    assert checked.ok, checked.output
    ut = promtool.build_unit_test(
        store, alerts, records or [], rule_file="rules.yml", step_ms=kw.get("step_ms", STEP_MS)
    )
    test = _write(tmp, rule_text, ut.yaml_text)
    res = promtool.test_rules(test)
    assert res.ok, res.output[:4000]
    return ut


STORM_THRESHOLDS = rules.Thresholds(preemption_rate=0.1)


def test_exported_rule_files_pass_promtool_check(tmp_path: Path) -> None:
    for label in ("instance", "pod", "replica"):
        for proxy in (True, False):
            path = tmp_path / f"rules-{label}-{proxy}.yml"
            path.write_text(rules.export_health_rules(label, STORM_THRESHOLDS, proxy=proxy))
            res = promtool.check_rules(path)
            assert res.ok, res.output
            assert f"SUCCESS: {6 if proxy else 5} rules found" in res.output


@pytest.mark.parametrize(
    ("slo_value", "window_s"), [(0.999, 30 * 86400), (0.99, 7 * 86400), (0.9995, 28 * 86400)]
)
def test_slo_rule_files_pass_promtool_check(
    tmp_path: Path, slo_value: float, window_s: int
) -> None:
    rs = slo.slo_rules(
        slo_value,
        window_s,
        'sum(rate(http_requests_total{code=~"5.."}[$window]))',
        "http_requests_total",
        name="chat",
    )
    path = tmp_path / "slo.yml"
    path.write_text(slo.export_slo_rules(rs))
    res = promtool.check_rules(path)
    assert res.ok, res.output
    assert "SUCCESS: 9 rules found" in res.output  # 7 recording rules + page + ticket


def test_storm_fires_what_relplan_says_and_promtool_agrees(tmp_path: Path) -> None:
    """Hand-checked firing intervals (seconds from the first scrape, step 15 s):
    - stuck replica c: generation tokens are flat for the samples 300..600 s; increase[1m] is
      0 once [ts - 60, ts] holds only flat samples (ts 360..600), and with for 1m the alert
      fires at 420..600, so [420, 615).
    - counter divergence a: prompt tokens rise 60 per scrape against 100 queries from the
      sample at 120 s. At ts = 135 the window [75, 135] holds rises 100, 100, 60, 60: shortfall
      1 - 320/400 = 0.2, not above 0.2; at 150 it holds 100, 60, 60, 60: 1 - 280/400 = 0.3
      (both counters have the same samples, so the extrapolation cancels). With for 15s it
      fires from 165 to the end: [165, 915), ongoing.
    - healthy b fires nothing."""
    store = storm_store()
    alerts = rules.health_rules("pod", STORM_THRESHOLDS, proxy=False)
    ut = _prove(tmp_path, store, alerts)
    ts = T0 + STEP_MS * np.arange(61, dtype=np.int64)
    got = {
        tl.rule.signal: [
            (i.replica, (i.start * 1000 - T0) / 1000, (i.end * 1000 - T0) / 1000)
            for i in firing_intervals(tl, ts, STEP_MS, "pod")
        ]
        for tl in ut.timelines
    }
    assert got["stuck_replica"] == [("c", 420.0, 615.0)]
    assert got["counter_divergence"] == [("a", 165.0, 915.0)]
    assert all(r != "b" for intervals in got.values() for r, _, _ in intervals)
    assert got["queue_growing"]
    assert got["queue_growing"][0][0] == "a"
    assert got["cache_full_while_queueing"][0][0] == "a"
    assert got["preemption_storm"][0][0] == "a"


def test_healthy_replicas_fire_nothing_and_promtool_agrees(tmp_path: Path) -> None:
    ut = _prove(tmp_path, healthy_store(), rules.health_rules("pod", proxy=False))
    assert all(not f.any() for tl in ut.timelines for f, _ in tl.firing.values())
    assert "exp_alerts: []" in ut.yaml_text


@pytest.mark.parametrize("seed", range(6))
def test_random_scrapes_with_gaps_resets_and_jitter_agree_with_promtool(
    tmp_path: Path, seed: int
) -> None:
    th = rules.Thresholds(
        preemption_rate=0.05,
        kv_usage=0.8,
        waiting=3,
        for_queue_growing=30,
        for_stuck_replica=0,
        for_preemption_storm=15,
    )
    ut = _prove(tmp_path, random_store(seed), rules.health_rules("pod", th, proxy=False))
    assert ut.checks > 500


def test_promtool_rejects_an_expectation_that_differs(tmp_path: Path) -> None:
    """The comparison has teeth: drop one firing alert from the expectations and promtool
    reports the disagreement."""
    store = storm_store()
    alerts = rules.health_rules("pod", STORM_THRESHOLDS, proxy=False)
    ut = _prove(tmp_path, store, alerts)
    text = ut.yaml_text
    marker = "alertname: RelplanStuckReplica\n    exp_alerts:\n    - exp_labels:"
    i = text.index(marker)
    j = text.index("  - eval_time:", i)
    broken = text[:i] + "alertname: RelplanStuckReplica\n    exp_alerts: []\n" + text[j:]
    (tmp_path / "broken.yml").write_text(broken)
    res = promtool.test_rules(tmp_path / "broken.yml")
    assert not res.ok
    assert "RelplanStuckReplica" in res.output


def test_retry_amplification_rule_agrees_with_promtool(tmp_path: Path) -> None:
    """Envoy cluster `vllm`: 10 upstream requests per second, 3 of them retries from 300 s:
    amplification 10 / 7 = 1.43 > 1.2."""
    s = SeriesStore()
    times = [T0 + STEP_MS * i for i in range(61)]
    total = retry = 0.0
    tot_v, ret_v = [], []
    for i in range(61):
        total += 150
        retry += 45 if 15 * i >= 300 else 0
        tot_v.append(total)
        ret_v.append(retry)
    lab = {"envoy_cluster_name": "vllm"}
    s.add(make_labels("envoy_cluster_upstream_rq_total", lab), times, tot_v)
    s.add(make_labels("envoy_cluster_upstream_rq_retry", lab), times, ret_v)
    alerts = [r for r in rules.health_rules("pod") if r.signal == "retry_amplification"]
    ut = _prove(tmp_path, s, alerts)
    ((fire, values),) = ut.timelines[0].firing.values()
    assert fire.any()
    assert float(values[-1]) == pytest.approx(10 / 7, rel=1e-9)


def test_slo_burn_alerts_agree_with_promtool(tmp_path: Path) -> None:
    """100 requests/s for 3 h (a sample a minute), 5 % errors in the rises of samples 60..99.
    Page tiers: 1h/5m above 14.4 x 0.001 = 1.44 % errors, 6h/30m above 0.6 %. With m minutes
    of data the 6h window's ratio is all errors over all requests, 5 % x (m - 59)/m: 0.597 %
    at m = 67, 0.662 % at 68, so the page fires from minute 68 (the 30m window is at 5 % then).
    It stops when the 30m window, holding the rises of samples m-29..m, has fewer than 4 bad
    ones (5 % x 4/30 = 0.667 % > 0.6 % > 5 % x 3/30): 129 - m >= 4 up to m = 125."""
    s = SeriesStore()
    step = 60_000
    times = [T0 + step * i for i in range(181)]
    ok = err = 0.0
    ok_v, err_v = [], []
    for i in range(181):
        bad = 300 if 60 <= i < 100 else 0
        err += bad
        ok += 6000 - bad
        ok_v.append(ok)
        err_v.append(err)
    s.add(make_labels("http_requests_total", {"code": "200"}), times, ok_v)
    s.add(make_labels("http_requests_total", {"code": "500"}), times, err_v)
    rs = slo.slo_rules(
        0.999,
        30 * 86400,
        'sum(rate(http_requests_total{code=~"5.."}[$window]))',
        "http_requests_total",
        name="chat",
    )
    ut = _prove(tmp_path, s, rs.alerts, rs.records, step_ms=step)
    page = ut.timelines[0]
    ((fire, _),) = page.firing.values()
    minutes = np.nonzero(fire)[0]
    assert minutes.min() == 68
    assert minutes.max() == 125
    assert len(minutes) == 125 - 68 + 1


def test_unittest_command_writes_files_promtool_accepts(tmp_path: Path) -> None:
    from relplan.cli import app
    from tests.helpers.alerts_scenarios import fill_workspace
    from tests.helpers.fast_cli import CliRunner

    db = tmp_path / "storm.duckdb"
    fill_workspace(db, storm_store())
    out = tmp_path / "ci"
    out.mkdir()
    res = CliRunner().invoke(
        app, ["alerts", "unittest", "--db", str(db), "--out-dir", str(out), "--run", "--json"]
    )
    assert res.exit_code == 0, res.stdout + res.stderr
    report = json.loads(res.stdout)
    assert report["promtool_ok"] is True
    assert report["evaluations"] == 61
    assert report["firing"]["RelplanStuckReplica"] == 13  # 420..600 s every 15 s
    assert "RelplanRetryAmplification" not in report["firing"]  # no Envoy metrics
    assert (out / "rules.yml").exists()
    assert (out / "rules_test.yml").exists()
    # A rules file that disagrees with the expectations makes the command exit 1.
    rules_text = (out / "rules.yml").read_text().replace("for: 1m", "for: 2m")
    (out / "rules.yml").write_text(rules_text)
    res = promtool.test_rules(out / "rules_test.yml")
    assert not res.ok
