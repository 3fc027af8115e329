"""The report's "Crashes, restarts and rollouts" section: drawn on an incident that has
restart inputs (tests/helpers/restarts_incident.py, arithmetic in its docstring), with the
budget figures measured from it; folded into "what the data could not show" without them."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from relplan import workspace
from relplan.analyses import AnalyzeOptions
from relplan.report.html import render_html
from relplan.report.pipeline import collect_report_data
from relplan.report.sections.restarts import RestartsSection
from tests.helpers import restarts_incident

GENERATED_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def _section(db: Path) -> tuple[RestartsSection, str]:
    with workspace.open_workspace(db, read_only=True) as con:
        data = collect_report_data(
            con, AnalyzeOptions(), fallback_name="restarts", generated_at=GENERATED_AT
        )
    sec = data.restarts
    assert isinstance(sec, RestartsSection)
    return sec, render_html(data, {})


def test_the_section_shows_restarts_rollout_cordon_and_measured_budget(tmp_path: Path) -> None:
    sec, page = _section(restarts_incident.build(tmp_path / "w.duckdb"))
    assert sec.available
    assert sec.table is not None
    assert [row[:5] for row in sec.table.rows] == [
        ["vllm-a", "n1", "310", "crash", "oom"],
        ["vllm-a", "n1", "480", "crash", "oom"],
        ["vllm-b", "n1", "600", "crash", "liveness"],
        ["vllm-c", "n2", "900", "planned", "stop"],
        ["vllm-d", "n2", "960", "planned", "stop"],
    ]
    assert [row[7] for row in sec.table.rows] == ["2", "1", "2", "0", "1"]
    b = sec.budget
    assert b is not None
    assert (b.crashes_per_replica_per_30d, b.planned_per_replica_per_30d) == (2160.0, 1080.0)
    assert b.streams_killed_per_crash == 1.25
    assert b.break_even_stream_s is not None
    assert abs(b.break_even_stream_s - 1.2) < 1e-9
    assert sec.cordon == ["n1"]
    assert (
        "Rollout 1 stopped 2 pods from 900 s to 960 s, dropped 1 stream(s) and did not drain"
        in sec.finding
    )
    assert "streams longer than 1.2 s blow the budget on crashes alone" in sec.finding
    assert '<section id="restarts" class="section">' in page
    assert "Crashes, restarts and rollouts" in page
    assert "Node n1 is a cordon candidate: 4 crashes on it; Xid 79 with a crash." in page


def test_without_restart_inputs_the_section_is_not_drawn(tmp_path: Path) -> None:
    db = tmp_path / "plain.duckdb"
    with workspace.open_workspace(db) as con:
        con.execute(
            "insert into attempts (call_id, attempt, t_planned, t_sent, t_end, outcome, attached,"
            " replica, source_id, source_row) values ('c1', 0, 0, 0, 10, 'delivered', false,"
            " 'r1', 1, 1)"
        )
    sec, page = _section(db)
    assert not sec.available
    assert '<section id="restarts"' not in page
    # The reason's hyphenated words are kept whole by a nowrap span (html.whole_words).
    text = page.replace('<span class="nw">', "").replace("</span>", "")
    assert "Restart analysis needs kube-state-metrics restart counters" in text
