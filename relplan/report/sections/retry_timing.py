"""The report's `retry_timing` section: retry timing, from the `retry_timing` analysis."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from relplan.analyses.context import RunContext
from relplan.analyses.retry_timing import RetryTiming
from relplan.models import StrictModel
from relplan.report.charts import WIDTH, inline_data
from relplan.report.data import ReportData, SectionBase, Table
from relplan.report.section import Section
from relplan.text.sections import retry_timing_report_rows

if TYPE_CHECKING:
    import altair as alt

TITLE = "Retry timing"
QUESTION = (
    "How soon after an abort did the retry reach the GPU, and how much of its own "
    "deadline was left by then?"
)


class RetryStat(StrictModel):
    """One measure's distribution over one window: p10, median and p90 with the count."""

    window: str
    measure: Literal["gap", "slack"]
    n: int
    p10_s: float
    median_s: float
    p90_s: float


class RetryTimingSection(SectionBase):
    stats: list[RetryStat] = Field(default_factory=list)


def build(rt: RetryTiming, ctx: RunContext) -> RetryTimingSection:
    del ctx  # every figure is in the analysis's own rows
    stats: list[RetryStat] = []
    for w in rt.windows:
        if w.gap_n and None not in (w.gap_p10_s, w.gap_median_s, w.gap_p90_s):
            stats.append(
                RetryStat(
                    window=w.window,
                    measure="gap",
                    n=w.gap_n,
                    p10_s=w.gap_p10_s or 0.0,
                    median_s=w.gap_median_s or 0.0,
                    p90_s=w.gap_p90_s or 0.0,
                )
            )
        if w.slack_n and None not in (w.slack_p10_s, w.slack_median_s, w.slack_p90_s):
            stats.append(
                RetryStat(
                    window=w.window,
                    measure="slack",
                    n=w.slack_n,
                    p10_s=w.slack_p10_s or 0.0,
                    median_s=w.slack_median_s or 0.0,
                    p90_s=w.slack_p90_s or 0.0,
                )
            )
    return RetryTimingSection(
        title=TITLE,
        question=QUESTION,
        finding=rt.finding,
        stats=stats,
        table=Table(
            columns=[
                "window (retry sent)",
                "retries after an abort",
                "never scheduled",
                "gap p10 / p50 / p90 (s)",
                "slack p10 / p50 / p90 (s)",
                "on the GPU after the client left",
            ],
            rows=retry_timing_report_rows(rt),
        ),
    )


def chart(sec: RetryTimingSection, data: ReportData) -> alt.TopLevelMixin | None:
    import altair as alt

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
            alt.Tooltip("window:N"),
            alt.Tooltip("n:Q", title="retries"),
            alt.Tooltip("p10:Q", format=".2f"),
            alt.Tooltip("median:Q", format=".2f"),
            alt.Tooltip("p90:Q", format=".2f"),
        ]
        spread = (
            alt.Chart(inline_data(rows))
            .mark_bar(height=16, opacity=0.45, color=colors[measure])
            .encode(
                x=alt.X("p10:Q", title=titles[measure]), x2=alt.X2("p90:Q"), y=y, tooltip=tooltip
            )
        )
        median = (
            alt.Chart(inline_data(rows))
            .mark_tick(thickness=3, size=26, color=colors[measure])
            .encode(x=alt.X("median:Q"), y=y, tooltip=tooltip)
        )
        zero = (
            alt.Chart(inline_data([{"x": 0.0}])).mark_rule(color="#000000").encode(x=alt.X("x:Q"))
        )
        panels.append(
            alt.layer(spread, median, zero).properties(
                width=WIDTH - 100, height=max(34 * len(order), 80)
            )
        )
    if not panels:
        return None
    chart: alt.TopLevelMixin = alt.vconcat(*panels)
    return chart


SECTION = Section(
    title=TITLE, question=QUESTION, model=RetryTimingSection, build=build, chart=chart
)
