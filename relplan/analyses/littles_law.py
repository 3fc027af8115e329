"""Little's law on the waiting queue (docs/analyses.md, `littles_law`).

From the engine trace (queries/analyses/littles_law_by_window.sql): L is the exact time-average of
the waiting count, λ the executions arriving per second, Wq the mean full wait of the
window's arrivals; consistency = L / (λ·Wq), deadline saturation = L / (λ·D).
From metrics (queries/analyses/waiting_gauge_by_window.sql): L is the time-weighted mean of
vllm:num_requests_waiting summed over series, and λ comes from the proxy log's executions;
Wq (and so consistency) is then unknown. When both exist both are reported: the `waiting_l_metrics`
column sits beside the trace's `l`; the headline figures use the engine trace (it wins).
Series: the same query over `bin_s` bins: L, λ and λ·D per bin.
A trace that cannot see waits end — no `scheduled` event at all, as a vLLM log has (it
writes when a request is added and aborted, not when it is scheduled or, in 0.32 without
--enable-log-outputs, finished) — is not used for L: every execution would count as waiting
until the end of the data. L then comes from the waiting gauge, and the row says why.
"""

from __future__ import annotations

from typing import Any, Literal

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses.common import FINDING, WindowRow, ratio
from relplan.analyses.context import RunContext, Window, window_params
from relplan.analyses.inputs import Inputs
from relplan.analyses.wording import Words
from relplan.models import StrictModel

# The sentences of this analysis, worded by relplan/text/littles_law.py (one function per code).
Said = Literal["no_gauge_samples", "needs_trace_or"]
_say: Words[Said] = Words("relplan.text.littles_law")

GAUGE = "vllm:num_requests_waiting"


class LittleWindow(WindowRow):
    replica: str | None = Field(description="null: all replicas")
    source: str = Field(description="engine trace | metrics + proxy log | metrics")
    waiting_l: float | None = Field(description="L: time-average number of executions waiting")
    arrivals: int | None
    lambda_per_s: float | None
    wq_s: float | None = Field(description="mean full wait of the window's arrivals")
    consistency: float | None = Field(description="L / (λ·Wq)")
    deadline_saturation: float | None = Field(description="L / (λ·D)")
    open_at_end: int | None = Field(description="waits still open at T (ended at T)")
    waiting_l_metrics: float | None = Field(
        description=f"time-weighted mean of {GAUGE}, summed over series"
    )
    waiting_l_metrics_covered_share: float | None
    lambda_proxy_per_s: float | None


class LittleBin(StrictModel):
    start_s: float
    waiting_l: float | None
    lambda_per_s: float | None
    lambda_x_deadline: float | None = Field(
        description="λ·D: the waiting count at deadline saturation"
    )
    waiting_l_metrics: float | None


class LittlesLaw(StrictModel):
    source: str
    deadline_s: float | None
    windows: list[LittleWindow]
    series_bin_s: float
    series: list[LittleBin]
    finding: str = Field(default="", description=FINDING)


Key = tuple[str, str | None]


def _key(r: dict[str, Any]) -> Key | None:
    """(window, replica) with replica None for the all-replicas row; None for the empty
    per-replica group a window with no data produces."""
    if r["all_replicas"]:
        return (r["win_name"], None)
    if r["replica"] is None:
        return None
    return (r["win_name"], r["replica"])


def _windows(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    windows: list[Window],
    gauge: bool,
    per_replica: int = 0,
) -> list[LittleWindow]:
    """Rows for every window (all replicas), then per replica for the first `per_replica`
    windows (the phases; the series bins that follow them stay fleet-wide)."""
    trace: dict[Key, dict[str, Any]] = {}
    if use_trace(con, ctx):
        params = window_params(windows) | {"t_end": ctx.t_end}
        for r in sql.rows(con, "analyses/littles_law_by_window", params):
            if (k := _key(r)) is not None:
                trace[k] = r
    labels = (ctx.replica_labels * 3)[:3]
    met: dict[str, dict[Key, dict[str, Any]]] = {"gauge": {}, "proxy": {}}
    params = window_params(windows) | {
        "t_end": ctx.t_end,
        "gauge_name": GAUGE,
        "label1": labels[0],
        "label2": labels[1],
        "label3": labels[2],
    }
    for r in sql.rows(con, "analyses/waiting_gauge_by_window", params):
        if (k := _key(r)) is not None:
            met[r["kind"]][k] = r
    replicas: list[str | None] = [None]
    if per_replica:
        named = {k[1] for k in [*trace, *met["gauge"]] if k[1] is not None}
        if named - {""}:
            replicas += sorted(named)
    ok = use_trace(con, ctx)
    return [_row(ctx, w, None, trace.get((w.name, None)), met, gauge, ok) for w in windows] + [
        _row(ctx, w, rep, trace.get((w.name, rep)), met, gauge, ok)
        for rep in replicas[1:]
        for w in windows[:per_replica]
    ]


