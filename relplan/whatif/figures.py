"""The figures the fit check and the control table compare, computed by `relplan analyze`.

One implementation for the incident and every replay: a replay's records are stored in an
in-memory workspace as `relplan ingest` stores the simulator's files (relplan.whatif.replay
`load_measured`) and both go through `figures(con)`. Per phase and for `overload+later` (calls planned from the start of the
overload phase to the end of the data): calls, delivered and on-time share (the delivery
analysis's query); executions per call (overload and later); accepted and completed × Ĉ in
the first phase after the overload (amplification); recovery time and verdict (delivery).
"""

from __future__ import annotations

import math

import duckdb

from relplan import sql
from relplan.analyses import AnalyzeOptions, analyze
from relplan.analyses.context import RunContext, Window, window_params
from relplan.whatif.model import Figures, WindowFigures

LATER = "overload+later"


def _overload_start(ctx: RunContext) -> float:
    for p in ctx.phases:
        if p.name == ctx.overload_phase:
            return ctx.t0 + p.start_s
    return ctx.window_start


def _share(part: int, whole: int) -> float | None:
    return None if whole == 0 else part / whole


def _drained(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> float | None:
    """Drained after (relplan.analyses.drain), beside the recovery."""
    from relplan.analyses import drain

    return drain.measure(con, ctx).drained_after_s


def figures(con: duckdb.DuckDBPyConnection, opts: AnalyzeOptions | None = None) -> Figures:
    base = opts or AnalyzeOptions()
    res = analyze(con, base.model_copy(update={"only": ["amplification", "delivery"]}))
    ctx = res.context
    windows = [w for w in ctx.phase_windows() if w.name != "run"]
    windows.append(Window(LATER, _overload_start(ctx), ctx.window_end, True))
    params = window_params(windows) | {
        "delivery_window": math.inf if ctx.delivery_window_s is None else ctx.delivery_window_s,
        "deadline_s": ctx.deadline_s,
        "t_end": ctx.t_end,
    }
    rows = {str(r["win_name"]): r for r in sql.rows(con, "analyses/delivery_by_window", params)}
    out: list[WindowFigures] = []
    for w in windows:
        r = rows[w.name]
        calls = int(r["calls"])
        out.append(
            WindowFigures(
                window=w.name,
                calls=calls,
                delivered_share=_share(int(r["delivered"]), calls),
                on_time_share=None if ctx.deadline_s is None else _share(int(r["on_time"]), calls),
            )
        )
    ex = sql.one(
        con,
        "whatif/executions_per_call",
        {"t_from": _overload_start(ctx), "t_to": ctx.window_end + 1e-9},
    )
    epc = None
    if ex is not None and ex["calls"]:
        epc = int(ex["executions"]) / int(ex["calls"])
    rec = res.delivery.recovery if res.delivery is not None else None
    accepted = completed = None
    if res.amplification is not None:
        after = [
            p for p in ctx.phases if rec is not None and p.start_s >= rec.overload_end_s - 1e-3
        ]
        names = {p.name for p in after}
        for a in res.amplification.windows:
            if getattr(a, "replica", None) is None and a.window in names:
                accepted, completed = a.accepted_x_capacity, a.completed_x_capacity
                break
    return Figures(
        windows=out,
        executions_per_call=epc,
        accepted_x_capacity=accepted,
        completed_x_capacity=completed,
        recovery_s=None if rec is None else rec.recovery_s,
        drained_s=_drained(con, ctx),
        verdict="insufficient data" if rec is None else rec.verdict,
    )
