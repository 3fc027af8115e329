"""The report's "Requests that hurt" section (the `heavy_requests` analysis) and its
"Stuck replicas" section (the `stuck` analysis, shown beside it).

Requests that hurt: one table, a row group per kind: the top requests by prefill, by KV
blocks x seconds and by duration; the per-request limits that would have capped them (all
models, then per model); the client timeouts observed, one row per kind of cut.
Stuck replicas: one row per episode, and a timeline of the episodes per replica.
"""

from __future__ import annotations

from typing import Any

import altair as alt
from pydantic import Field

from relplan.analyses.context import RunContext
from relplan.analyses.heavy_requests import HeavyRequest, HeavyRequests, RequestLimit
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
from relplan.report.wording import fixed, span_column

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
_MEASURE = {"prefill": "most prefill", "kv": "most KV cache", "duration": "longest"}
_KIND = {
    "first_token": "timeout to first token",
    "between_tokens": "timeout between tokens",
    "total": "total timeout",
    "unknown": "cut, timeout unknown",
}
COLUMNS = ["kind", "request", "model", "replica", "figure", "detail"]


class HeavyRequestsSection(SectionBase):
    top_requests: int = Field(default=0, description="requests listed per measure (top k)")
    cut_attempts: int = Field(default=0, description="attempts cut by a timeout, all kinds")


def _name(r: HeavyRequest) -> str:
    if r.call_id is not None:
        attempt = f"/{r.attempt}" if r.attempt is not None else ""
        exe = f" ({r.execution_id})" if r.execution_id and r.measure != "duration" else ""
        return f"{r.call_id}{attempt}{exe}"
    return r.execution_id or "–"


def _figure(r: HeavyRequest) -> str:
    if r.measure == "prefill":
        return f"{fixed(r.prefill_gpu_s, 2)} s of prefill steps"
    if r.measure == "kv":
        return f"{fixed(r.kv_block_s, 0)} block-s"
    return f"{fixed(r.duration_s)} s"


def _detail(r: HeavyRequest) -> str:
    parts = []
    if r.prompt_tokens is not None:
        parts.append(f"prompt {r.prompt_tokens:,}")
    if r.prefill_tokens is not None and r.prefill_tokens != r.prompt_tokens:
        parts.append(f"{r.prefill_tokens:,} computed")
    if r.max_tokens is not None:
        parts.append(f"max_tokens {r.max_tokens:,}")
    if r.outcome is not None:
        parts.append(r.outcome)
    return ", ".join(parts) or "–"


def _limit_row(x: RequestLimit) -> list[str]:
    tier = x.tier or "all models"
    if x.limit is None:
        return [f"{x.measure} limit", "–", tier, "–", "–", f"{x.n:,} values: too few to size"]
    kept = "–" if x.rest_kept_share is None else f"{x.rest_kept_share:.1%}"
    return [
        f"{x.measure} limit",
        "–",
        tier,
        "–",
        f"≤ {x.limit:,}",
        f"cuts {x.cuts_top} of the top {x.top_n} ({x.top_min:,}–{x.top_max:,}),"
        f" {x.cuts_rest:,} of {x.n - x.top_n:,} others (keeps {kept})",
    ]


def build(h: HeavyRequests, ctx: RunContext) -> HeavyRequestsSection:
    del ctx  # every figure is in the analysis's model
    rows: list[list[str]] = []
    for rs in (h.by_prefill, h.by_kv, h.by_duration):
        rows += [
            [
                f"{_MEASURE[r.measure]} #{r.rank}",
                _name(r),
                r.model or "–",
                r.replica or "–",
                _figure(r),
                _detail(r),
            ]
            for r in rs
        ]
    rows += [_limit_row(x) for x in sorted(h.limits, key=lambda x: (x.measure, x.tier or ""))]
    for t in h.timeouts:
        if t.attempts:
            rows.append(
                [
                    _KIND[t.kind],
                    f"{t.attempts:,} attempts",
                    "–",
                    "–",
                    f"median {fixed(t.median_s)} s",
                    _cut_range(t.measured, t.min_s, t.max_s),
                ]
            )
    return HeavyRequestsSection(
        title=TITLE,
        question=QUESTION,
        finding=h.finding,
        top_requests=h.top_k,
        cut_attempts=h.cut_attempts_total,
        table=Table(columns=COLUMNS, rows=rows),
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
    rows = [
        [
            e.replica or "–",
            e.node or "–",
            cell + (" (still stuck)" if e.ongoing else ""),
            f"{e.duration_s:,.0f} s",
            "yes" if e.alerted else f"no (under {s.for_s:g} s more)",
            fixed(e.peak_running, 0),
            "–"
            if e.streams_caught is None
            else f"{e.streams_caught:,} ({e.streams_failed or 0:,} not delivered)",
        ]
        for e, cell in zip(s.episodes, spans, strict=True)
    ]
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
            x2="t_end:T",
            y=alt.Y("replica:N", title=None, scale=alt.Scale(domain=lanes)),
            tooltip=["replica:N", time_tooltip(title="from"), time_tooltip("t_end", "to")],
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


def _cut_range(measured: str, lo: float | None, hi: float | None) -> str:
    """`elapsed 120.0 s` when every cut was the same, else `elapsed 110.0 s to 120.0 s`: a
    range of durations, never written like a stretch of the run."""
    if lo is None or hi is None:
        return f"{measured} unknown"
    if fixed(lo) == fixed(hi):
        return f"{measured} {fixed(lo)} s"
    return f"{measured} {fixed(lo)} s to {fixed(hi)} s"
