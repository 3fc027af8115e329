"""The words and cells of the report's `health` section (relplan/report/sections/health.py
arranges them): the finding, and one table row per firing interval or quiet signal."""

from __future__ import annotations

import math

from relplan.alerts.health import HealthResult, SignalResult
from relplan.analyses.context import RunContext
from relplan.text.report import ALL_REPLICAS, span_column
from relplan.values import clock_span_list, num, plural, short, sig


def health_report_finding(h: HealthResult) -> str:
    """`Fired: ...; quiet: ...`, or `No signal fired`, and how it was evaluated."""
    evaluated = [s for s in h.signals if s.evaluated]
    quiet = [s.signal.replace("_", " ") for s in evaluated if not s.intervals]
    fired = [s for s in evaluated if s.intervals]
    if fired:
        finding = "Fired: " + "; ".join(_fired_words(s) for s in fired)
        finding += f"; quiet: {', '.join(quiet)}." if quiet else "."
    else:
        finding = f"No signal fired ({plural(len(evaluated), 'signal')} evaluated)."
    return (
        finding + f" Evaluated every {short(h.step_s)} s as Prometheus would"
        f" ({plural(h.evaluations, 'evaluation')})."
    )


def _spans(h: HealthResult, ctx: RunContext) -> tuple[str, list[str]]:
    """The firing column's header and one cell per firing interval, in signal order."""
    return span_column(
        ctx.t0, [(ctx.s(i.start), ctx.s(i.end)) for s in h.signals for i in s.intervals]
    )


def health_report_columns(h: HealthResult, ctx: RunContext) -> list[str]:
    head, _ = _spans(h, ctx)
    return ["signal", "replica", "state", head.replace("span", "firing", 1), "for", "peak"]


def health_report_rows(h: HealthResult, ctx: RunContext) -> list[list[str]]:
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
                    f"{num(i.end - i.start)} s",
                    _peak(i.peak_value),
                ]
            )
    return rows


def _peak(v: float | None) -> str:
    return "–" if v is None or not math.isfinite(v) else sig(v, 3)


def _fired_words(s: SignalResult) -> str:
    """`queue growing 2025-11-30 00:04:15–00:16:30 UTC (735 s)`: every interval, how long,
    and on which replica when the metrics name one."""
    # the intervals are epoch seconds already
    by_replica: dict[str, list[tuple[float, float]]] = {}
    for i in s.intervals:
        by_replica.setdefault(i.replica or "", []).append((i.start, i.end))
    parts = []
    for replica, spans in by_replica.items():
        who = f" on {replica}" if replica else ""
        lasted = ", ".join(f"{num(b - a)} s" for a, b in spans)
        parts.append(f"{clock_span_list(spans)}{who} ({lasted})")
    return f"{s.signal.replace('_', ' ')} {', '.join(parts)}"
