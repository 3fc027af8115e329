"""The report's tables and charts in headless Chromium at 800 and 1280 px (issue 27, part 5).

No table cell breaks inside a word or a number (a Range over each of its tokens lies on one
line: tests/helpers/browser.py, CELLS_PROBE), the page itself never scrolls sideways (a wide
table scrolls inside its wrapper), and every chart spans at least 90 % of the page's column
without passing its edge, its smallest label at least 9 px as drawn. Skips where chromium is
missing on a user's machine; fails under CI=true (conftest).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.browser import Browser, cells_result, with_cells_probe
from tests.helpers.sample_page import sample_page as the_sample_page


@pytest.fixture(scope="module")
def sample_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample's report page (rendered once per run, tests/helpers/sample_page.py) with
    the cells probe."""
    return with_cells_probe(the_sample_page(), tmp_path_factory.mktemp("layout") / "probed.html")


@pytest.mark.parametrize("width", [800, 1280])
def test_no_table_cell_breaks_inside_a_word_or_number_and_charts_fill_the_column(
    sample_page: Path, browser: Browser, width: int
) -> None:
    run = browser(sample_page, f"--window-size={width},3000", "--dump-dom")
    assert run.console == [], run.console
    got = cells_result(run.stdout)
    assert got["window_width"] == width
    assert got["cells"] > 50  # the probe saw the tables
    # No token (word, number, date) of any cell, header or body, is split across lines.
    assert got["broken"] == [], got["broken"]
    assert got["page_width"] <= width  # a wide table scrolls inside its wrapper
    assert got["column"] >= min(width - 60, 900)
    assert len(got["charts"]) >= 5, got["charts"]
    for chart in got["charts"]:
        # Every chart spans the page's column, and none passes its right edge ...
        assert chart["share"] >= 0.9, chart
        assert not chart["overflows"], chart
        # ... and its labels stay legible when the column is narrow.
        assert chart["smallest_text_px"] >= 9, chart
