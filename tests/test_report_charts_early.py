"""While the what-if still replays, the report draws the analyses' charts from its data without
the what-if (relplan/report/pipeline.py, `while_waiting`), and the what-if's chart once it is
done: the page is byte for byte the one drawn at once, so no analysis's chart reads more than
its own section and the data's time frame (relplan/report/charts.py, `chart_specs`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from relplan.report import pipeline
from relplan.report.data import ReportData
from tests.test_whatif_report import WHATIF, WHEN


def _page(db: Path, out: Path, *, replaying: bool) -> str:
    """The page of `db` with the what-if section: still running beside the analyses (a
    callable to finish, as the replay's workers give it) or there at once (from its cache)."""

    def whatif(con: duckdb.DuckDBPyConnection, opts: Any) -> Any:
        return (lambda: WHATIF) if replaying else WHATIF

    files = pipeline.make_report(db, out=out, generated_at=WHEN, extras={"whatif": whatif})
    return files.html.read_text(encoding="utf-8")


def test_the_analyses_charts_drawn_while_the_whatif_runs_give_the_same_page(
    incident_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a zone other than UTC (Europe/Berlin): the charts' times are shifted by the zone's
    offset, which the early drawing must take from the same `--tz`."""
    from relplan.values import use_tz

    drawn: list[ReportData] = []
    real = pipeline._analyses_charts

    def spy(data: ReportData) -> dict[str, Any]:
        drawn.append(data)
        return real(data)

    monkeypatch.setattr(pipeline, "_analyses_charts", spy)
    with use_tz("Europe/Berlin"):
        at_once = _page(incident_db, tmp_path / "once.html", replaying=False)
        assert drawn == []
        early = _page(incident_db, tmp_path / "early.html", replaying=True)
    assert len(drawn) == 1
    assert drawn[0].whatif is None  # drawn before the what-if was there
    assert early == at_once
    assert '"whatif"' in early  # the what-if's chart is on the page
