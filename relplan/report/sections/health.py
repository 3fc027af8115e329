"""The report's `health` section: engine health signals, from the `health` analysis: each
firing interval with when it fired (wall clock), how long and on which replica."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from relplan.alerts.health import HealthResult
from relplan.analyses.context import RunContext
from relplan.report.charts import (
    WIDTH,
    inline_data,
    phase_layers,
    span_marks,
    time_axis,
    time_title,
    time_tooltip,
    when,
)
from relplan.report.data import Interval, MissingItem, ReportData, SectionBase, Table
from relplan.report.section import Section
from relplan.text.health import health_report_columns, health_report_finding, health_report_rows
from relplan.text.report import ALL_REPLICAS

if TYPE_CHECKING:
    import altair as alt

TITLE = "Engine health signals"
QUESTION = "Which alerting signals would have fired on the metrics, on which replica, and when?"


class HealthSection(SectionBase):
    signals: list[str] = Field(default_factory=list, description="every signal evaluated")
    replicas: list[str] = Field(default_factory=list)
    intervals: list[Interval] = Field(default_factory=list)


def build(h: HealthResult, ctx: RunContext) -> HealthSection:
    """Firing intervals as a timeline (s from t0) and a table of every signal."""
    evaluated = [s for s in h.signals if s.evaluated]
    intervals = sorted(
        (
            Interval(
                replica=i.replica or ALL_REPLICAS,
                name=s.signal.replace("_", " "),
                start_s=ctx.s(i.start),
                end_s=ctx.s(i.end),
            )
            for s in evaluated
            for i in s.intervals
        ),
        key=lambda i: (i.replica, i.name, i.start_s),
    )
    return HealthSection(
        title=TITLE,
        question=QUESTION,
        finding=health_report_finding(h),
        signals=[s.signal.replace("_", " ") for s in evaluated],
        replicas=sorted(h.replicas),
        intervals=intervals,
        table=Table(columns=health_report_columns(h, ctx), rows=health_report_rows(h, ctx)),
    )


def missing(h: HealthResult, ctx: RunContext) -> list[MissingItem]:
    """Signals not evaluated (their metrics are absent), for "what the data could not show"."""
    del ctx
    return [
        MissingItem(
            section=f"health signal {s.signal.replace('_', ' ')}", reason=str(s.skipped_reason)
        )
        for s in h.signals
        if not s.evaluated
    ]


def chart(sec: HealthSection, data: ReportData) -> alt.TopLevelMixin | None:
    import altair as alt

    lanes = [f"{r} · {s}" for r in sec.replicas for s in sec.signals]
    rows: list[dict[str, Any]] = [
        {
            "lane": f"{i.replica} · {i.name}",
            "replica": i.replica,
            "signal": i.name,
            "t": when(data, i.start_s),
            "t_end": when(data, i.end_s),
        }
        for i in sec.intervals
    ]
    for r in rows:
        if r["lane"] not in lanes:
            lanes.append(r["lane"])
    if not lanes:
        return None
    height = max(22 * len(lanes), 60)
    bars = (
        alt.Chart(inline_data(rows))
        .mark_bar(color="#e45756", height=14, clip=True)
        .encode(
            x=alt.X(
                "t:T",
                title=time_title(data),
                axis=time_axis(data),
                scale=alt.Scale(type="utc", nice=False),
            ),
            x2=alt.X2("t_end:T"),
            y=alt.Y(
                "lane:N", title=None, scale=alt.Scale(domain=lanes), axis=alt.Axis(labelLimit=230)
            ),
            tooltip=[
                alt.Tooltip("replica:N"),
                alt.Tooltip("signal:N"),
                time_tooltip(title="from"),
                time_tooltip("t_end", "to"),
            ],
        )
    )
    return alt.layer(*phase_layers(data), *span_marks(data), bars).properties(
        width=WIDTH - 170, height=height
    )


SECTION = Section(
    title=TITLE, question=QUESTION, model=HealthSection, build=build, chart=chart, missing=missing
)
