"""Altair chart specs from `ReportData` only: the helpers every section's chart shares, and
`chart_specs`, which draws each section's chart (relplan/report/sections/) as a Vega-Lite spec.

The charts arrange and draw; they compute no figure (binning a distribution for a histogram
is drawing). `chart_specs` gives them keyed by section, as plain dicts, which the HTML page
embeds and `export.py` turns into PNG/SVG.

Conventions: the x axis of every timeline is seconds from t0; phases are shaded bands with
their names on top; colours are fixed per series so the same thing looks the same everywhere.
Data values go into the spec as inline `values` under fixed field names, so a label from the
data never becomes a field name or an expression.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt

from relplan.report.data import PhaseBand, ReportData

WIDTH = 860
HEIGHT = 240
T_TITLE = "seconds from the start of the run"

Spec = dict[str, Any]


def inline_data(rows: Sequence[dict[str, Any]]) -> alt.Data:
    return alt.Data(values=list(rows))  # type: ignore[no-untyped-call]


def time_x(
    field: str = "start_s", title: str = T_TITLE, domain: list[float] | None = None
) -> alt.X:
    scale = alt.Scale(domain=domain, nice=False) if domain else alt.Scale(nice=False)
    return alt.X(f"{field}:Q", title=title, scale=scale)


def phase_layers(phases: Sequence[PhaseBand]) -> list[alt.Chart]:
    """Shaded bands for the phases, with each phase's name at the top of its band."""
    if not phases:
        return []
    rows = [
        {
            "phase": p.name,
            "start_s": p.start_s,
            "end_s": p.end_s,
            "mid_s": (p.start_s + p.end_s) / 2,
        }
        for p in phases
    ]
    band = (
        alt.Chart(inline_data(rows))
        .mark_rect(opacity=0.09, color="#555555")
        .encode(x="start_s:Q", x2="end_s:Q")
    )
    # Alternate shading so neighbouring phases stay distinguishable.
    shaded = band.transform_window(idx="row_number()").transform_filter("datum.idx % 2 == 0")
    label = (
        alt.Chart(inline_data(rows))
        .mark_text(baseline="top", dy=2, fontSize=10, color="#444444")
        .encode(x="mid_s:Q", y=alt.value(0), text="phase:N")
    )
    edges = (
        alt.Chart(inline_data(rows))
        .mark_rule(color="#888888", strokeDash=[2, 3])
        .encode(x="start_s:Q")
    )
    return [shaded, edges, label]


def time_domain(data: ReportData) -> list[float] | None:
    if data.end_s is None:
        return None
    start = min([0.0, *(p.start_s for p in data.phases)])
    return [start, data.end_s]


def chart_specs(data: ReportData) -> dict[str, Spec]:
    """Vega-Lite specs for every section that has something to draw, keyed by section.

    A section with no rows to draw gets no chart (an empty dataset would only make Vega
    warn about infinite extents); its table and finding still show.
    """
    from relplan.report.section import report_sections

    specs: dict[str, Spec] = {}
    for analysis, section in report_sections():
        sec = getattr(data, analysis.name)
        if section.chart is None or not sec.available:
            continue
        chart = section.chart(sec, data)
        if chart is None:
            continue
        spec: Spec = chart.to_dict()
        spec.setdefault("config", {})["font"] = "system-ui, sans-serif"
        specs[analysis.name] = spec
    return specs
