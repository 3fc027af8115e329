"""The figures the fit check and the control table compare, computed by `relplan analyze`.

One implementation for the incident and every replay: a replay's records are stored in an
in-memory workspace as `relplan ingest` stores the simulator's files (relplan.whatif.replay
`load_measured`) and both go through `figures(con)`. Per phase and for `overload+later` (calls planned from the start of the
overload phase to the end of the data): calls, delivered and on-time share (the delivery
analysis's query); executions per call (overload and later); accepted and completed × Ĉ in
the first phase after the overload (the amplification's rates: `rates`); recovery time and
verdict (delivery).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import duckdb

from relplan import sql
from relplan.analyses import AnalyzeOptions, delivery, resolve_context
from relplan.analyses.amplification import ENGINE, PROXY
from relplan.analyses.common import per_capacity
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


@dataclass(frozen=True)
class Rates:
    """A window's rates × Ĉ as the amplification analysis gives them (its
    `AmplificationWindow` fields of the same names), the only ones the figures and the
    verdict read."""

    window: str
    calls_x_capacity: float | None
    accepted_x_capacity: float | None
    completed_x_capacity: float | None
    accepted_source: str | None


def rates(con: duckdb.DuckDBPyConnection, ctx: RunContext, windows: list[Window]) -> list[Rates]:
    """Each window's `Rates`, computed as relplan/analyses/amplification.py computes them
    from queries/analyses/load_amplification_by_window.sql, but from
    queries/whatif/rates_by_window.sql, which counts only what they need: 10-11 ms of a
    replay's CPU against 23-24 ms for that query and the check for finish lines
    (tests/test_whatif_figures.py holds the figures equal to the analyses' own). Accepted
    and completed executions come from the engine trace when there is one (completed: unknown
    when it has arrivals and no finish line), else accepted from the proxy log."""
    found = {
        str(r["win_name"]): r
        for r in sql.rows(con, "whatif/rates_by_window", window_params(windows))
    }
    out: list[Rates] = []
    for w in windows:
        r = found[w.name]
        why: dict[str, str] = {}  # the analysis's reasons for a None: not shown here
        dur = w.b - w.a
        calls_rate = int(r["calls"]) / dur if ctx.has_proxy else None
        accepted: int | None = None
        completed: int | None = None
        source: str | None = None
        if ctx.has_events:
            accepted, source = int(r["engine_accepted"]), ENGINE
            if not (int(r["arrived_events"]) > 0 and int(r["finished_events"]) == 0):
                completed = int(r["engine_finished"])
        elif ctx.has_proxy:
            accepted, source = int(r["executions_created"]), PROXY
        out.append(
            Rates(
                window=w.name,
                calls_x_capacity=per_capacity(calls_rate, ctx.capacity, why, "calls"),
                accepted_x_capacity=per_capacity(
                    None if accepted is None else accepted / dur, ctx.capacity, why, "accepted"
                ),
                completed_x_capacity=per_capacity(
                    None if completed is None else completed / dur, ctx.capacity, why, "completed"
                ),
                accepted_source=source,
            )
        )
    return out


def _drained(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> float | None:
    """Drained after (relplan.analyses.drain `measure`), beside the recovery. From an engine
    trace that sees completions (every replay's), computed as `measure` computes it but from
    the few backlog points it reads (queries/whatif/drain_points.sql: those before the
    overload, and the new lows after it) instead of a replay's ~20,000: 16 of a replay's
    43 ms of figures went to the drain, most of them to turning every point into Python
    (tests/test_whatif_figures.py holds the figure equal to the analysis's). Any other
    workspace goes to `measure`."""
    from relplan.analyses import drain

    ov = next((p for p in ctx.phases if p.name == ctx.overload_phase), None)
    if ov is None or not ctx.has_events:
        return drain.measure(con, ctx).drained_after_s
    a, b = ctx.t0 + ov.start_s, ctx.t0 + ov.end_s
    cols = sql.by_column(con, "whatif/drain_points", {"a": a, "b": b})
    if not cols["t"] or (int(cols["no_terminal"][0]) and not int(cols["finished"][0])):
        return drain.measure(con, ctx).drained_after_s  # the backlog from the gauges, if any
    pts = list(zip(map(float, cols["t"]), map(float, cols["level"]), strict=True))
    pre = drain.pre_level(pts, ctx.window_start, a)  # reads no point at or after `a`
    if pre is None:
        return None
    hit = drain.first_at_or_below(pts, b, pre)
    return None if hit is None else hit - b


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
    amp: list[Rates] = []
    if ctx.has_proxy or ctx.has_events:
        after = delivery.after_overload(ctx, AFTER) if ctx.has_proxy else None
        amp = rates(con, ctx, phases + ([after] if after else []))
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
