"""The lines `relplan alerts` prints after writing or evaluating rules (the rules' own text is
Prometheus's: relplan/alerts/rules.py and slo.py)."""

from __future__ import annotations

from pathlib import Path

from relplan.alerts.promtool import UnitTestReport
from relplan.alerts.pushdown import PushdownStats
from relplan.values import num


def wrote_rules(out: Path, count: int) -> str:
    return f"wrote {out}: {count} alerting rules; check with: promtool check rules {out}"


def wrote_dashboard(out: Path, panels: int) -> str:
    return f"wrote {out}: {panels} panels; import it in Grafana: Dashboards > New > Import"


def wrote_slo_rules(out: Path) -> str:
    return f"wrote {out}; check with: promtool check rules {out}"


def pushed_down(s: PushdownStats) -> str:
    return (
        f"pushed down to {s.url}: {s.requests} requests, {num(s.bytes_fetched)} bytes fetched,"
        f" {s.series} result series, {num(s.points)} points"
    )


def wrote_unit_test(report: UnitTestReport) -> str:
    return (
        f"wrote {report.rules_path} and {report.test_path}: {report.evaluations} evaluations,"
        f" {report.checks} checks; firing evaluations: "
        + ", ".join(f"{k} {v}" for k, v in report.firing.items())
    )
