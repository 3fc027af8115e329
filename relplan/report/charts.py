"""Altair chart specs from `ReportData` only: the helpers every section's chart shares, and
`chart_specs`, which draws each section's chart (relplan/report/sections/) as a Vega-Lite spec.

The charts arrange and draw; they compute no figure (binning a distribution for a histogram
is drawing). `chart_specs` gives them keyed by section, as plain dicts, which the HTML page
embeds and `export.py` turns into PNG/SVG.

Conventions: the x axis of every timeline is wall-clock time in the report's zone (`--tz`,
UTC by default) with the date in the axis title, as Grafana shows it: each row carries `t`,
epoch milliseconds shifted by the zone's offset and drawn on a UTC time scale (Vega has no
IANA zones). Phases are shaded bands with their names above the plot, where no data mark
can cover them; legends sit below and list only the series drawn; colours are fixed per
series so the same thing looks the same everywhere, and series that coincide are drawn
dashed on top of each other, which the section's caption says. Data values go into the spec
as inline `values` under fixed field names, so a label from the data never becomes a field
name or an expression.
"""

from __future__ import annotations

import contextvars
import datetime as dt
from collections.abc import Collection, Hashable, Sequence
from typing import TYPE_CHECKING, Any

from relplan.report.data import ReportData
from relplan.values import tz_offset_s

if TYPE_CHECKING:
    import altair as alt

    from relplan.report.section import Section

# Plot width: with the y axis, its title and the page's margins this fits an 800 px window.
WIDTH = 600
HEIGHT = 220
DAY_S = 86400.0

Spec = dict[str, Any]


# The rows of the chart being built, by dataset name (see `chart_specs`).
_DATASETS: contextvars.ContextVar[dict[str, list[dict[str, Any]]] | None] = contextvars.ContextVar(
    "relplan_chart_datasets", default=None
)


def inline_data(rows: Sequence[dict[str, Any]]) -> alt.Data | alt.NamedData:
    """A chart's data. Inside `chart_specs` the rows go to the spec's top-level `datasets` and
    the chart names them: Altair deep-copies inline values on every `to_dict`, which cost more
    than the rest of the chart; a name costs nothing. Elsewhere the values stay inline."""
    import altair as alt

    datasets = _DATASETS.get()
    if datasets is None:
        return alt.Data(values=list(rows))  # type: ignore[no-untyped-call]
    name = f"data-{len(datasets)}"
    datasets[name] = list(rows)
    return alt.NamedData(name=name)


def when(data: ReportData, s: float) -> float:
    """Seconds from t0 -> the chart's `t`: epoch milliseconds shown in the report's zone."""
    epoch = (data.t0 or 0.0) + s
    return (epoch + tz_offset_s(epoch, data.tz)) * 1000.0


def time_title(data: ReportData, what: str = "time") -> str:
    """`time, 2025-11-30 (UTC)`: the axis title carries the date (and the zone)."""
    if data.t0 is None:
        return f"{what} ({data.tz})"
    first = dt.datetime.fromtimestamp(when(data, 0.0) / 1000.0, dt.timezone.utc)
    last = dt.datetime.fromtimestamp(when(data, data.end_s or 0.0) / 1000.0, dt.timezone.utc)
    day = first.date().isoformat()
    date = day if first.date() == last.date() else f"from {day}"
    return f"{what}, {date} ({data.tz})"


def time_x(data: ReportData, field: str = "t", what: str = "time") -> alt.X:
    """The wall-clock x axis over the data's span (hours:minutes:seconds; with the day
    when the data spans more than one)."""
    import altair as alt

    return alt.X(
        f"{field}:T", title=time_title(data, what), scale=time_scale(data), axis=time_axis(data)
    )


def time_axis(data: ReportData) -> alt.Axis:
    """Hours, minutes and seconds; with the day when the data spans more than one."""
    import altair as alt

    long = (data.end_s or 0.0) > DAY_S
    return alt.Axis(
        format="%m-%d %H:%M" if long else "%H:%M:%S",
        labelOverlap=True,
        labelFlush=False,
        tickCount=6,
    )


def time_scale(data: ReportData) -> alt.Scale:
    """The one time scale of a chart's layers (the same spec everywhere, so they merge)."""
    import altair as alt

    domain = time_domain(data)
    return alt.Scale(type="utc", domain=domain, nice=False) if domain else alt.Scale(type="utc")


def tx(data: ReportData, field: str) -> alt.X:
    """A layer's wall-clock x: the main layer's `time_x` alone sets the domain (Vega-Lite
    warns about two domains even when they are equal)."""
    import altair as alt

    del data
    return alt.X(f"{field}:T", scale=alt.Scale(type="utc"), title=None)


def span_marks(data: ReportData) -> list[alt.Chart]:
    """Two invisible points at the data's start and end, for a chart whose x domain comes
    from its data: Vega-Lite warns about "two domains" when a bar with x2 has an explicit
    temporal domain."""
    import altair as alt

    domain = time_domain(data)
    if not domain:
        return []
    return [
        alt.Chart(inline_data([{"t": domain[0]}, {"t": domain[1]}]))
        .mark_point(opacity=0)
        .encode(x=alt.X("t:T", scale=alt.Scale(type="utc", nice=False), title=None))
    ]


