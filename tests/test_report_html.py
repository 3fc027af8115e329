"""The HTML page and image exports, from a hand-made ReportData (tests/helpers/report_samples.py)."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest

from relplan.report import data as d
from relplan.report.charts import chart_specs
from relplan.report.export import export_images
from relplan.report.html import render_html, script_json, vega_bundle, whole_words
from relplan.report.section import report_sections
from relplan.report.sections import counters, delivery
from tests.helpers.report_samples import HOSTILE, RenderedReport, sample_report

# Every section that draws a chart (the registry's sections with a chart function).
CHARTED = [a.name for a, section in report_sections() if section.chart is not None]


class _Page(HTMLParser):
    """Collects tags, attributes and script bodies of a page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.links: list[tuple[str, str, str]] = []
        self.scripts: list[dict[str, str | None]] = []
        self.script_bodies: list[str] = []
        self._in_script = False
        self.meta: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.append(str(a["id"]))
        for key in ("src", "href", "action", "data", "poster", "srcset"):
            if key in a:
                self.links.append((tag, key, str(a[key])))
        if tag == "script":
            self.scripts.append(a)
            self._in_script = True
            self.script_bodies.append("")
        if tag == "meta":
            self.meta.append(a)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.script_bodies[-1] += data


def _parse(html: str) -> tuple[str, _Page]:
    parser = _Page()
    parser.feed(html)
    return html, parser


def _page(report: d.ReportData) -> tuple[str, _Page]:
    return _parse(render_html(report, chart_specs(report)))


@pytest.fixture(scope="module")
def hostile_page(hostile_sample_page: RenderedReport) -> tuple[str, _Page]:
    return _parse(hostile_sample_page.html)


def test_every_section_and_its_chart_is_on_the_page(hostile_page: tuple[str, _Page]) -> None:
    _, page = hostile_page
    assert len(CHARTED) == 8  # stuck replicas draws its episodes
    for name, _ in sample_report().sections():
        assert name in page.ids, name
    for name in CHARTED:
        assert f"chart-{name}" in page.ids, name
    assert "verdict" in page.ids


def test_page_links_nowhere_outside_itself(hostile_page: tuple[str, _Page]) -> None:
    html, page = hostile_page
    assert page.links, "the table of contents should at least link to the sections"
    for tag, attr, value in page.links:
        assert value.startswith("#"), (tag, attr, value)
    assert all("src" not in s for s in page.scripts), "every script is inline"
    assert "<link" not in html.lower()
    csp = [m for m in page.meta if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp
    assert "default-src 'none'" in str(csp[0]["content"])


def test_vega_is_inlined_exactly_once(hostile_page: tuple[str, _Page]) -> None:
    html, page = hostile_page
    assert html.count(vega_bundle()) == 1
    assert len(page.scripts) == 3  # the bundle, the specs (JSON), the embedding code
    assert sum("window.vegaEmbed=" in body for body in page.script_bodies) == 1


def test_hostile_label_is_escaped_in_html_and_json(hostile_page: tuple[str, _Page]) -> None:
    html, page = hostile_page
    assert HOSTILE not in html
    assert "<script>alert(1)" not in html
    # In the HTML text it reads back as the original string (escaped, not interpreted).
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # The specs block is still one intact JSON document holding the label verbatim.
    specs_body = page.script_bodies[1]
    assert "<" not in specs_body
    assert ">" not in specs_body
    specs = json.loads(specs_body)
    assert HOSTILE in json.dumps(specs, ensure_ascii=False)
    assert set(specs) == set(CHARTED)


def test_script_json_escapes_everything_that_could_end_a_script() -> None:
    obj = {"a": "</script><!-- & \u2028\u2029 >", "n": float("nan")}
    text = script_json(obj)
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028\u2029 >", "n": None}


@pytest.mark.slow
def test_an_unavailable_section_is_folded_away_no_heading_no_chart_no_link() -> None:
    """Its reason is a row of "what the data could not show" (test_report_build.py)."""
    report = sample_report()
    report.counters = counters.CountersSection(
        title="Counters that miss it",
        question="Would the dashboards have shown the wasted prefill?",
        available=False,
        missing=["metrics (vllm:prompt_tokens_total, vllm:prefix_cache_queries_total)"],
    )
    html, page = _page(report)
    assert "chart-counters" not in page.ids
    assert "counters" not in page.ids
    assert 'href="#counters"' not in html
    assert "the workspace lacks" not in html
    assert "retry_timing" in page.ids  # the others stay


def test_the_page_is_small(hostile_page: tuple[str, _Page]) -> None:
    html, _ = hostile_page
    assert len(html.encode()) < 1_500_000


@pytest.mark.slow
def test_render_is_a_pure_function() -> None:
    report = sample_report()
    assert render_html(report, chart_specs(report)) == render_html(report, chart_specs(report))


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_each_chart_exports_as_an_image_without_a_browser(tmp_path: Path, fmt: str) -> None:
    report = sample_report(HOSTILE)
    specs = chart_specs(report)
    written = export_images(specs, tmp_path / "img", fmt)
    assert sorted(p.name for p in written) == sorted(f"{name}.{fmt}" for name in specs)
    for path in written:
        content = path.read_bytes()
        if fmt == "png":
            assert content[:8] == b"\x89PNG\r\n\x1a\n"
        else:
            text = content.decode()
            assert text.startswith("<svg")
            assert "role-mark" in text
            assert "<script" not in text  # the hostile label is text, not markup
    assert not list((tmp_path / "img").glob(".*.tmp"))


@pytest.mark.slow
def test_a_section_with_nothing_to_draw_gets_no_chart_but_keeps_its_table() -> None:
    """No deadline: no on-time share and no slack; no retries at all: no gap either."""
    report = sample_report()
    report.delivery.bins = [
        delivery.OnTimeBin(start_s=b.start_s, end_s=b.end_s, calls=b.calls, on_time_share=None)
        for b in report.delivery.bins
    ]
    report.retry_timing.stats = []
    report.retry_timing.table = d.Table(columns=["window", "retries"], rows=[["run", "0"]])
    report.counters.points = [
        p.model_copy(update={"shortfall": None}) for p in report.counters.points
    ]
    specs = chart_specs(report)
    assert "delivery" not in specs
    assert "retry_timing" not in specs
    assert "vconcat" not in specs["counters"]  # the rises only, no empty shortfall panel
    html, page = _page(report)
    assert "chart-retry_timing" not in page.ids
    assert "retry_timing" in page.ids
    assert "<th>retries</th>" in html


def test_every_chart_spec_validates_against_the_vega_lite_schema() -> None:
    """The command skips Altair's validation for speed; this is where it still runs."""
    report = sample_report(HOSTILE)
    validated = chart_specs(report, validate=True)
    assert validated == chart_specs(report)
    assert len(validated) >= 5


def test_whole_words_keeps_dates_and_ranges_in_one_piece_and_escapes() -> None:
    """Headers and long-text cells may wrap, but only between words: a token the browser could
    break at a hyphen, a dash, a slash or a bracket is a nowrap span (checked in Chromium by
    tests/test_report_layout.py)."""
    got = str(whole_words("span (2025-11-30, UTC) cuts 0 of 5 (2,048–2,048) <b>a-b</b>"))
    assert got == (
        'span <span class="nw">(2025-11-30,</span> UTC) cuts 0 of 5 '
        '<span class="nw">(2,048–2,048)</span> <span class="nw">&lt;b&gt;a-b&lt;/b&gt;</span>'
    )
    assert str(whole_words("delivered")) == "delivered"
