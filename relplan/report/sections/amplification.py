"""The report's `amplification` section: load and retry amplification, from the `amplification` analysis."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from relplan.analyses.amplification import Amplification
from relplan.analyses.context import RunContext
from relplan.models import StrictModel
from relplan.report.charts import (
    HEIGHT,
    WIDTH,
    coinciding,
    dash_scale,
    inline_data,
    phase_layers,
    time_tooltip,
    time_x,
    when,
)
from relplan.report.data import ReportData, SectionBase, Table
from relplan.report.section import Section
from relplan.text.report import span_column
from relplan.text.sections import (
    amplification_caption,
    amplification_report_columns,
    amplification_report_rows,
)

if TYPE_CHECKING:
    import altair as alt

TITLE = "Load and retry amplification"
QUESTION = "Was the engine offered more work than it could do, and who created that work?"
RateUnit = Literal["x capacity", "per second"]
# One colour per series, the same in every chart.
LOAD_SERIES = (
    ("calls", "calls arriving", "#4c78a8"),
    ("accepted", "executions accepted", "#e45756"),
    ("completed", "executions completed", "#72b7b2"),
    ("completed_waiting", "completed for a waiting client", "#54a24b"),
)


class RateBin(StrictModel):
    start_s: float
    end_s: float
    calls: float | None = Field(description="calls arriving (by planned time), rate")
    accepted: float | None = Field(description="executions accepted, rate")
    completed: float | None = Field(description="executions completed, rate")
    completed_waiting: float | None = Field(
        description="executions completed for a client still waiting, rate"
    )


class ReplicaRate(StrictModel):
    replica: str
    start_s: float
    end_s: float
    arrived: float = Field(description="accepted executions (or attempts sent), rate")
    completed: float = Field(description="completed executions (or deliveries), rate")


class AmplificationSection(SectionBase):
    rate_unit: RateUnit = "x capacity"
    capacity_calls_per_s: float | None = None
    bins: list[RateBin] = Field(default_factory=list)
    replica_bins: list[ReplicaRate] = Field(
        default_factory=list, description="load per replica over time (two or more replicas)"
    )
    replica_source: str | None = None


def build(amp: Amplification, ctx: RunContext) -> AmplificationSection:
    end_s = ctx.s(ctx.window_end)
    cap = ctx.capacity
    bins = []
    for b in amp.series:
        b_end = min(b.start_s + amp.series_bin_s, end_s)
        width = b_end - b.start_s
        if width <= 0:
            continue
        scale = width * (cap if cap else 1.0)

        def rate(count: int | None, scale: float = scale) -> float | None:
            return None if count is None else count / scale

        bins.append(
            RateBin(
                start_s=b.start_s,
                end_s=b_end,
                calls=rate(b.calls),
                accepted=rate(b.executions_accepted),
                completed=rate(b.executions_completed),
                completed_waiting=rate(b.completed_for_waiting),
            )
        )
    replica_bins = _replica_bins(amp, ctx)
    span_head, cells = span_column(ctx.t0, [(w.start_s, w.end_s) for w in amp.windows])
    rows = amplification_report_rows(amp, cells)
    points = [
        (label, b.start_s, getattr(b, key))
        for b in bins
        for key, label, _ in LOAD_SERIES
        if getattr(b, key) is not None
    ]
    caption = amplification_caption(
        amp,
        capacity_line=bool(cap and bins),
        replicas=bool(replica_bins),
        dashed=coinciding(points, [s[1] for s in LOAD_SERIES]),
    )
    return AmplificationSection(
        title=TITLE,
        question=QUESTION,
        finding=amp.finding,
        caption=caption,
        rate_unit="x capacity" if cap else "per second",
        capacity_calls_per_s=cap,
        bins=bins,
        replica_bins=replica_bins,
        replica_source=amp.replica_series_source,
        table=Table(
            columns=amplification_report_columns(span_head, capacity=bool(cap)),
            rows=rows,
        ),
    )


def _replica_bins(amp: Amplification, ctx: RunContext) -> list[ReplicaRate]:
    end_s = ctx.s(ctx.window_end)
    scale = ctx.capacity or 1.0
    out = []
    for b in amp.replica_series:
        b_end = min(b.start_s + amp.series_bin_s, end_s)
        width = b_end - b.start_s
        if width > 0:
            out.append(
                ReplicaRate(
                    replica=b.replica,
                    start_s=b.start_s,
                    end_s=b_end,
                    arrived=b.arrived / width / scale,
                    completed=b.completed / width / scale,
                )
            )
    return out


def _replica_chart(sec: AmplificationSection, data: ReportData) -> alt.Chart | None:
    import altair as alt

    rows: list[dict[str, Any]] = [
        {
            "t": when(data, (b.start_s + b.end_s) / 2),
            "replica": b.replica,
            "measure": measure,
            "value": value,
        }
        for b in sec.replica_bins
        for measure, value in (("arrived", b.arrived), ("completed", b.completed))
    ]
    if not rows:
        return None
    unit = "× capacity" if sec.rate_unit == "x capacity" else "per second"
    engine = sec.replica_source == "engine trace"
    names = {
        "arrived": "accepted" if engine else "sent",
        "completed": "completed" if engine else "delivered",
    }
    for r in rows:
        r["measure"] = names[r["measure"]]
    lines: alt.Chart = (
        alt.Chart(inline_data(rows))
        .mark_line(strokeWidth=1.5)
        .encode(
            x=time_x(data),
            y=alt.Y("value:Q", title=f"per replica ({unit})"),
            color=alt.Color(
                "replica:N", title="replica", legend=alt.Legend(orient="bottom", labelLimit=200)
            ),
            strokeDash=alt.StrokeDash(
                "measure:N",
                title=None,
                scale=alt.Scale(
                    domain=[names["arrived"], names["completed"]], range=[[1, 0], [6, 3]]
                ),
                legend=alt.Legend(orient="bottom"),
            ),
            detail=alt.Detail("measure:N"),
            tooltip=[
                time_tooltip(),
                alt.Tooltip("replica:N"),
                alt.Tooltip("measure:N"),
                alt.Tooltip("value:Q", format=".2f"),
            ],
        )
        .properties(width=WIDTH, height=HEIGHT * 2 // 3)
    )
    return lines


def chart(sec: AmplificationSection, data: ReportData) -> alt.TopLevelMixin | None:
    import altair as alt

    main: Any = _load_chart(sec, data)  # a layer chart (Altair's stubs type it loosely)
    per_replica = _replica_chart(sec, data)
    if main is None or per_replica is None:
        return main if per_replica is None else per_replica
    both: alt.VConcatChart = alt.vconcat(main, per_replica).resolve_scale(
        color="independent", strokeDash="independent"
    )
    return both


def _load_chart(sec: AmplificationSection, data: ReportData) -> alt.TopLevelMixin | None:
    import altair as alt

    rows = []
    for b in sec.bins:
        for key, label, _ in LOAD_SERIES:
            value = getattr(b, key)
            if value is not None:
                rows.append(
                    {"t": when(data, (b.start_s + b.end_s) / 2), "series": label, "value": value}
                )
    if not rows:
        return None
    unit = "× capacity" if sec.rate_unit == "x capacity" else "per second"
    drawn = [s for s in LOAD_SERIES if any(r["series"] == s[1] for r in rows)]
    order = [s[1] for s in drawn]
    points = [(r["series"], r["t"], r["value"]) for r in rows]
    line = (
        alt.Chart(inline_data(rows))
        .mark_line(strokeWidth=2)
        .encode(
            x=time_x(data),
            y=alt.Y("value:Q", title=f"rate ({unit})"),
            color=alt.Color(
                "series:N",
                title=None,
                scale=alt.Scale(domain=order, range=[s[2] for s in drawn]),
                legend=alt.Legend(orient="bottom", columns=2, labelLimit=260),
            ),
            strokeDash=alt.StrokeDash(
                "series:N", scale=dash_scale(order, coinciding(points, order)), title=None
            ),
            tooltip=[
                time_tooltip(),
                alt.Tooltip("series:N"),
                alt.Tooltip("value:Q", format=".2f"),
            ],
        )
    )
    layers: list[alt.Chart] = [*phase_layers(data), line]
    if sec.rate_unit == "x capacity":
        cap = (
            alt.Chart(inline_data([{"y": 1.0}]))
            .mark_rule(color="#000000", strokeDash=[6, 4])
            .encode(y=alt.Y("y:Q"))
        )
        layers.append(cap)
    return alt.layer(*layers).properties(width=WIDTH, height=HEIGHT)


SECTION = Section(
    title=TITLE, question=QUESTION, model=AmplificationSection, build=build, chart=chart
)
