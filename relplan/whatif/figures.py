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
from relplan.analyses import AnalyzeOptions, delivery, resolve_context
from relplan.analyses.amplification import AmplificationWindow, amplification_windows
from relplan.analyses.context import RunContext, Window, window_params
from relplan.whatif.model import Figures, WindowFigures

LATER = "overload+later"
# The verdict's window after the overload, named apart from any phase in the shared query.
AFTER = "\x1fafter"


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
    """The figures of the workspace `con`: what `relplan analyze --only amplification,delivery`
    reports of them, computed with only the queries they read (tests/test_whatif_figures.py
    holds them equal to the analyses' own). One delivery_by_window query serves the windows
    and the recovery's bins; one load_amplification_by_window the phases and the rates after
    the overload (the verdict's); no series, per-replica rows or findings. A replay's figures
    are computed 11 times for one report, and this was half their cost."""
    ctx = resolve_context(con, opts or AnalyzeOptions())
    windows = [w for w in ctx.phase_windows() if w.name != "run"]
    windows.append(Window(LATER, _overload_start(ctx), ctx.window_end, True))
    bins = delivery.recovery_bins(ctx) if ctx.has_proxy else []
    params = window_params(windows + bins) | {
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
    # the amplification analysis runs with a proxy log or an engine trace; delivery (and the
    # recovery) with a proxy log
    phases = ctx.phase_windows()
    amp: list[AmplificationWindow] = []
    if ctx.has_proxy or ctx.has_events:
        after = delivery.after_overload(ctx, AFTER) if ctx.has_proxy else None
        amp = amplification_windows(con, ctx, phases + ([after] if after else []))
    rec = None
    if ctx.has_proxy:
        untimed = delivery.proxy_untimed(con)
        rec, _ = delivery.judge_recovery(
            con, ctx, rows, untimed, amp[-1] if len(amp) > len(phases) else None
        )
    accepted = completed = None
    if rec is not None:
        names = {p.name for p in ctx.phases if p.start_s >= rec.overload_end_s - 1e-3}
        for a in amp[: len(phases)]:
            if a.window in names:
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
