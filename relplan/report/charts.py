"""Altair chart specs, one function per report section, built from `ReportData` only.

The functions arrange and draw; they compute no figure (binning a distribution for a
histogram is drawing). Each returns a Vega-Lite spec as a plain dict (`chart_specs` gives all
of them, keyed by section), which the HTML page embeds and `export.py` turns into PNG/SVG.

Conventions: the x axis of every timeline is seconds from t0; phases are shaded bands with
their names on top; colours are fixed per series so the same thing looks the same everywhere.
Data values go into the spec as inline `values` under fixed field names, so a label from the
data never becomes a field name or an expression.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import altair as alt

from relplan.report.data import (
    CountersSection,
    DeliverySection,
    HealthSection,
    LoadSection,
    PhaseBand,
    PrefillSection,
    QueueSection,
    ReportData,
    RetrySection,
)

WIDTH = 860
HEIGHT = 240
T_TITLE = "seconds from the start of the run"

# One colour per meaning, used across charts.
LOAD_SERIES = (
    ("calls", "calls arriving", "#4c78a8"),
    ("accepted", "executions accepted", "#e45756"),
    ("completed", "executions completed", "#72b7b2"),
    ("completed_waiting", "completed for a waiting client", "#54a24b"),
)
FATE_COLORS = {
    "delivered": "#54a24b",
    "finished": "#88d27a",
    "finished_for_nobody": "#f58518",
    "aborted": "#e45756",
    "unfinished": "#9d9d9d",
    "unknown": "#c7c7c7",
}
QUEUE_SERIES = (
    ("waiting", "waiting (engine trace)", "#e45756"),
    ("waiting_metrics", "waiting (vllm:num_requests_waiting)", "#f58518"),
    ("deadline", "λ·D: one deadline's worth of arrivals", "#4c78a8"),
)

Spec = dict[str, Any]


def _data(rows: Sequence[dict[str, Any]]) -> alt.Data:
    return alt.Data(values=list(rows))  # type: ignore[no-untyped-call]


def _x(field: str = "start_s", title: str = T_TITLE, domain: list[float] | None = None) -> alt.X:
    scale = alt.Scale(domain=domain, nice=False) if domain else alt.Scale(nice=False)
    return alt.X(f"{field}:Q", title=title, scale=scale)


def _phase_layers(phases: Sequence[PhaseBand]) -> list[alt.Chart]:
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
        alt.Chart(_data(rows))
        .mark_rect(opacity=0.09, color="#555555")
        .encode(x="start_s:Q", x2="end_s:Q")
    )
    # Alternate shading so neighbouring phases stay distinguishable.
    shaded = band.transform_window(idx="row_number()").transform_filter("datum.idx % 2 == 0")
    label = (
        alt.Chart(_data(rows))
        .mark_text(baseline="top", dy=2, fontSize=10, color="#444444")
        .encode(x="mid_s:Q", y=alt.value(0), text="phase:N")
    )
    edges = (
        alt.Chart(_data(rows)).mark_rule(color="#888888", strokeDash=[2, 3]).encode(x="start_s:Q")
    )
    return [shaded, edges, label]


def _time_domain(data: ReportData) -> list[float] | None:
    if data.end_s is None:
        return None
    start = min([0.0, *(p.start_s for p in data.phases)])
    return [start, data.end_s]


def load_chart(sec: LoadSection, data: ReportData) -> alt.TopLevelMixin | None:
    rows = []
    for b in sec.bins:
        for key, label, _ in LOAD_SERIES:
            value = getattr(b, key)
            if value is not None:
                rows.append({"t_s": (b.start_s + b.end_s) / 2, "series": label, "value": value})
    if not rows:
        return None
    unit = "× capacity" if sec.rate_unit == "x capacity" else "per second"
    line = (
        alt.Chart(_data(rows))
        .mark_line(point=alt.OverlayMarkDef(size=14), strokeWidth=2)
        .encode(
            x=_x("t_s", domain=_time_domain(data)),
            y=alt.Y("value:Q", title=f"rate ({unit})"),
            color=alt.Color(
                "series:N",
                title=None,
                scale=alt.Scale(
                    domain=[s[1] for s in LOAD_SERIES], range=[s[2] for s in LOAD_SERIES]
                ),
                legend=alt.Legend(orient="top"),
            ),
            tooltip=[
                alt.Tooltip("t_s:Q", title="t (s)", format=".0f"),
                alt.Tooltip("series:N"),
                alt.Tooltip("value:Q", format=".2f"),
            ],
        )
    )
    layers: list[alt.Chart] = [*_phase_layers(data.phases), line]
    if sec.rate_unit == "x capacity":
        cap = (
            alt.Chart(_data([{"y": 1.0, "label": "capacity"}]))
            .mark_rule(color="#000000", strokeDash=[6, 4])
            .encode(y="y:Q")
        )
        cap_label = (
            alt.Chart(_data([{"y": 1.0, "label": "capacity Ĉ"}]))
            .mark_text(align="left", dx=4, dy=-6, fontSize=10)
            .encode(y="y:Q", x=alt.value(0), text="label:N")
        )
        layers += [cap, cap_label]
    return alt.layer(*layers).properties(width=WIDTH, height=HEIGHT)


def delivery_chart(sec: DeliverySection, data: ReportData) -> alt.TopLevelMixin | None:
    rows = [
        {
            "start_s": b.start_s,
            "t_s": (b.start_s + b.end_s) / 2,
            "share": b.on_time_share,
            "calls": b.calls,
        }
        for b in sec.bins
        if b.on_time_share is not None
    ]
    if not rows:
        return None
    line = (
        alt.Chart(_data(rows))
        .mark_line(point=alt.OverlayMarkDef(size=22), strokeWidth=2, color="#4c78a8")
        .encode(
            x=_x("t_s", title="planned arrival, seconds from the start", domain=_time_domain(data)),
            y=alt.Y(
                "share:Q",
                title="on-time share of calls",
                scale=alt.Scale(domain=[0, 1.08]),
                axis=alt.Axis(format="%"),
            ),
            tooltip=[
                alt.Tooltip("start_s:Q", title="planned from (s)", format=".0f"),
                alt.Tooltip("share:Q", title="on time", format=".1%"),
                alt.Tooltip("calls:Q"),
            ],
        )
    )
    layers: list[alt.Chart] = [*_phase_layers(data.phases), line]
    thr = [{"y": sec.threshold, "label": f"recovery threshold {sec.threshold:.0%}"}]
    layers.append(
        alt.Chart(_data(thr)).mark_rule(color="#54a24b", strokeDash=[6, 4]).encode(y="y:Q")
    )
    layers.append(
        alt.Chart(_data(thr))
        .mark_text(align="right", dy=-6, fontSize=10, color="#2e7d32")
        .encode(y="y:Q", x=alt.value(WIDTH), text="label:N")
    )
    if sec.recovery_s is not None:
        rec = [{"t_s": sec.recovery_s, "label": f"recovered ({sec.recovery_text})"}]
        layers.append(
            alt.Chart(_data(rec)).mark_rule(color="#2e7d32", strokeWidth=2).encode(x="t_s:Q")
        )
        layers.append(
            alt.Chart(_data(rec))
            .mark_text(align="left", dx=4, y=30, fontSize=11, fontWeight="bold", color="#2e7d32")
            .encode(x="t_s:Q", text="label:N")
        )
    return alt.layer(*layers).properties(width=WIDTH, height=HEIGHT)


def prefill_chart(sec: PrefillSection, data: ReportData) -> alt.TopLevelMixin | None:
    del data
    if not sec.fates:
        return None
    all_row = "all computed prompt tokens"
    rows: list[dict[str, Any]] = [
        {"row": all_row, "part": f.fate, "tokens": f.tokens, "share": f.share, "order": i}
        for i, f in enumerate(sec.fates)
    ]
    colors = dict(FATE_COLORS)
    if sec.before_first_token_tokens is not None:
        row = "of all: aborted before first output"
        rest = max(sec.total_tokens - sec.before_first_token_tokens, 0)
        rows += [
            {
                "row": row,
                "part": "aborted before first output",
                "tokens": sec.before_first_token_tokens,
                "share": sec.before_first_token_share,
                "order": 10,
            },
            {"row": row, "part": "other", "tokens": rest, "share": None, "order": 11},
        ]
        colors["aborted before first output"] = "#b71c1c"
    if sec.in_flight_tokens is not None:
        aborted = next((f.tokens for f in sec.fates if f.fate == "aborted"), 0)
        row = "of aborted: in flight at the abort"
        rows += [
            {
                "row": row,
                "part": "in flight at the abort",
                "tokens": sec.in_flight_tokens,
                "share": sec.in_flight_share,
                "order": 20,
            },
            {
                "row": row,
                "part": "other",
                "tokens": max(aborted - sec.in_flight_tokens, 0),
                "share": None,
                "order": 21,
            },
        ]
        colors["in flight at the abort"] = "#ff9da6"
    colors["other"] = "#e0e0e0"
    present = list(dict.fromkeys(r["part"] for r in rows))  # the legend lists what is drawn
    bars = (
        alt.Chart(_data(rows))
        .mark_bar(height=26)
        .encode(
            y=alt.Y("row:N", title=None, sort=None, axis=alt.Axis(labelLimit=260)),
            x=alt.X("tokens:Q", title="prompt tokens computed", stack="zero"),
            color=alt.Color(
                "part:N",
                title=None,
                scale=alt.Scale(domain=present, range=[colors.get(p, "#bbbbbb") for p in present]),
                legend=alt.Legend(orient="top", columns=4),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("part:N"),
                alt.Tooltip("tokens:Q", format=","),
                alt.Tooltip("share:Q", format=".1%"),
            ],
        )
    )
    chart: alt.TopLevelMixin = bars.properties(width=WIDTH - 200, height=3 * 40)
    return chart


def counters_chart(sec: CountersSection, data: ReportData) -> alt.TopLevelMixin | None:
    rises = []
    short = []
    for p in sec.points:
        for measure, value in (
            ("prompt tokens", p.prompt_rise),
            ("prefix-cache queries", p.query_rise),
        ):
            if value is not None:
                rises.append(
                    {"t_s": p.t_s, "replica": p.replica, "measure": measure, "value": value}
                )
        if p.shortfall is not None:
            short.append({"t_s": p.t_s, "replica": p.replica, "shortfall": p.shortfall})
    if not rises:
        return None
    domain = _time_domain(data)
    rise = (
        alt.Chart(_data(rises))
        .mark_line(strokeWidth=2)
        .encode(
            x=_x("t_s", title=f"end of the {sec.window_s:g} s window (s)", domain=domain),
            y=alt.Y("value:Q", title="counter rise (tokens)"),
            color=alt.Color(
                "measure:N",
                title=None,
                scale=alt.Scale(
                    domain=["prefix-cache queries", "prompt tokens"], range=["#4c78a8", "#e45756"]
                ),
                legend=alt.Legend(orient="top"),
            ),
            strokeDash=alt.StrokeDash("replica:N", title="replica"),
            tooltip=[
                alt.Tooltip("t_s:Q", format=".0f"),
                "replica:N",
                "measure:N",
                alt.Tooltip("value:Q", format=",.0f"),
            ],
        )
    )
    top_layers: list[alt.Chart] = [*_phase_layers(data.phases), rise]
    alarm_rows = [
        {"replica": a.replica, "name": a.name, "start_s": a.start_s, "end_s": a.end_s}
        for a in sec.alarms
    ]
    alarms = (
        alt.Chart(_data(alarm_rows))
        .mark_rect(color="#e45756", opacity=0.18, clip=True)
        .encode(
            x="start_s:Q",
            x2="end_s:Q",
            tooltip=[
                "replica:N",
                alt.Tooltip("start_s:Q", format=".0f"),
                alt.Tooltip("end_s:Q", format=".0f"),
            ],
        )
    )
    line = (
        alt.Chart(_data(short))
        .mark_line(strokeWidth=2, color="#e45756", point=alt.OverlayMarkDef(size=12))
        .encode(
            x=_x("t_s", title=f"end of the {sec.window_s:g} s window (s)", domain=domain),
            y=alt.Y(
                "shortfall:Q", title="shortfall (1 − prompt / queries)", axis=alt.Axis(format="%")
            ),
            strokeDash=alt.StrokeDash("replica:N", title="replica"),
            tooltip=[
                alt.Tooltip("t_s:Q", format=".0f"),
                "replica:N",
                alt.Tooltip("shortfall:Q", format=".1%"),
            ],
        )
    )
    thr = (
        alt.Chart(_data([{"y": sec.threshold}]))
        .mark_rule(color="#000000", strokeDash=[6, 4])
        .encode(y="y:Q")
    )
    top = alt.layer(*top_layers).properties(width=WIDTH, height=170)
    if not short:  # queries never rose: no shortfall to draw
        only: alt.TopLevelMixin = top
        return only
    bottom = alt.layer(alarms, line, thr).properties(width=WIDTH, height=150)
    chart: alt.TopLevelMixin = alt.vconcat(top, bottom).resolve_scale(
        color="independent", strokeDash="shared"
    )
    return chart


def queue_chart(sec: QueueSection, data: ReportData) -> alt.TopLevelMixin | None:
    labels = {key: label for key, label, _ in QUEUE_SERIES}
    rows: list[dict[str, Any]] = [
        {"start_s": p.start_s, "end_s": p.end_s, "series": labels[p.series], "value": p.value}
        for p in sec.points
    ]
    if not rows:
        return None
    # A bin's value holds over the bin: a step line through the bins' starts, closed at the
    # last bin's end.
    last: dict[str, dict[str, Any]] = {}
    for r in rows:
        last[r["series"]] = r
    rows += [{**r, "start_s": r["end_s"]} for r in last.values()]
    line = (
        alt.Chart(_data(rows))
        .mark_line(strokeWidth=2, interpolate="step-after")
        .encode(
            x=_x("start_s", domain=_time_domain(data)),
            y=alt.Y("value:Q", title="executions"),
            color=alt.Color(
                "series:N",
                title=None,
                scale=alt.Scale(
                    domain=[s[1] for s in QUEUE_SERIES], range=[s[2] for s in QUEUE_SERIES]
                ),
                legend=alt.Legend(orient="top", labelLimit=320),
            ),
            tooltip=[
                alt.Tooltip("start_s:Q", title="from (s)", format=".0f"),
                "series:N",
                alt.Tooltip("value:Q", format=".1f"),
            ],
        )
    )
    return alt.layer(*_phase_layers(data.phases), line).properties(width=WIDTH, height=HEIGHT)


def retries_chart(sec: RetrySection, data: ReportData) -> alt.TopLevelMixin | None:
    del data
    titles = {
        "gap": "gap: retry scheduled after the predecessor's abort (s)",
        "slack": "slack: own deadline minus first step on the GPU (s; < 0: client gone)",
    }
    colors = {"gap": "#4c78a8", "slack": "#f58518"}
    order = list(dict.fromkeys(st.window for st in sec.stats))
    panels = []
    for measure in ("gap", "slack"):
        rows = [
            {
                "window": st.window,
                "p10": st.p10_s,
                "median": st.median_s,
                "p90": st.p90_s,
                "n": st.n,
            }
            for st in sec.stats
            if st.measure == measure
        ]
        if not rows:
            continue
        y = alt.Y("window:N", title=None, sort=order, scale=alt.Scale(domain=order))
        tooltip = [
            "window:N",
            alt.Tooltip("n:Q", title="retries"),
            alt.Tooltip("p10:Q", format=".2f"),
            alt.Tooltip("median:Q", format=".2f"),
            alt.Tooltip("p90:Q", format=".2f"),
        ]
        spread = (
            alt.Chart(_data(rows))
            .mark_bar(height=16, opacity=0.45, color=colors[measure])
            .encode(x=alt.X("p10:Q", title=titles[measure]), x2="p90:Q", y=y, tooltip=tooltip)
        )
        median = (
            alt.Chart(_data(rows))
            .mark_tick(thickness=3, size=26, color=colors[measure])
            .encode(x="median:Q", y=y, tooltip=tooltip)
        )
        zero = alt.Chart(_data([{"x": 0.0}])).mark_rule(color="#000000").encode(x="x:Q")
        panels.append(
            alt.layer(spread, median, zero).properties(
                width=WIDTH // 2 - 90, height=max(34 * len(order), 80)
            )
        )
    if not panels:
        return None
    chart: alt.TopLevelMixin = alt.hconcat(*panels)
    return chart


def health_chart(sec: HealthSection, data: ReportData) -> alt.TopLevelMixin | None:
    lanes = [f"{r} · {s}" for r in sec.replicas for s in sec.signals]
    rows: list[dict[str, Any]] = [
        {
            "lane": f"{i.replica} · {i.name}",
            "replica": i.replica,
            "signal": i.name,
            "start_s": i.start_s,
            "end_s": i.end_s,
        }
        for i in sec.intervals
    ]
    for r in rows:
        if r["lane"] not in lanes:
            lanes.append(r["lane"])
    if not lanes:
        return None
    height = max(22 * len(lanes), 60)
    bands = _phase_layers(data.phases)
    bars = (
        alt.Chart(_data(rows))
        .mark_bar(color="#e45756", height=14, clip=True)
        .encode(
            x=_x("start_s", domain=_time_domain(data)),
            x2="end_s:Q",
            y=alt.Y(
                "lane:N", title=None, scale=alt.Scale(domain=lanes), axis=alt.Axis(labelLimit=320)
            ),
            tooltip=[
                "replica:N",
                "signal:N",
                alt.Tooltip("start_s:Q", format=".0f"),
                alt.Tooltip("end_s:Q", format=".0f"),
            ],
        )
    )
    return alt.layer(*bands, bars).properties(width=WIDTH - 160, height=height)


def section_chart(name: str, data: ReportData) -> alt.TopLevelMixin | None:
    """The chart of one section (by its name in `SECTION_ORDER`); None: nothing to draw."""
    if name == "load":
        return load_chart(data.load, data)
    if name == "delivery":
        return delivery_chart(data.delivery, data)
    if name == "prefill":
        return prefill_chart(data.prefill, data)
    if name == "counters":
        return counters_chart(data.counters, data)
    if name == "queue":
        return queue_chart(data.queue, data)
    if name == "retries":
        return retries_chart(data.retries, data)
    if name == "health":
        return health_chart(data.health, data)
    raise KeyError(f"section {name!r} has no chart")


CHARTED = ("load", "delivery", "prefill", "counters", "queue", "retries", "health")


def chart_specs(data: ReportData) -> dict[str, Spec]:
    """Vega-Lite specs for every section that has something to draw, keyed by section.

    A section with no rows to draw gets no chart (an empty dataset would only make Vega
    warn about infinite extents); its table and finding still show.
    """
    specs: dict[str, Spec] = {}
    for name in CHARTED:
        if not getattr(data, name).available:
            continue
        chart = section_chart(name, data)
        if chart is None:
            continue
        spec: Spec = chart.to_dict()
        spec.setdefault("config", {})["font"] = "system-ui, sans-serif"
        specs[name] = spec
    return specs
