"""The comparison page in headless Chromium, held to the report's checks
(tests/test_report_browser.py, tests/test_report_layout.py): the console stays silent, every
chart draws marks, the screenshot is not blank, at 800 and 1280 px nothing passes the window's
right edge (the wide table scrolls inside its wrapper), no two chart labels overlap and no table
cell breaks inside a word or a number. Two sides (the sample incidents) and four (the lab's real
incidents, from their client records). Skips where chromium is missing on a user's machine;
fails under CI=true (conftest)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from relplan.compare import compare
from relplan.compare.page import write_page
from tests.helpers.browser import (
    Browser,
    BrowserRun,
    cells_result,
    pixel_variety,
    probe_result,
    run_chromium,
    with_probes,
)

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_data"
LAB = ROOT / "tests" / "data" / "lab"
PAGES = {
    "two-samples": [str(SAMPLES / "pulse-retry-cancel"), str(SAMPLES / "pulse-retry-coalesce")],
    "four-lab-incidents": [
        str(LAB / n / "client")
        for n in ("no-retries", "retries-no-cancel", "retries-cancel", "retry-budget")
    ],
    # a lab recording (operator files and the drill's plan) against the bundled real incident
    # (no plan: its phases are detected) and a simulated one: aligned by the detected overload
    "three-aligned-by-overload": [
        str(LAB / "no-retries"),
        str(SAMPLES / "vllm-lab-retries-no-cancel"),
        str(SAMPLES / "pulse-retry-cancel"),
    ],
}
CHARTS = {"two-samples": 3, "four-lab-incidents": 2, "three-aligned-by-overload": 3}


@pytest.fixture(scope="module", params=sorted(PAGES))
def page(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(f"compare-page-{request.param}")
    return write_page(compare(PAGES[request.param]), out / "compare.html")


def test_every_chart_draws_marks_and_the_console_stays_silent(page: Path, browser: Browser) -> None:
    run = browser(page, "--dump-dom")
    assert run.console == [], run.console
    body = re.search(r"<body[^>]*>", run.stdout)
    assert body is not None
    blocks = re.split(r'(?=<div class="chart[^"]*" id="chart-)', run.stdout)[1:]
    # the client records alone have no waiting queue to chart
    assert len(blocks) == CHARTS[page.parent.name.removeprefix("compare-page-")[:-1]]
    assert f'data-charts-done="{len(blocks)}"' in body.group(0)
    assert "data-chart-error" not in body.group(0)
    for block in blocks:
        assert 'data-rendered="yes"' in block.split(">", 1)[0]
        assert re.search(r'class="mark-[a-z]+ role-mark', block)


def test_the_screenshot_is_not_blank(page: Path, browser: Browser, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    browser(
        page, "--window-size=1280,3000", "--force-device-scale-factor=0.5", f"--screenshot={shot}"
    )
    colours, inked = pixel_variety(shot)
    assert colours > 50, colours
    assert 0.03 < inked < 0.9, inked


@pytest.fixture(scope="module")
def probed(
    chromium_bin: str, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[Path, int], BrowserRun]:
    """`probed(page, width)`: the page with both layout probes (tests/helpers/browser.py
    `with_probes`) loaded once at that width, in a fresh profile, for the two tests below."""
    runs: dict[tuple[Path, int], BrowserRun] = {}

    def run(page: Path, width: int) -> BrowserRun:
        if (page, width) not in runs:
            out = tmp_path_factory.mktemp("probed")
            runs[page, width] = run_chromium(
                chromium_bin,
                with_probes(page, out / "probed.html"),
                out / "chromium-profile",
                f"--window-size={width},3000",
                "--dump-dom",
            )
        return runs[page, width]

    return run


@pytest.mark.parametrize("width", [800, 1280])
def test_nothing_passes_the_right_edge_and_no_labels_overlap(
    page: Path, probed: Callable[[Path, int], BrowserRun], width: int
) -> None:
    run = probed(page, width)
    assert run.console == [], run.console
    got = probe_result(run.stdout)
    assert got["window_width"] == width
    assert got["wide"] == [], got["wide"]
    assert got["page_width"] <= width
    assert got["overlaps"] == [], got["overlaps"]


@pytest.mark.parametrize("width", [800, 1280])
def test_no_table_cell_breaks_inside_a_word_or_number(
    page: Path, probed: Callable[[Path, int], BrowserRun], width: int
) -> None:
    run = probed(page, width)
    assert run.console == [], run.console
    got = cells_result(run.stdout)
    assert got["cells"] > 100  # the probe saw the tables
    assert got["broken"] == [], got["broken"][:10]
    assert got["page_width"] <= width
    assert len(got["charts"]) >= 2
    for chart in got["charts"]:  # the report's CSS: each chart spans the column, legibly
        assert chart["share"] >= 0.9, chart
        assert not chart["overflows"], chart
        # Side-by-side panels are drawn wider than the report's charts: at 800 px their 10 px
        # labels shrink to 9 px.
        assert chart["smallest_text_px"] >= 8.5, chart
