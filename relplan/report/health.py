"""The engine-health section (analyses.md J) from `relplan.alerts`'s offline evaluation.

`evaluate_health` evaluates the same rules `relplan alerts export` writes, as Prometheus
would, over the run's window; this module only arranges its firing intervals into the
report's timeline (times in seconds from t0; a signal without a replica label shows as
"all replicas") and lists the signals it could not evaluate, with the metric they lacked.
"""

from __future__ import annotations

import duckdb

from relplan.alerts.evaluate import HealthResult, evaluate_health
from relplan.analyses.context import RunContext
from relplan.errors import NoDataError
from relplan.report import data as d
from relplan.report.build import ALL_REPLICAS, QUESTIONS, TITLES

HealthPart = tuple[d.HealthSection, list[d.MissingItem]]


def evaluate(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, existing: object = None
) -> tuple[HealthPart | None, str | None]:
    """The health section, or None and why (no metrics)."""
    if isinstance(existing, HealthResult):
        return health_section(existing, ctx), None
    if not ctx.has_metrics:
        return None, "engine health signals need vLLM metrics; the workspace has none"
    try:
        result = evaluate_health(con, start=ctx.window_start, end=ctx.window_end)
    except NoDataError as exc:
        return None, str(exc)
    return health_section(result, ctx), None


def health_section(h: HealthResult, ctx: RunContext) -> HealthPart:
    evaluated = [s for s in h.signals if s.evaluated]
    intervals = sorted(
        (
            d.Interval(
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
    rows = []
    for s in h.signals:
        if not s.evaluated:
            state = f"not evaluated: {s.skipped_reason}"
            fired = first = "–"
        elif s.intervals:
            reps = sorted({i.replica or ALL_REPLICAS for i in s.intervals})
            fired = f"{len(s.intervals)} on {', '.join(reps)}"
            first = f"{min(ctx.s(i.start) for i in s.intervals):,.0f}"
            state = "fired"
        else:
            state, fired, first = "quiet", "0", "–"
        rows.append([s.signal.replace("_", " "), s.alert, state, fired, first])
    missing = [
        d.MissingItem(
            section=f"health signal {s.signal.replace('_', ' ')}", reason=str(s.skipped_reason)
        )
        for s in h.signals
        if not s.evaluated
    ]
    quiet = [s.signal.replace("_", " ") for s in evaluated if not s.intervals]
    fired_names = [s.signal.replace("_", " ") for s in evaluated if s.intervals]
    if fired_names:
        finding = f"Fired: {', '.join(fired_names)}"
        finding += f"; quiet: {', '.join(quiet)}." if quiet else "."
    else:
        finding = f"No signal fired ({len(evaluated)} evaluated)."
    section = d.HealthSection(
        title=TITLES["health"],
        question=QUESTIONS["health"],
        finding=finding
        + f" Evaluated every {h.step_s:g} s as Prometheus would ({h.evaluations:,} evaluations).",
        signals=[s.signal.replace("_", " ") for s in evaluated],
        replicas=sorted(h.replicas),
        intervals=intervals,
        table=d.Table(
            columns=["signal", "alert", "state", "firing intervals", "first firing (s)"],
            rows=rows,
        ),
    )
    return section, missing