def use_trace(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> bool:
    """The engine trace measures waits only when it records scheduling."""
    if not ctx.has_events:
        return False
    r = sql.one(con, "analyses/lifecycle_event_counts")
    return bool(r and r["scheduled"])


NO_SCHEDULING = (
    "the engine trace has no `scheduled` event (a vLLM log): its waits never end, so L"
    " comes from the waiting gauge"
)


def _row(
    ctx: RunContext,
    w: Window,
    rep: str | None,
    t: dict[str, Any] | None,
    met: dict[str, dict[Key, dict[str, Any]]],
    gauge: bool,
    trace_ok: bool = True,
) -> LittleWindow:
    why: dict[str, str] = {}
    dur = w.b - w.a
    g = met["gauge"].get((w.name, rep))
    l_metric_val = g["value"] if gauge and g is not None else None
    if l_metric_val is None:
        why["waiting_l_metrics"] = _say("no_gauge_samples", gauge=GAUGE)
    p = met["proxy"].get((w.name, rep))
    lam_proxy = (int(p["value"]) if p else 0) / dur if ctx.has_proxy else None
    if ctx.has_events and trace_ok:
        src = "engine trace"
        t = t or {"wait_seconds": 0.0, "arrivals": 0, "wait_sum": 0.0, "open_at_end": 0}
        l_val: float | None = t["wait_seconds"] / dur
        arrivals: int | None = int(t["arrivals"])
        lam = arrivals / dur if arrivals is not None else None
        wq = ratio(t["wait_sum"], arrivals, why, "wq_s", "no execution arrived in this window")
        open_end: int | None = int(t["open_at_end"])
    else:
        src = "metrics + proxy log" if ctx.has_proxy else "metrics"
        l_val, arrivals, lam, wq, open_end = l_metric_val, None, lam_proxy, None, None
        why["wq_s"] = why["consistency"] = (
            NO_SCHEDULING if ctx.has_events else "Wq needs the engine trace's lifecycle events"
        )
        if l_val is None:
            why["waiting_l"] = why.get("waiting_l_metrics", "no waiting-count source")
        if lam is None:
            why["lambda_per_s"] = "λ needs an engine trace or a proxy log"
    consistency = None
    if l_val is not None and lam is not None and wq is not None:
        consistency = ratio(
            l_val, lam * wq, why, "consistency", "λ·Wq is zero (no arrivals or no waiting)"
        )
    sat = None
    if ctx.deadline_s is None:
        why["deadline_saturation"] = "deadline unknown: give --deadline"
    elif l_val is not None and lam is not None:
        sat = ratio(
            l_val,
            lam * ctx.deadline_s,
            why,
            "deadline_saturation",
            "no execution arrived in this window",
        )
    return LittleWindow(
        window=w.name,
        start_s=ctx.s(w.a),
        end_s=ctx.s(w.b),
        replica=rep,
        source=src,
        waiting_l=l_val,
        arrivals=arrivals,
        lambda_per_s=lam,
        wq_s=wq,
        consistency=consistency,
        deadline_saturation=sat,
        open_at_end=open_end,
        waiting_l_metrics=l_metric_val,
        waiting_l_metrics_covered_share=g["covered_share"] if gauge and g is not None else None,
        lambda_proxy_per_s=lam_proxy,
        null_reasons=why,
    )


def analyze_littles_law(con: duckdb.DuckDBPyConnection, ctx: RunContext, gauge: bool) -> LittlesLaw:
    phases = ctx.phase_windows()
    bins_w = ctx.bins(ctx.bin_s)
    rows = _windows(con, ctx, phases + bins_w, gauge, per_replica=len(phases))  # one query
    n = len(phases)
    windows = rows[:n] + rows[n + len(bins_w) :]
    bins = rows[n : n + len(bins_w)]
    series = [
        LittleBin(
            start_s=b.start_s,
            waiting_l=b.waiting_l,
            lambda_per_s=b.lambda_per_s,
            lambda_x_deadline=None
            if b.lambda_per_s is None or ctx.deadline_s is None
            else b.lambda_per_s * ctx.deadline_s,
            waiting_l_metrics=b.waiting_l_metrics,
        )
        for b in bins
    ]
    return LittlesLaw(
        source=windows[0].source,
        deadline_s=ctx.deadline_s,
        windows=windows,
        series_bin_s=ctx.bin_s,
        series=series,
    )


def missing(i: Inputs) -> str | None:
    if i.ctx.has_events or GAUGE in i.metric_names:
        return None
    return _say("needs_trace_or", gauge=GAUGE)


def run(i: Inputs) -> LittlesLaw:
    return analyze_littles_law(i.con, i.ctx, GAUGE in i.metric_names)
