"""The report's and `relplan analyze`'s sentences: wall-clock times with the date, and none of
the broken sentences issue 13 found (one test per case, each on the cause)."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from relplan import __version__
from relplan.analyses import AnalyzeOptions, AnalyzeResult, analyze
from relplan.errors import UsageError
from relplan.report.build import build_report_data
from relplan.report.data import ReportData
from relplan.report.pipeline import render_page
from relplan.text.analyze import render_analysis
from relplan.values import clock, clock_span, clock_spans, parse_tz, pct, use_tz
from relplan.workspace import open_workspace
from relplan.workspace.facts import workspace_facts
from tests.helpers.incident import build_incident

T0 = 1764460800.0  # 2025-11-30 00:00:00 UTC
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def incident_report(incident_db: Path) -> tuple[AnalyzeResult, ReportData]:
    """The shared incident analysed and its report data built, once for the module (the
    tests only read them)."""
    with open_workspace(incident_db, read_only=True) as con:
        res = analyze(con, AnalyzeOptions())
        return res, build_report_data(res, workspace_facts(con, "x"), WHEN, __version__)


def test_times_read_as_grafana_shows_them_with_the_date_in_utc_or_the_zone_given() -> None:
    assert clock(T0 + 121.5) == "2025-11-30 00:02:01 UTC"
    assert clock(T0 + 121.5, frac=True) == "2025-11-30 00:02:01.500 UTC"
    assert clock(T0, "Europe/Berlin") == "2025-11-30 01:00:00 CET"
    assert clock_span(T0 + 120, T0 + 227) == "2025-11-30 00:02:00–00:03:47 UTC"
    assert clock_span(T0 - 60, T0 + 60) == "2025-11-29 23:59:00–2025-11-30 00:01:00 UTC"
    with use_tz("America/New_York"):
        assert clock(T0) == "2025-11-29 19:00:00 EST"
    assert clock(T0) == "2025-11-30 00:00:00 UTC"  # the block ended
    head, cells = clock_spans([(T0, T0 + 120), (T0 + 120, T0 + 227)])
    assert (head, cells) == ("2025-11-30, UTC", ["00:00:00–00:02:00", "00:02:00–00:03:47"])


def test_an_unknown_zone_is_a_usage_error_naming_the_flag() -> None:
    with pytest.raises(UsageError, match="--tz"):
        parse_tz("Mars/Olympus")


def test_a_share_that_rounds_to_zero_has_no_sign() -> None:
    """Was "a shortfall of -0.0 %": the counters' shortfall was a tiny negative number."""
    assert pct(-0.00001) == "0.0 %"
    assert pct(-0.0) == "0.0 %"
    assert pct(-0.0004, 0) == "0 %"
    assert pct(-0.012) == "-1.2 %"  # a real negative keeps its sign


def test_health_text_says_wall_clock_times_not_tiny_offsets(
    incident_report: tuple[AnalyzeResult, ReportData],
) -> None:
    """Was "+0.000165224 s": the health head printed its start as seconds after t0 with :g."""
    res = incident_report[0]
    text = render_analysis(res)
    head = next(line for line in text.splitlines() if line.startswith("Engine health:"))
    assert re.search(r"over 2025-11-30 \d\d:\d\d:\d\d–\d\d:\d\d:\d\d UTC", head), head
    assert not re.search(r"\+\d", text)
    with use_tz("Asia/Tokyo"):
        assert "JST" in render_analysis(res)


def test_what_could_not_be_shown_is_one_list_of_whole_sentences(tmp_path: Path) -> None:
    """Was "the workspace lacks wasted prefill needs an engine trace": the page glued the
    registry's clause onto its own. Now an analysis that cannot run has no section: it is one
    row of the last section, its reason the registry's sentence, capitalised and ended."""
    ws = build_incident(tmp_path / "proxy-only.duckdb", engine=False, metrics=False)
    with open_workspace(ws, read_only=True) as con:
        data = build_report_data(
            analyze(con, AnalyzeOptions()), workspace_facts(con, "x"), WHEN, __version__
        )
    html = render_page(data)
    assert "the workspace lacks" not in html
    unavailable = [name for name, sec in data.sections() if not sec.available]
    assert "wasted_prefill" in unavailable
    for name in unavailable:
        assert f'<section id="{name}"' not in html
    rows = {m.section: m.reason for m in data.missing.items}
    assert rows["Where the prefill went"].startswith("Wasted prefill needs an engine trace")
    for reason in rows.values():
        assert reason[0].isupper(), reason
        assert reason.endswith("."), reason
    assert "item(s)" not in data.missing.finding


def test_span_columns_are_wall_clock_with_the_date_in_the_header(
    incident_report: tuple[AnalyzeResult, ReportData],
) -> None:
    data = incident_report[1]
    table = data.amplification.table
    assert table.columns[1] == "span (2025-11-30, UTC)"
    assert all(re.fullmatch(r"\d\d:\d\d:\d\d–\d\d:\d\d:\d\d", row[1]) for row in table.rows)
    assert data.t0_utc == "2025-11-30T00:00:00.000Z"
    assert data.tz == "UTC"


def test_two_replicas_get_a_row_each_where_the_analyses_break_them_down(
    incident_report: tuple[AnalyzeResult, ReportData],
) -> None:
    """The fixture incident runs on replicas r0 and r1 (tests/helpers/incident.py); the
    bundled sample has one. The prefill table has a row for each and one for both."""
    data = incident_report[1]
    replicas = {row[1] for row in data.wasted_prefill.table.rows}
    assert {"r0", "r1"} <= replicas, replicas
    assert "all replicas" in replicas


def test_two_replicas_get_a_load_chart_and_rows_of_their_own(
    incident_report: tuple[AnalyzeResult, ReportData],
) -> None:
    """The fixture's engine trace (tests/helpers/incident.py): r0 runs e1-e10, e12, e13, of
    which e8 is refused -> 11 accepted, and e1, e3, e5, e6, e9, e10, e12, e13 finish -> 8
    completed; r1 runs its own e1 (arrived 150, finished 160) -> 1 and 1. The per-replica
    series sums to those counts; the table has a `run on` row per replica; the chart stacks
    the per-replica lines under the load chart."""
    from relplan.report.charts import chart_specs

    res, data = incident_report
    amp = res.amplification
    assert amp.replica_series_source == "engine trace"
    totals: dict[str, list[int]] = {}
    for b in amp.replica_series:
        got = totals.setdefault(b.replica, [0, 0])
        got[0] += b.arrived
        got[1] += b.completed
    assert totals == {"r0": [11, 8], "r1": [1, 1]}
    r1 = [b for b in amp.replica_series if b.replica == "r1" and b.arrived]
    assert [b.start_s for b in r1] == [150.0]  # the 150-180 s bin
    rows = {row[0]: row for row in data.amplification.table.rows}
    assert rows["run on r0"][3].startswith("11 ")
    assert rows["run on r1"][4].startswith("1 ")
    spec = chart_specs(data)["amplification"]
    assert "vconcat" in spec
    assert len(spec["vconcat"]) == 2
    assert "by replica" in data.amplification.caption
    waiting = data.littles_law.table
    assert waiting.columns[:2] == ["window", "replica"]
    assert [r[:2] for r in waiting.rows if r[0] == "run"] == [
        ["run", "all replicas"],
        ["run", "r0"],
        ["run", "r1"],
    ]
