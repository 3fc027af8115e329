"""The report's `counters` section: counters that miss it, from the `counters` analysis."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from relplan.analyses.context import RunContext
from relplan.analyses.counters import Counters
from relplan.models import StrictModel
from relplan.report.charts import (
    WIDTH,
    coinciding,
    dash_scale,
    inline_data,
    phase_layers,
    time_tooltip,
    time_x,
    tx,
    when,
)
from relplan.report.data import Interval, ReportData, SectionBase, Table
from relplan.report.section import Section
from relplan.text.report import ALL_REPLICAS
from relplan.text.sections import counters_caption, counters_report_rows
from relplan.values import pct

if TYPE_CHECKING:
    import altair as alt

TITLE = "Counters that miss it"
QUESTION = "Would vLLM's own counters have shown the wasted prefill on a dashboard?"


class CounterRisePoint(StrictModel):
    t_s: float = Field(description="end of the rolling window")
    replica: str
    prompt_rise: float | None
    query_rise: float | None
    shortfall: float | None


class CountersSection(SectionBase):
    window_s: float = 60
    threshold: float = 0.2
    points: list[CounterRisePoint] = Field(default_factory=list)
    alarms: list[Interval] = Field(default_factory=list)


def build(c: Counters, ctx: RunContext) -> CountersSection:
    summed = [p for p in c.series if p.replica is None]
    points = summed or c.series
    rises = [
        (measure, (p.t_s, p.replica), value)
        for p in points
        for measure, value in (
            ("prompt tokens", p.prompt_rise),
            ("prefix-cache queries", p.query_rise),
        )
        if value is not None
    ]
    shown = [w for w in c.windows if w.replica is None or w.window == "run"]
    trace = c.truth_source is not None
    steps = any(w.trace_computed_tokens is not None for w in c.windows)
    rows = counters_report_rows(shown, trace=trace, steps=steps)
    return CountersSection(
        title=TITLE,
        question=QUESTION,
        finding=c.finding,
        caption=counters_caption(
            c,
            points=bool(points),
            dashed=coinciding(rises, ["prefix-cache queries", "prompt tokens"]),
        ),
        window_s=c.rolling_window_s,
        threshold=c.threshold,
        points=[
            CounterRisePoint(
                t_s=p.t_s,
                replica=p.replica or ALL_REPLICAS,
                prompt_rise=p.prompt_rise,
                query_rise=p.query_rise,
                shortfall=p.shortfall,
            )
            for p in points
        ],
        alarms=[
            Interval(
                replica=a.replica or ALL_REPLICAS,
                name=f"shortfall > {pct(c.threshold, 0)}",
                start_s=a.start_s,
                end_s=a.end_s,
            )
            for a in c.alarms
        ],
        table=Table(
            columns=[
                "window",
                "replica",
                f"rise of {c.prompt_metric}",
                f"rise of {c.query_metric}",
                "shortfall",
                *(["engine trace shortfall"] if trace else []),
                *(["prefilled in the engine trace", "counter ÷ prefilled"] if steps else []),
                "resets",
            ],
            rows=rows,
        ),
    )


MEASURES = ("prefix-cache queries", "prompt tokens")


def chart(sec: CountersSection, data: ReportData) -> alt.TopLevelMixin | None:
    import altair as alt

    rises: list[dict[str, Any]] = []
    short = []
    for p in sec.points:
        for measure, value in (
            ("prompt tokens", p.prompt_rise),
            ("prefix-cache queries", p.query_rise),
        ):
            if value is not None:
                rises.append(
                    {
                        "t": when(data, p.t_s),
                        "replica": p.replica,
                        "measure": measure,
                        "value": value,
                    }
                )
        if p.shortfall is not None:
            short.append({"t": when(data, p.t_s), "replica": p.replica, "shortfall": p.shortfall})
    if not rises:
        return None
    drawn = [m for m in MEASURES if any(r["measure"] == m for r in rises)]
    colours = {"prefix-cache queries": "#4c78a8", "prompt tokens": "#e45756"}
    dashed = coinciding([(r["measure"], (r["t"], r["replica"]), r["value"]) for r in rises], drawn)
    rise = (
        alt.Chart(inline_data(rises))
        .mark_line(strokeWidth=2)
        .encode(
            x=time_x(data, what="end of the rolling window"),
            y=alt.Y("value:Q", title="counter rise (tokens)"),
            color=alt.Color(
                "measure:N",
                title=None,
                scale=alt.Scale(domain=drawn, range=[colours[m] for m in drawn]),
                legend=alt.Legend(orient="bottom"),
            ),
            strokeDash=alt.StrokeDash("measure:N", scale=dash_scale(drawn, dashed), title=None),
            tooltip=[
                time_tooltip(),
                alt.Tooltip("replica:N"),
                alt.Tooltip("measure:N"),
                alt.Tooltip("value:Q", format=",.0f"),
            ],
            detail=alt.Detail("replica:N"),
        )
    )
    top = alt.layer(*phase_layers(data), rise).properties(width=WIDTH, height=170)
    if not short:  # queries never rose: no shortfall to draw
        only: alt.TopLevelMixin = top
        return only
    alarm_rows = [
        {"replica": a.replica, "t": when(data, a.start_s), "t_end": when(data, a.end_s)}
        for a in sec.alarms
    ]
    layers: list[alt.Chart] = []
    if alarm_rows:
        layers.append(
            alt.Chart(inline_data(alarm_rows))
            .mark_rect(color="#e45756", opacity=0.18, clip=True)
            .encode(
                x=tx(data, "t"),
                x2=alt.X2("t_end:T"),
                tooltip=[
                    alt.Tooltip("replica:N"),
                    time_tooltip(title="from"),
                    time_tooltip("t_end", "to"),
                ],
            )
        )
    line = (
        alt.Chart(inline_data(short))
        .mark_line(strokeWidth=2, color="#e45756", point=alt.OverlayMarkDef(size=12))
        .encode(
            x=time_x(data, what="end of the rolling window"),
            y=alt.Y(
                "shortfall:Q", title="shortfall (1 − prompt / queries)", axis=alt.Axis(format="%")
            ),
            detail=alt.Detail("replica:N"),
            tooltip=[
                time_tooltip(),
                alt.Tooltip("replica:N"),
                alt.Tooltip("shortfall:Q", format=".1%"),
            ],
        )
    )
    thr = (
        alt.Chart(inline_data([{"y": sec.threshold}]))
        .mark_rule(color="#000000", strokeDash=[6, 4])
        .encode(y=alt.Y("y:Q"))
    )
    bottom = alt.layer(*layers, line, thr).properties(width=WIDTH, height=150)
    chart: alt.TopLevelMixin = alt.vconcat(top, bottom).resolve_scale(
        color="independent", strokeDash="independent", x="independent"
    )
    return chart


SECTION = Section(title=TITLE, question=QUESTION, model=CountersSection, build=build, chart=chart)
