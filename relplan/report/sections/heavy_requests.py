"""The report's "Requests that hurt" section (the `heavy_requests` analysis) and its
"Stuck replicas" section (the `stuck` analysis, shown beside it).

Requests that hurt: one table, a row group per kind: the top requests by prefill, by KV
blocks x seconds and by duration; the per-request limits that would have capped them (all
models, then per model); the client timeouts observed, one row per kind of cut.
Stuck replicas: one row per episode, and a timeline of the episodes per replica.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from relplan.analyses.context import RunContext
from relplan.analyses.heavy_requests import HeavyRequests
from relplan.analyses.stuck import StuckEpisodes
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
from relplan.text.heavy import heavy_report_rows, stuck_report_rows
from relplan.text.report import span_column

if TYPE_CHECKING:
    import altair as alt

TITLE = "Requests that hurt"
QUESTION = (
    "Which few requests took the most prefill, held the most KV cache or ran longest, which "
    "limits would have capped them, and which client timeout cut the failed attempts?"
)
STUCK_TITLE = "Stuck replicas"
STUCK_QUESTION = (
    "Did a replica keep requests running without generating a token for a minute or more, "
    "when, on which node, and which streams did it catch?"
)
COLUMNS = ["kind", "request", "model", "replica", "figure", "detail"]


class HeavyRequestsSection(SectionBase):
    top_requests: int = Field(default=0, description="requests listed per measure (top k)")
    cut_attempts: int = Field(default=0, description="attempts cut by a timeout, all kinds")


def build(h: HeavyRequests, ctx: RunContext) -> HeavyRequestsSection:
    del ctx  # every figure is in the analysis's model
    return HeavyRequestsSection(
        title=TITLE,
        question=QUESTION,
        finding=h.finding,
        top_requests=h.top_k,
        cut_attempts=h.cut_attempts_total,
        table=Table(columns=COLUMNS, rows=heavy_report_rows(h)),
    )


def missing(h: HeavyRequests, ctx: RunContext) -> list[MissingItem]:
    del ctx
    return [
        MissingItem(section=f"requests that hurt: {field.replace('_', ' ')}", reason=why)
        for field, why in sorted(h.null_reasons.items())
    ]


SECTION = Section(
    title=TITLE, question=QUESTION, model=HeavyRequestsSection, build=build, missing=missing
)


# --- stuck replicas -------------------------------------------------------------------------


class StuckSection(SectionBase):
    episodes: list[Interval] = Field(default_factory=list, description="seconds from t0")


def build_stuck(s: StuckEpisodes, ctx: RunContext) -> StuckSection:
    head, spans = span_column(ctx.t0, [(e.start_s, e.end_s) for e in s.episodes])
    rows = stuck_report_rows(s, spans)
    return StuckSection(
        title=STUCK_TITLE,
        question=STUCK_QUESTION,
        finding=s.finding,
        caption="Red bars: requests running and the generation-token counter flat.",
        episodes=[
            Interval(replica=e.replica or "–", name="stuck", start_s=e.start_s, end_s=e.end_s)
            for e in s.episodes
        ],
        table=Table(
            columns=[
                "replica",
                "node",
                head,
                "duration",
                "alert fired",
                "most running",
                "streams caught",
            ],
            rows=rows,
        )
        if rows
        else None,
    )


def chart_stuck(sec: StuckSection, data: ReportData) -> alt.TopLevelMixin | None:
    import altair as alt

    if not sec.episodes:
        return None
    lanes = sorted({e.replica for e in sec.episodes})
    rows: list[dict[str, Any]] = [
        {"replica": e.replica, "t": when(data, e.start_s), "t_end": when(data, e.end_s)}
        for e in sec.episodes
    ]
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
            y=alt.Y("replica:N", title=None, scale=alt.Scale(domain=lanes)),
            tooltip=[
                alt.Tooltip("replica:N"),
                time_tooltip(title="from"),
                time_tooltip("t_end", "to"),
            ],
        )
    )
    return alt.layer(*phase_layers(data), *span_marks(data), bars).properties(
        width=WIDTH - 170, height=max(22 * len(lanes), 60)
    )


def missing_stuck(s: StuckEpisodes, ctx: RunContext) -> list[MissingItem]:
    del ctx
    seen: dict[tuple[str, str], list[str]] = {}
    for e in s.episodes:
        for field, why in sorted(e.null_reasons.items()):
            seen.setdefault((field, why), []).append(e.replica or "–")
    return [
        MissingItem(
            section=f"stuck episodes on {', '.join(dict.fromkeys(reps))}: {field.replace('_', ' ')}",
            reason=why,
        )
        for (field, why), reps in seen.items()
    ]


STUCK_SECTION = Section(
    title=STUCK_TITLE,
    question=STUCK_QUESTION,
    model=StuckSection,
    build=build_stuck,
    chart=chart_stuck,
    missing=missing_stuck,
)
