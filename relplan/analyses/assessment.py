"""The verdict from whatever inputs the workspace holds (docs/analyses.md, "Verdict").

Strongest evidence first:
1. the delivery analysis's recovery verdict (a gateway log: calls, on-time share), when it
   reached one;
2. else the per-bin rates after the overload (engine trace or metrics): arrivals and
   completions against Ĉ and the waiting queue at the end, worded as "suspected" because
   executions or admissions cannot tell a retry from a new call:
   - completions below COLLAPSE × Ĉ while work waited or arrived above COLLAPSE × Ĉ:
     metastable (goodput collapsed);
   - the queue empty at the end: recovered;
   - arrivals above Ĉ: overloaded; otherwise draining;
3. no overload found (no bin with arrivals above Ĉ while work waited, no growing queue):
   healthy.
Each verdict carries the evidence ladder (relplan.analyses.evidence) behind it.
"""

from __future__ import annotations

from typing import Any, Literal

import duckdb
from pydantic import Field

from relplan.analyses import metrics_figures, overload
from relplan.analyses.context import RunContext
from relplan.analyses.evidence import (
    Figure,
    estimated,
    given,
    measured,
    missing,
    source_name,
    source_status,
)
from relplan.models import StrictModel

VerdictName = Literal["metastable", "draining", "overloaded", "recovered", "healthy"]
COLLAPSE = 0.5
GATEWAY = "a gateway log (attempt outcomes)"


class Assessment(StrictModel):
    verdict: VerdictName
    suspected: bool = Field(description="the evidence is indirect")
    basis: str = Field(description="which evidence decided it")
    reasons: list[str] = Field(description="the figures behind the verdict")
    figures: list[Figure] = Field(description="the evidence ladder")
    settle: list[str] = Field(description="inputs that would settle or strengthen it")


def _ctx_figures(ctx: RunContext) -> list[Figure]:
    out: list[Figure] = []
    ov = next((p for p in ctx.phases if p.name == ctx.overload_phase), None)
    if ov is None:
        out.append(
            missing(
                "overload_window",
                "overload window",
                "window",
                "--phases, a run.json, or data showing arrivals above Ĉ",
            )
        )
    else:
        make = estimated if ctx.phases_source == "detected" else given
        out.append(
            make(
                "overload_window",
                "overload window",
                ov.end_s - ov.start_s,
                "window",
                [ctx.phases_source],
                low=ov.start_s,
                high=ov.end_s,
                note=ctx.overload_rule,
            )
        )
    if ctx.capacity is None:
        out.append(missing("capacity", "Ĉ, calls per second", "per_s", "--capacity or a run.json"))
    else:
        src = ctx.capacity_source or "flag"
        est = source_status(src) == "estimated"
        out.append(
            (estimated if est else given)(
                "capacity",
                "Ĉ, calls per second",
                ctx.capacity,
                "per_s",
                [source_name(src).removeprefix("estimated: ")],
                needs="--capacity or a run.json" if est else None,
            )
        )
    if ctx.deadline_s is None:
        out.append(
            missing(
                "deadline", "D, the client deadline", "s", f"--deadline, a run.json or {GATEWAY}"
            )
        )
    else:
        src = ctx.deadline_source or "flag"
        out.append(
            (estimated if source_status(src) == "estimated" else given)(
                "deadline", "D, the client deadline", ctx.deadline_s, "s", [source_name(src)]
            )
        )
    return out


def _result_figures(res: Any) -> list[Figure]:
    out: list[Figure] = []
    dl, amp = res.delivery, res.amplification
    if dl is not None:
        run = dl.windows[0]
        out.append(
            measured(
                "delivered_share", "calls delivered", run.delivered_share, "share", ["gateway log"]
            )
        )
        if dl.recovery is not None:
            out.append(
                measured(
                    "on_time_after",
                    "on-time share after the overload",
                    dl.recovery.on_time_share_after,
                    "share",
                    ["gateway log"],
                )
            )
    else:
        out.append(missing("delivered_share", "calls delivered", "share", GATEWAY))
    run_amp = amp.windows[0] if amp is not None else None
    if run_amp is not None and run_amp.retry_share is not None:
        out.append(
            measured(
                "retry_share",
                "executions created by retries",
                run_amp.retry_share,
                "share",
                ["gateway log"],
            )
        )
    else:
        out.append(missing("retry_share", "executions created by retries", "share", GATEWAY))
    wp = res.wasted_prefill
    if wp is not None:
        w = next(x for x in wp.windows if x.window == "run" and x.replica is None)
        out.append(
            measured(
                "aborted_prefill",
                "computed prefill that went to aborted executions",
                w.aborted_share,
                "share",
                ["engine trace (steps)"],
            )
        )
    else:
        out.append(
            missing(
                "aborted_prefill",
                "computed prefill that went to aborted executions",
                "share",
                "an engine trace with step records",
            )
        )
    ct = res.counters
    if ct is not None:
        w = ct.windows[0]
        out.append(
            measured(
                "counter_shortfall",
                "prompt-token counter shortfall against prefix-cache queries",
                w.shortfall,
                "share",
                ["metrics"],
            )
        )
    else:
        out.append(
            missing(
                "counter_shortfall",
                "prompt-token counter shortfall",
                "share",
                "the vLLM metrics prompt_tokens_total and prefix_cache_queries_total",
            )
        )
    hl = res.health
    if hl is not None:
        fired = sorted({s.signal for s in hl.signals if s.intervals})
        out.append(
            measured(
                "health_fired",
                "engine health signals fired",
                float(len(fired)),
                "count",
                ["metrics"],
                note=", ".join(fired) or None,
            )
        )
    else:
        out.append(missing("health_fired", "engine health signals fired", "count", "vLLM metrics"))
    return out


