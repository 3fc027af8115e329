"""Simulator runs through the whole road: `relplan simulate run` writes metrics.om.txt,
`relplan ingest` loads it, relplan evaluates the health rules, and promtool checks relplan's
firing times on the same samples (`relplan alerts unittest --run`).

- The retry storm with client cancellation (pulse-retry-cancel): aborted prefills make the
  prompt-token counter lag the prefix-cache queries (divergence) and the retries keep the
  waiting queue growing after the pulse; both alerts fire, at the times relplan says.
- A healthy run (no pulse, 0.6 x capacity throughout) fires nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan import workspace
from relplan.alerts import promtool
from relplan.alerts.health import evaluate_health
from relplan.cli import app
from tests.helpers.fast_cli import CliRunner

pytestmark = pytest.mark.usefixtures("promtool_bin")

runner = CliRunner()


def _simulate_and_ingest(tmp: Path, scenario: str, *sets: str) -> Path:
    out = tmp / "run"
    args = ["simulate", "run", scenario, "--out", str(out)]
    for s in sets:
        args += ["--set", s]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.stderr
    db = tmp / "w.duckdb"
    res = runner.invoke(app, ["ingest", str(out), "--db", str(db)])
    assert res.exit_code == 0, res.stderr
    return db


def _prove(tmp: Path, db: Path) -> tuple[dict[str, list[tuple[float, float]]], dict[str, int]]:
    """relplan's intervals (seconds from the first sample) and promtool's verdict."""
    con = workspace.connect(db, read_only=True)
    try:
        result = evaluate_health(con)
        ci = tmp / "ci"
        ci.mkdir()
        report = promtool.write_unit_test(con, ci, run=True)
    finally:
        con.close()
    assert report.promtool_ok, report.promtool
    intervals = {
        s.signal: [(i.start - result.start, i.end - result.start) for i in s.intervals]
        for s in result.signals
    }
    # The unit test's grid is evaluate_health's grid: same origin, same step.
    assert report.evaluations == result.evaluations
    for s in result.signals:
        fired = sum(i.evaluations for i in s.intervals)
        assert report.firing.get(s.alert, 0) == fired, s.signal
    return intervals, report.firing


def test_retry_storm_fires_divergence_and_queue_alerts_where_relplan_says(tmp_path: Path) -> None:
    db = _simulate_and_ingest(tmp_path, "pulse-retry-cancel")
    intervals, firing = _prove(tmp_path, db)
    assert intervals["counter_divergence"], intervals
    assert intervals["queue_growing"], intervals
    # Both start after the pulse begins (120 s) and the divergence outlasts the pulse (227 s).
    assert intervals["counter_divergence"][0][0] > 120
    assert intervals["queue_growing"][0][0] > 120
    assert intervals["counter_divergence"][-1][1] > 227
    assert firing["RelplanStuckReplica"] == 0


def test_healthy_run_fires_nothing(tmp_path: Path) -> None:
    db = _simulate_and_ingest(tmp_path, "pulse-noretry", "workload.phases.1.rate_x=0.6")
    intervals, firing = _prove(tmp_path, db)
    assert all(not v for v in intervals.values()), intervals
    assert set(firing.values()) == {0}
