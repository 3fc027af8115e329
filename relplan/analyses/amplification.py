"""Load and retry amplification (docs/analyses.md, `amplification`), per window and binned.

Runs queries/analyses/load_amplification_by_window.sql once, over the whole run, the phases and the
`bin_s` bins aligned on the window start (the series the report charts).
Sources: accepted and completed executions come from the engine trace when there is one
(`arrived` without `rejected`; `finished`), else from the proxy log (non-attached attempts
with an execution_id by t_sent; completions only as delivered attempts by t_end, because an
execution completed for nobody is invisible to the proxy). Each row says which it used.
"""

from __future__ import annotations

from typing import Any

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses.common import FINDING, WindowRow, per_capacity, ratio
from relplan.analyses.context import RunContext, Window, window_params
from relplan.analyses.inputs import Inputs
from relplan.models import StrictModel

ENGINE = "engine trace"
PROXY = "proxy log"


class AmplificationWindow(WindowRow):
    calls: int = Field(description="calls with t_planned in the window")
    calls_per_s: float | None
    calls_x_capacity: float | None
    attempts: int = Field(description="attempts sent (t_sent) in the window")
    first_attempts: int
    retries: int
    attempts_per_call: float | None = Field(
        description="all attempts of the window's calls / calls"
    )
    executions_per_call: float | None = Field(
        description="all executions of the window's calls / calls"
    )
    executions_accepted: int | None
    accepted_per_s: float | None
    accepted_x_capacity: float | None
    accepted_source: str | None
    executions_rejected: int | None = Field(description="engine refusals (arrived then rejected)")
    executions_completed: int | None
    completed_per_s: float | None
    completed_x_capacity: float | None
    completed_for_waiting: int | None = Field(description="completed and delivered to an attempt")
    completed_for_waiting_x_capacity: float | None
    completed_for_nobody: int | None
    completed_source: str | None
    executions_created: int = Field(description="non-attached attempts with an execution (t_sent)")
    executions_created_by_retry: int
    retry_share: float | None = Field(description="executions created by retries / all created")
    shed: int
    attached: int
    retries_shed_share: float | None
    retries_attached_share: float | None
    abort_propagation_n: int = Field(
        description="executions with both a proxy cancel and an engine abort"
    )
    abort_delay_median_s: float | None
    abort_delay_max_s: float | None


class AmplificationReplicaRow(WindowRow):
    """The execution-level figures of A for one engine replica (from the engine trace)."""

    replica: str
    executions_accepted: int
    accepted_x_capacity: float | None
    executions_rejected: int
    executions_completed: int
    completed_x_capacity: float | None
    completed_for_waiting: int | None
    completed_for_nobody: int | None


class AmplificationBin(StrictModel):
    start_s: float
    calls: int
    executions_accepted: int | None
    executions_completed: int | None
    completed_for_waiting: int | None


class ReplicaBin(StrictModel):
    """Load on one replica in one series bin (only when work ran on two or more replicas)."""

    replica: str
    start_s: float = Field(description="bin start, seconds from t0")
    arrived: int = Field(description="executions accepted (engine trace), else attempts sent")
    completed: int = Field(description="executions finished (engine trace), else delivered")


class Amplification(StrictModel):
    windows: list[AmplificationWindow]
    by_replica: list[AmplificationReplicaRow] = Field(
        description="per engine replica and window, when the engine trace names replicas"
    )
    series_bin_s: float
    series: list[AmplificationBin] = Field(description="per bin aligned on the window start")
    replica_series: list[ReplicaBin] = Field(
        default_factory=list,
        description="per replica and bin (the series' bins), when two or more replicas ran work",
    )
    replica_series_source: str | None = Field(
        default=None, description="engine trace (executions) | proxy log (attempts)"
    )
    finding: str = Field(default="", description=FINDING)


def amplification_windows(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, windows: list[Window]
) -> list[AmplificationWindow]:
    rows = {
        r["win_name"]: r
        for r in sql.rows(con, "analyses/load_amplification_by_window", window_params(windows))
    }
    blind = ctx.has_events and _no_finish_lines(con)
    return [_row(ctx, w, rows[w.name], blind) for w in windows]


BLIND = (
    "the engine log has no finish line (vLLM writes none without --enable-log-outputs):"
    " completions are unknown here, not 0; vllm:request_success_total counts them (the"
    " verdict's evidence)"
)


