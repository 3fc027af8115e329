"""The report's `health` section: engine health signals, from the `health` analysis: each
firing interval with when it fired (wall clock), how long and on which replica."""

from __future__ import annotations

import math
from typing import Any

import altair as alt
from pydantic import Field

from relplan.alerts.health import HealthResult, SignalResult
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
from relplan.report.wording import ALL_REPLICAS, span_column
from relplan.values import clock_span_list, plural

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
    rows = _rows(h, ctx)
    quiet = [s.signal.replace("_", " ") for s in evaluated if not s.intervals]
    fired = [s for s in evaluated if s.intervals]
    if fired:
        finding = "Fired: " + "; ".join(_fired_words(s, ctx) for s in fired)
        finding += f"; quiet: {', '.join(quiet)}." if quiet else "."
    else:
        finding = f"No signal fired ({plural(len(evaluated), 'signal')} evaluated)."
    return HealthSection(
        title=TITLE,
        question=QUESTION,
        finding=finding + f" Evaluated every {h.step_s:g} s as Prometheus would"
        f" ({plural(h.evaluations, 'evaluation')}).",
        signals=[s.signal.replace("_", " ") for s in evaluated],
        replicas=sorted(h.replicas),
        intervals=intervals,
        table=Table(columns=_columns(h, ctx), rows=rows),
    )


def _spans(h: HealthResult, ctx: RunContext) -> tuple[str, list[str]]:
    """The firing column's header and one cell per firing interval, in signal order."""
    return span_column(
        ctx.t0, [(ctx.s(i.start), ctx.s(i.end)) for s in h.signals for i in s.intervals]
    )


def _columns(h: HealthResult, ctx: RunContext) -> list[str]:
    head, _ = _spans(h, ctx)
    return ["signal", "replica", "state", head.replace("span", "firing", 1), "for", "peak"]


def _rows(h: HealthResult, ctx: RunContext) -> list[list[str]]:
    """One row per firing interval (when, how long, on which replica, the peak value), one
    per signal that stayed quiet or could not be evaluated."""
    _, cells = _spans(h, ctx)
    spans = iter(cells)
    rows: list[list[str]] = []
    for s in h.signals:
        name = s.signal.replace("_", " ")
        if not s.evaluated:
            rows.append([name, "–", f"not evaluated: {s.skipped_reason}", "–", "–", "–"])
        elif not s.intervals:
            rows.append([name, "–", "quiet", "–", "–", "–"])
        for i in s.intervals:
            state = "firing at the end" if i.ongoing else "fired"
            rows.append(
                [
                    name,
                    i.replica or ALL_REPLICAS,
                    state,
                    next(spans),
                    f"{i.end - i.start:,.0f} s",
                    _peak(i.peak_value),
                ]
            )
    return rows


def _peak(v: float | None) -> str:
    return "–" if v is None or not math.isfinite(v) else f"{v:.3g}"


def _fired_words(s: SignalResult, ctx: RunContext) -> str:
    """`queue growing 2025-11-30 00:04:15–00:16:30 UTC (735 s)`: every interval, how long,
    and on which replica when the metrics name one."""
    del ctx  # the intervals are epoch seconds already
    by_replica: dict[str, list[tuple[float, float]]] = {}
    for i in s.intervals:
        by_replica.setdefault(i.replica or "", []).append((i.start, i.end))
    parts = []
    for replica, spans in by_replica.items():
        who = f" on {replica}" if replica else ""
        lasted = ", ".join(f"{b - a:,.0f} s" for a, b in spans)
        parts.append(f"{clock_span_list(spans)}{who} ({lasted})")
    return f"{s.signal.replace('_', ' ')} {', '.join(parts)}"


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
            x2="t_end:T",
            y=alt.Y(
                "lane:N", title=None, scale=alt.Scale(domain=lanes), axis=alt.Axis(labelLimit=230)
            ),
            tooltip=[
                "replica:N",
                "signal:N",
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