def time_tooltip(field: str = "t", title: str = "time") -> alt.Tooltip:
    # A UTC time unit makes Vega-Lite format with utcFormat: `t` is already shifted to the zone.
    import altair as alt

    return alt.Tooltip(
        f"{field}:T",
        title=title,
        timeUnit="utcyearmonthdatehoursminutesseconds",
        format="%Y-%m-%d %H:%M:%S",
    )


def phase_layers(data: ReportData) -> list[alt.Chart]:
    """Shaded bands for the phases, with each phase's name above the plot over its band."""
    import altair as alt

    if not data.phases:
        return []
    rows = [
        {
            "phase": p.name,
            "t": when(data, p.start_s),
            "t_end": when(data, p.end_s),
            "t_mid": when(data, (p.start_s + p.end_s) / 2),
        }
        for p in data.phases
    ]
    # Channels as objects, not shorthand strings or dicts: Altair turns each of those into
    # its class through `from_dict`, which hashes the schema of every class it has (about
    # 570) on each call; this chart is drawn on most timelines.
    band = (
        alt.Chart(inline_data(rows))
        .mark_rect(opacity=0.09, color="#555555")
        .encode(x=tx(data, "t"), x2=alt.X2("t_end:T"))
    )
    # Alternate shading so neighbouring phases stay distinguishable.
    shaded = band.transform_window(idx="row_number()").transform_filter("datum.idx % 2 == 0")
    at_top = alt.YValue(0)  # type: ignore[no-untyped-call]
    label = (
        alt.Chart(inline_data(rows))
        .mark_text(baseline="bottom", dy=-3, fontSize=10, color="#444444", limit=90)
        .encode(x=tx(data, "t_mid"), y=at_top, text=alt.Text("phase:N"))
    )
    edges = (
        alt.Chart(inline_data(rows))
        .mark_rule(color="#888888", strokeDash=[2, 3])
        .encode(x=tx(data, "t"))
    )
    return [shaded, edges, label]


def time_domain(data: ReportData) -> list[float] | None:
    if data.end_s is None:
        return None
    start = min([0.0, *(p.start_s for p in data.phases)])
    return [when(data, start), when(data, data.end_s)]


def coinciding(points: Sequence[tuple[str, Hashable, float]], order: Sequence[str]) -> list[str]:
    """The series (of `order`) whose every point (series, x, value) equals, at the same x, an
    earlier series' point: drawn on top of it, so they are dashed and the caption says so."""
    by_series: dict[str, dict[Hashable, float]] = {}
    for series, x, value in points:
        by_series.setdefault(series, {})[x] = value
    out = []
    for i, name in enumerate(order):
        mine = by_series.get(name)
        if not mine:
            continue
        for other in order[:i]:
            theirs = by_series.get(other)
            if theirs and all(
                x in theirs and abs(theirs[x] - v) <= 1e-9 * max(1.0, abs(v))
                for x, v in mine.items()
            ):
                out.append(name)
                break
    return out


def dash_scale(order: Sequence[str], dashed: Sequence[str]) -> alt.Scale:
    import altair as alt

    return alt.Scale(domain=list(order), range=[[5, 4] if n in dashed else [1, 0] for n in order])


def chart_specs(
    data: ReportData, *, validate: bool = False, only: Collection[str] | None = None
) -> dict[str, Spec]:
    """Vega-Lite specs for every section that has something to draw, keyed by section, in
    page order; with `only`, for those sections alone.

    A section's chart reads its own section and the data's time frame (`t0`, `end_s`, `tz`,
    `phases`), nothing else: the report draws the analyses' charts while the what-if still
    replays, from the data without it, and the what-if's chart once it is done
    (relplan/report/pipeline.py); tests/test_report_charts_early.py holds that the page is
    the one drawn at once.

    Altair's JSON-schema validation of a spec costs more than building it (about 2.7 s of
    jsonschema for the sample report), and the specs are made by this module, not by users:
    the tests build every chart with `validate=True`, the command skips it, and with it the
    check Altair's debug mode makes of each object it creates (a third of the charts' time).

    A section with no rows to draw gets no chart (an empty dataset would only make Vega
    warn about infinite extents); its table and finding still show.
    """
    from relplan.report.section import extra_sections, report_sections

    specs: dict[str, Spec] = {}
    named = [(a.name, s) for a, s in report_sections()] + extra_sections()
    if only is not None:
        named = [(name, section) for name, section in named if name in only]
    from altair.utils.schemapi import debug_mode

    with debug_mode(validate):
        for name, section in named:
            spec = _spec(name, section, data, validate)
            if spec is not None:
                specs[name] = spec
    return specs


def _spec(name: str, section: Section[Any, Any], data: ReportData, validate: bool) -> Spec | None:
    """One section's Vega-Lite spec; None when it has nothing to draw."""
    sec = getattr(data, name, None)
    if section.chart is None or sec is None or not sec.available:
        return None
    datasets: dict[str, list[dict[str, Any]]] = {}
    token = _DATASETS.set(datasets)
    try:
        chart = section.chart(sec, data)
    finally:
        _DATASETS.reset(token)
    if chart is None:
        return None
    spec: Spec = chart.to_dict(validate=validate)
    if datasets:
        spec["datasets"] = {**spec.get("datasets", {}), **datasets}
    spec.setdefault("config", {})["font"] = "system-ui, sans-serif"
    return spec
