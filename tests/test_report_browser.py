"""The report in a real browser: Debian's headless Chromium loads the page from a file.

Skips where chromium is missing on a user's machine; fails under CI=true (conftest).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from relplan.report.pipeline import make_report
from tests.helpers.browser import Browser, pixel_variety, probe_result, with_probe
from tests.helpers.incident import build_incident
from tests.helpers.report_samples import RenderedReport
from tests.helpers.sample_page import sample_page


@pytest.fixture(scope="module")
def hostile_page(
    hostile_sample_page: RenderedReport, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[str]]:
    page = tmp_path_factory.mktemp("page") / "report.html"
    page.write_text(hostile_sample_page.html, encoding="utf-8")
    return page, hostile_sample_page.charts


def _chart_blocks(dom: str) -> dict[str, str]:
    """The DOM of each chart container, from its opening tag to the next chart's."""
    parts = re.split(r'(?=<div class="chart[^"]*" id="chart-)', dom)
    blocks = {}
    for part in parts[1:]:
        name = re.match(r'<div class="chart[^"]*" id="chart-([a-z_]+)"', part)
        assert name is not None
        blocks[name.group(1)] = part
    return blocks


def test_every_chart_renders_marks_and_the_console_stays_silent(
    hostile_page: tuple[Path, list[str]], browser: Browser
) -> None:
    page, charts = hostile_page
    run = browser(page, "--dump-dom")
    assert run.console == [], run.console
    dom = run.stdout
    body = re.search(r"<body[^>]*>", dom)
    assert body is not None
    done = f'data-charts-done="{len(charts)}"'
    assert done in body.group(0), "the embedding code did not finish"
    assert "data-render-error" not in body.group(0)
    blocks = _chart_blocks(dom)
    assert sorted(blocks) == charts
    for name, block in blocks.items():
        assert 'data-rendered="yes"' in block.split(">", 1)[0], name
        assert "<svg" in block, name
        assert re.search(r'class="mark-[a-z]+ role-mark', block), name
    # The hostile label reached the page only as text: no script element was injected.
    assert dom.count("<script") == 3
    assert "alert(1)" in dom  # shown, as text


@pytest.mark.parametrize(
    "parts",
    [{}, {"manifest": False}, {"engine": False, "metrics": False}],
    ids=["everything", "no-run-json", "proxy-log-only"],
)
def test_a_report_built_from_a_workspace_renders_without_errors(
    tmp_path: Path, parts: dict[str, bool], browser: Browser
) -> None:
    """The analyses' fixture incident through analyze() and the whole pipeline; without
    run.json there is no Ĉ or D, so some charts have nothing to draw and must not warn."""
    ws = build_incident(tmp_path / "incident.duckdb", **parts)
    files = make_report(ws, out=tmp_path / "incident.html")
    run = browser(files.html, "--dump-dom")
    assert run.console == [], run.console
    body = re.search(r"<body[^>]*>", run.stdout)
    assert body is not None
    blocks = _chart_blocks(run.stdout)
    assert blocks
    assert f'data-charts-done="{len(blocks)}"' in body.group(0)
    assert "data-render-error" not in body.group(0)
    for name, block in blocks.items():
        assert 'data-rendered="yes"' in block.split(">", 1)[0], name
        assert re.search(r'class="mark-[a-z]+ role-mark', block), name


def test_the_screenshot_is_not_blank(
    hostile_page: tuple[Path, list[str]], browser: Browser, tmp_path: Path
) -> None:
    page, _ = hostile_page
    shot = tmp_path / "shot.png"
    browser(
        page,
        "--window-size=1280,4000",
        "--force-device-scale-factor=0.5",
        f"--screenshot={shot}",
    )
    colours, inked = pixel_variety(shot)
    assert colours > 50, colours
    assert 0.03 < inked < 0.9, inked


SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "pulse-retry-cancel"


def _cut(tmp_path: Path, files: list[str]) -> Path:
    """The bundled incident cut down to `files` (copied into a directory of their own)."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    for name in files:
        (folder / name).write_bytes((SAMPLE / name).read_bytes())
    return folder


@pytest.mark.parametrize(
    "files",
    [None, ["metrics.om.txt"], ["proxy.parquet"]],
    ids=["full-sample", "metrics-only", "proxy-log-only"],
)
def test_the_report_reads_at_800_px_with_no_empty_section_and_a_verdict(
    tmp_path: Path, files: list[str] | None, browser: Browser
) -> None:
    """At 800 px wide nothing reaches past the window's right edge (charts and tables
    included, not only the page), no section is empty, no two chart labels overlap, the
    console is silent and the verdict is there (its words are the verdict's own)."""
    if files is None:  # the sample's page, rendered once per run (tests/helpers/sample_page.py)
        page = sample_page()
    else:
        page = make_report(_cut(tmp_path, files), out=tmp_path / "report.html").html
    probed = with_probe(page, tmp_path / "probed.html")
    run = browser(probed, "--window-size=800,3000", "--dump-dom")
    assert run.console == [], run.console
    got = probe_result(run.stdout)
    assert got["window_width"] == 800
    assert got["wide"] == [], got["wide"]
    assert got["page_width"] <= 800
    assert got["empty"] == []
    assert got["overlaps"] == [], got["overlaps"]
    assert got["verdict"]
    assert got["sections"][-1] == "missing"
    assert "data-render-error" not in run.stdout.split(">", 1)[0]
    if files is not None:  # a cut-down workspace folds the sections it cannot show
        assert len(got["sections"]) < 8


def test_the_vllm_log_only_report_has_a_verdict_and_no_empty_section(
    tmp_path: Path, browser: Browser
) -> None:
    """The bundled incident cut to what a vLLM log gives (lifecycle events and the stats
    line, no steps, no gateway log, no metrics; tests/helpers/incident_cuts.py): at 800 px
    the verdict is there (suspected metastable), no section is empty, nothing overflows, no
    two labels overlap and the console is silent; the sections it cannot show are folded
    into the last one."""
    from tests.helpers.incident_cuts import build_cut

    db = build_cut("engine", tmp_path / "ws")
    page = make_report(db, out=tmp_path / "report.html").html
    probed = with_probe(page, tmp_path / "probed.html")
    run = browser(probed, "--window-size=800,3000", "--dump-dom")
    assert run.console == [], run.console
    got = probe_result(run.stdout)
    assert got["wide"] == [], got["wide"]
    assert got["page_width"] <= 800
    assert got["empty"] == []
    assert got["overlaps"] == [], got["overlaps"]
    assert got["verdict"]
    assert "metastable" in run.stdout.lower()
    assert got["sections"][-1] == "missing"
    assert "delivery" not in got["sections"]
    assert "data-render-error" not in run.stdout.split(">", 1)[0]