def _no_finish_lines(con: duckdb.DuckDBPyConnection) -> bool:
    """The engine trace records arrivals but no `finished` event at all: it cannot see
    completions (a vLLM 0.32 log without --enable-log-outputs), so 0 would be false."""
    r = sql.one(con, "analyses/lifecycle_event_counts")
    return r is not None and int(r["arrived"]) > 0 and int(r["finished"]) == 0


def _row(ctx: RunContext, w: Window, r: dict[str, Any], blind: bool = False) -> AmplificationWindow:
    why: dict[str, str] = {}
    dur = w.b - w.a
    no_proxy = "needs a proxy log"
    calls = int(r["calls"])
    calls_rate = calls / dur if ctx.has_proxy else None
    if not ctx.has_proxy:
        why["calls_per_s"] = no_proxy
    empty = "no calls planned in this window"
    if ctx.has_events:
        accepted: int | None = int(r["engine_accepted"])
        rejected: int | None = int(r["engine_arrived"]) - int(r["engine_accepted"])
        acc_src: str | None = ENGINE
        completed: int | None = int(r["engine_finished"])
        comp_src: str | None = ENGINE
        for_waiting: int | None
        for_nobody: int | None
        if blind:
            completed, comp_src = None, None
            why["executions_completed"] = BLIND
            # nor what reached a waiting client: with cancellation off the gateway logs 200
            # for answers whose client had left at D (the lab's retries-no-cancel: 764)
            for_waiting = for_nobody = None
            why["completed_for_waiting"] = why["completed_for_nobody"] = BLIND
        elif ctx.has_proxy:
            for_waiting = int(r["engine_finished_delivered"])
            for_nobody = int(r["engine_finished"]) - int(r["engine_finished_delivered"])
        else:
            for_waiting = for_nobody = None
            why["completed_for_waiting"] = why["completed_for_nobody"] = (
                "needs a proxy log to know whether a response reached a waiting attempt"
            )
    elif ctx.has_proxy:
        accepted, acc_src = int(r["executions_created"]), PROXY
        rejected = None
        why["executions_rejected"] = "engine refusals need an engine trace"
        completed, comp_src = None, PROXY
        why["executions_completed"] = "completions for nobody are invisible without an engine trace"
        for_waiting, for_nobody = int(r["proxy_completed_delivered"]), None
        why["completed_for_nobody"] = why["executions_completed"]
    else:
        accepted = rejected = completed = for_waiting = for_nobody = None
        acc_src = comp_src = None
    acc_rate = None if accepted is None else accepted / dur
    comp_rate = None if completed is None else completed / dur
    return AmplificationWindow(
        window=w.name,
        start_s=ctx.s(w.a),
        end_s=ctx.s(w.b),
        calls=calls,
        calls_per_s=calls_rate,
        calls_x_capacity=per_capacity(calls_rate, ctx.capacity, why, "calls_x_capacity"),
        attempts=int(r["attempts"]),
        first_attempts=int(r["first_attempts"]),
        retries=int(r["retries"]),
        attempts_per_call=ratio(r["call_attempts"], calls, why, "attempts_per_call", empty),
        executions_per_call=ratio(r["call_executions"], calls, why, "executions_per_call", empty),
        executions_accepted=accepted,
        accepted_per_s=acc_rate,
        accepted_x_capacity=per_capacity(acc_rate, ctx.capacity, why, "accepted_x_capacity"),
        accepted_source=acc_src,
        executions_rejected=rejected,
        executions_completed=completed,
        completed_per_s=comp_rate,
        completed_x_capacity=per_capacity(comp_rate, ctx.capacity, why, "completed_x_capacity"),
        completed_for_waiting=for_waiting,
        completed_for_waiting_x_capacity=per_capacity(
            None if for_waiting is None else for_waiting / dur,
            ctx.capacity,
            why,
            "completed_for_waiting_x_capacity",
        ),
        completed_for_nobody=for_nobody,
        completed_source=comp_src,
        executions_created=int(r["executions_created"]),
        executions_created_by_retry=int(r["executions_created_by_retry"]),
        retry_share=ratio(
            r["executions_created_by_retry"],
            r["executions_created"],
            why,
            "retry_share",
            "no execution was created by an attempt sent in this window",
        ),
        shed=int(r["shed"]),
        attached=int(r["attached"]),
        retries_shed_share=ratio(
            r["retries_shed"], r["retries"], why, "retries_shed_share", "no retries in this window"
        ),
        retries_attached_share=ratio(
            r["retries_attached"],
            r["retries"],
            why,
            "retries_attached_share",
            "no retries in this window",
        ),
        abort_propagation_n=int(r["abort_n"]),
        abort_delay_median_s=r["abort_delay_median"],
        abort_delay_max_s=r["abort_delay_max"],
        null_reasons=_abort_reason(why, int(r["abort_n"]), ctx),
    )


