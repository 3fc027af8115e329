"""The report's `littles_law` section: waiting queue against little's law, from the `littles_law` analysis."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from relplan.analyses.context import RunContext
from relplan.analyses.littles_law import LittlesLaw
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
from relplan.text.report import coincide_caption
from relplan.text.sections import littles_law_report_rows

if TYPE_CHECKING:
    import altair as alt

TITLE = "Waiting queue against Little's law"
QUESTION = (
    "Is the waiting queue as long as Little's law says, and does it hold a whole "
    "deadline's worth of arrivals (so that everything in it times out)?"
)
WAITING_SERIES = (
    ("waiting", "waiting (engine trace)", "#e45756"),
    ("waiting_metrics", "waiting (vllm:num_requests_waiting)", "#f58518"),
    ("deadline", "λ·D: one deadline's worth of arrivals", "#4c78a8"),
)


WaitingSeries = Literal["waiting", "waiting_metrics", "deadline"]


class WaitingPoint(StrictModel):
    start_s: float = Field(description="bin start, seconds from t0")
    end_s: float
    series: WaitingSeries = Field(
        description="waiting: L from the engine trace; waiting_metrics: L from "
        "vllm:num_requests_waiting; deadline: λ·D, one deadline's worth of arrivals"
    )
    value: float


class LittlesLawSection(SectionBase):
    source: str = ""
    points: list[WaitingPoint] = Field(default_factory=list)


def build(ll: LittlesLaw, ctx: RunContext) -> LittlesLawSection:
    end_s = ctx.s(ctx.window_end)
    points: list[WaitingPoint] = []
    # Without an engine trace the analysis's L is the gauge's: drawn once, under its own name.
    traced = "engine trace" in ll.source
    for b in ll.series:
        b_end = min(b.start_s + ll.series_bin_s, end_s)
        series: WaitingSeries
        for series, value in (
            ("waiting", b.waiting_l if traced else None),
            ("waiting_metrics", b.waiting_l_metrics),
            ("deadline", b.lambda_x_deadline),
        ):
            if value is not None:
                points.append(
                    WaitingPoint(start_s=b.start_s, end_s=b_end, series=series, value=value)
                )
    per_replica = any(w.replica is not None for w in ll.windows)
    shown = [w for w in ll.windows if w.replica is None or w.window == "run"]
    rows = littles_law_report_rows(shown, per_replica=per_replica)
    labels = {key: label for key, label, _ in WAITING_SERIES}
    same = coinciding(
        [(labels[p.series], p.start_s, p.value) for p in points], list(labels.values())
    )
    return LittlesLawSection(
        title=TITLE,
        question=QUESTION,
        finding=ll.finding,
        caption=coincide_caption(same),
        source=ll.source,
        points=points,
        table=Table(
            columns=[
                "window",
                *(["replica"] if per_replica else []),
                "source",
                "L waiting",
                "λ per s",
                "Wq (s)",
                "L / (λ·Wq)",
                "L / (λ·D)",
                "L from metrics",
            ],
            rows=rows,
        ),
    )


def chart(sec: LittlesLawSection, data: ReportData) -> alt.TopLevelMixin | None:
    import altair as alt

    labels = {key: label for key, label, _ in WAITING_SERIES}
    rows: list[dict[str, Any]] = [
        {
            "t": when(data, p.start_s),
            "t_end": when(data, p.end_s),
            "series": labels[p.series],
            "value": p.value,
        }
        for p in sec.points
    ]
    if not rows:
        return None
    drawn = [s for s in WAITING_SERIES if any(r["series"] == s[1] for r in rows)]
    order = [s[1] for s in drawn]
    dashed = coinciding([(r["series"], r["t"], r["value"]) for r in rows], order)
    # A bin's value holds over the bin: a step line through the bins' starts, closed at the
    # last bin's end.
    last: dict[str, dict[str, Any]] = {}
    for r in rows:
        last[r["series"]] = r
    rows += [{**r, "t": r["t_end"]} for r in last.values()]
    line = (
        alt.Chart(inline_data(rows))
        .mark_line(strokeWidth=2, interpolate="step-after")
        .encode(
            x=time_x(data),
            y=alt.Y("value:Q", title="executions"),
            color=alt.Color(
                "series:N",
                title=None,
                scale=alt.Scale(domain=order, range=[s[2] for s in drawn]),
                legend=alt.Legend(orient="bottom", columns=1, labelLimit=400),
            ),
            strokeDash=alt.StrokeDash("series:N", scale=dash_scale(order, dashed), title=None),
            tooltip=[
                time_tooltip(title="from"),
                alt.Tooltip("series:N"),
                alt.Tooltip("value:Q", format=".1f"),
            ],
        )
    )
    return alt.layer(*phase_layers(data), line).properties(width=WIDTH, height=HEIGHT)


SECTION = Section(title=TITLE, question=QUESTION, model=LittlesLawSection, build=build, chart=chart)