def assess(con: duckdb.DuckDBPyConnection, ctx: RunContext, res: Any) -> Assessment:
    figures = _ctx_figures(ctx)
    series, width = overload.series(con, ctx.t0, ctx.t_end)
    rec = res.delivery.recovery if res.delivery is not None else None
    if rec is not None and rec.verdict != "insufficient data":
        verdict: VerdictName = rec.verdict
        suspected = False
        basis = "the gateway log's calls and on-time share after the overload"
        reasons = [rec.because]
        figures.append(
            measured(
                "calls_after",
                "calls arriving after the overload (× Ĉ)",
                rec.calls_x_capacity_after,
                "x_capacity",
                ["gateway log"],
            )
        )
        figures.append(
            measured(
                "accepted_after",
                "executions accepted after the overload (× Ĉ)",
                rec.accepted_x_capacity_after,
                "x_capacity",
                [rec.accepted_source or "gateway log"],
            )
        )
    else:
        verdict, suspected, basis, reasons, extra = _from_rates(ctx, series, width)
        figures.extend(extra)
    figures.extend(_result_figures(res))
    figures.extend(metrics_figures.figures(con, ctx, series.mean_prompt))
    settle = sorted(
        {f.needs for f in figures if f.needs and f.status in ("estimated", "not available")}
    )
    return Assessment(
        verdict=verdict,
        suspected=suspected,
        basis=basis,
        reasons=reasons,
        figures=figures,
        settle=settle,
    )


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _from_rates(
    ctx: RunContext, s: overload.Series, width: float
) -> tuple[VerdictName, bool, str, list[str], list[Figure]]:
    cap = ctx.capacity
    src = [x for x in (s.arrivals_source, s.completions_source, s.queue_source) if x]
    kind = estimated if s.arrivals_source and "estimated" in s.arrivals_source else measured
    ov_end = ctx.overload_end()
    if ctx.overload_phase is None or ov_end is None:
        return (
            "healthy",
            ctx.capacity is None,
            "no overload in the data",
            [
                "no bin had arrivals above Ĉ while work was waiting, and the waiting queue never"
                " grew for two bins in a row"
            ],
            [],
        )
    ov_end_s = ctx.s(ov_end)
    idx = [i for i, t in enumerate(s.start_s) if t >= ov_end_s - 1e-9 and t < ctx.s(ctx.t_end)]
    tail = "after the overload"
    if not idx:  # the overload lasts to the end of the data
        idx = [i for i, t in enumerate(s.start_s) if t >= ov_end_s - width * 3]
        tail = "at the end of the data"
    arr = _mean([s.arrivals[i] for i in idx]) if s.arrivals is not None else None
    comp = _mean([s.completions[i] for i in idx]) if s.completions is not None else None
    q_end = s.queue[idx[-1]] if s.queue is not None and idx else None
    ax = arr / cap if arr is not None and cap else None
    cx = comp / cap if comp is not None and cap else None
    extra = [
        kind(
            "arrivals_after",
            f"arrivals {tail} (× Ĉ)",
            ax,
            "x_capacity",
            [s.arrivals_source or "none"],
            needs=GATEWAY,
            note="executions or admissions: a retry counts as an arrival",
        ),
        measured(
            "completions_after",
            f"completions {tail} (× Ĉ)",
            cx,
            "x_capacity",
            [s.completions_source or "none"],
        ),
        measured(
            "waiting_at_end",
            "work waiting at the end of the data",
            q_end,
            "count",
            [s.queue_source or "none"],
        ),
    ]
    words = (
        f"{tail}: arrivals at {_x(ax)} Ĉ, completions at {_x(cx)} Ĉ, {_n(q_end)} waiting"
        f" at the end ({'; '.join(src)})"
    )
    basis = "rates " + tail + " from " + (s.arrivals_source or "the queue")
    if cx is not None and cx < COLLAPSE and ((q_end or 0) > 0 or (ax or 0) > COLLAPSE):
        return (
            "metastable",
            True,
            basis,
            [
                f"completions collapsed below {COLLAPSE:g} × Ĉ while work kept arriving or waiting, {words};"
                " whether the arrivals were retries needs a gateway log"
            ],
            extra,
        )
    if q_end is not None and q_end < 1 and tail == "after the overload":
        return "recovered", True, basis, [f"the queue emptied {words}"], extra
    if ax is not None and ax > 1:
        return "overloaded", True, basis, [f"arrivals stayed above Ĉ {words}"], extra
    return (
        "draining",
        True,
        basis,
        [f"work still waited but arrivals stayed within Ĉ {words}"],
        extra,
    )


def _x(v: float | None) -> str:
    return "?" if v is None else f"{v:.2f} ×"


def _n(v: float | None) -> str:
    return "?" if v is None else f"{v:,.0f}"