def _abort_reason(why: dict[str, str], n: int, ctx: RunContext) -> dict[str, str]:
    if n == 0:
        msg = (
            "no execution with both a proxy t_cancel and an engine aborted event in this window"
            if ctx.has_proxy and ctx.has_events
            else "needs both a proxy log and an engine trace"
        )
        why["abort_delay_median_s"] = why["abort_delay_max_s"] = msg
    return why


def analyze_amplification(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, *, detail: bool = True
) -> Amplification:
    """The analysis; `detail=False` leaves out the per-replica rows and series."""
    phases = ctx.phase_windows()
    rows = amplification_windows(con, ctx, phases + ctx.bins(ctx.bin_s))  # one query
    windows, bins = rows[: len(phases)], rows[len(phases) :]
    series = [
        AmplificationBin(
            start_s=b.start_s,
            calls=b.calls,
            executions_accepted=b.executions_accepted,
            executions_completed=b.executions_completed,
            completed_for_waiting=b.completed_for_waiting,
        )
        for b in bins
    ]
    return Amplification(
        windows=windows,
        by_replica=_by_replica(con, ctx, phases) if detail else [],
        series_bin_s=ctx.bin_s,
        series=series,
        **(_replica_series(con, ctx) if detail else {}),
    )


def _replica_series(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> dict[str, Any]:
    """Arrivals and completions per replica and series bin, when two or more replicas ran
    work (queries/analyses/load_by_bin_and_replica.sql); none otherwise."""
    bins = ctx.bins(ctx.bin_s)
    if not bins or not (ctx.has_events or ctx.has_proxy):
        return {}
    params = {
        "t_start": ctx.window_start,
        "bin_s": ctx.bin_s,
        "n_bins": len(bins),
        "use_events": ctx.has_events,
    }
    rows = sql.rows(con, "analyses/load_by_bin_and_replica", params)
    if len({r["replica"] for r in rows} - {""}) < 2:
        return {}
    return {
        "replica_series": [
            ReplicaBin(
                replica=r["replica"] or "unnamed",
                start_s=ctx.s(ctx.window_start) + int(r["k"]) * ctx.bin_s,
                arrived=int(r["arrived"]),
                completed=int(r["completed"]),
            )
            for r in rows
        ],
        "replica_series_source": "engine trace" if ctx.has_events else "proxy log",
    }


def _by_replica(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, windows: list[Window]
) -> list[AmplificationReplicaRow]:
    if not ctx.has_events:
        return []
    rows = sql.rows(con, "analyses/executions_by_window_and_replica", window_params(windows))
    by = {(r["win_name"], r["replica"]): r for r in rows}
    replicas = sorted({r["replica"] for r in rows})
    if not set(replicas) - {""}:
        return []
    out = []
    for rep in replicas:
        for w in windows:
            r = by[(w.name, rep)]
            why: dict[str, str] = {}
            dur = w.b - w.a
            delivered = int(r["finished_delivered"]) if ctx.has_proxy else None
            if not ctx.has_proxy:
                why["completed_for_waiting"] = why["completed_for_nobody"] = (
                    "needs a proxy log to know whether a response reached a waiting attempt"
                )
            out.append(
                AmplificationReplicaRow(
                    window=w.name,
                    start_s=ctx.s(w.a),
                    end_s=ctx.s(w.b),
                    replica=rep,
                    executions_accepted=int(r["accepted"]),
                    accepted_x_capacity=per_capacity(
                        int(r["accepted"]) / dur, ctx.capacity, why, "accepted_x_capacity"
                    ),
                    executions_rejected=int(r["arrived"]) - int(r["accepted"]),
                    executions_completed=int(r["finished"]),
                    completed_x_capacity=per_capacity(
                        int(r["finished"]) / dur, ctx.capacity, why, "completed_x_capacity"
                    ),
                    completed_for_waiting=delivered,
                    completed_for_nobody=None
                    if delivered is None
                    else int(r["finished"]) - delivered,
                    null_reasons=why,
                )
            )
    return out


def missing(i: Inputs) -> str | None:
    if i.ctx.has_proxy or i.ctx.has_events:
        return None
    return "load amplification needs a proxy log or an engine trace"


def run(i: Inputs) -> Amplification:
    return analyze_amplification(i.con, i.ctx, detail=i.detail)
