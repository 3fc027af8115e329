"""The report's tables and charts in headless Chromium at 800 and 1280 px (issue 27, part 5).

No table cell breaks inside a word or a number (its rendered lines never outnumber its
words: tests/helpers/browser.py, CELLS_PROBE), the page itself never scrolls sideways (a wide
table scrolls inside its wrapper), and the charts use the page's width. Skips where chromium
is missing on a user's machine; fails under CI=true (conftest).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan.report.pipeline import make_report
from tests.helpers.browser import Browser, cells_result, with_cells_probe

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "pulse-retry-cancel"


@pytest.fixture(scope="module")
def sample_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("layout")
    page = make_report(SAMPLE, out=out / "report.html").html
    return with_cells_probe(page, out / "probed.html")


@pytest.mark.parametrize("width", [800, 1280])
def test_no_table_cell_breaks_inside_a_word_or_number_and_charts_fill_the_column(
    sample_page: Path, browser: Browser, width: int
) -> None:
    run = browser(sample_page, f"--window-size={width},3000", "--dump-dom")
    assert run.console == [], run.console
    got = cells_result(run.stdout)
    assert got["window_width"] == width
    assert got["cells"] > 50  # the probe saw the tables
    assert got["broken"] == [], got["broken"]
    assert got["page_width"] <= width
    assert got["charts"], "no chart was drawn"
    for chart in got["charts"]:
        # Every chart spans its column (within a pixel or two of rounding).
        assert chart["share"] > 0.97, chart
    assert got["column"] >= min(width - 60, 900)
