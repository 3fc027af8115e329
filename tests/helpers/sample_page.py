"""The page `relplan report sample_data/pulse-retry-cancel` writes (default options), rendered
once per test run (tests/helpers/templates.py, shared by the pytest-xdist workers) for the
browser tests that only read it: tests/test_report_layout.py and tests/test_report_browser.py
each rendered it for themselves (an ingest, the analyses and the charts: about 1.3 CPU s)."""

from __future__ import annotations

from pathlib import Path

from relplan.report.pipeline import make_report
from tests.helpers.templates import template

SAMPLE = Path(__file__).resolve().parent.parent.parent / "sample_data" / "pulse-retry-cancel"


def sample_page() -> Path:
    """The report page of the sample, read-only (copy or probe it elsewhere)."""
    return template(
        "report page " + str(SAMPLE), lambda page: make_report(SAMPLE, out=page), name="report.html"
    )
