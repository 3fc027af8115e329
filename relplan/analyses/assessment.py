"""The verdict from whatever inputs the workspace holds (docs/analyses.md, "Verdict").

A verdict is earned: it names the evidence it rests on and the window that evidence covers
(relplan.analyses.coverage), and says no more than that evidence supports.

Strongest evidence first:
1. the delivery analysis's recovery verdict (a gateway log: calls, on-time share), when it
   reached one — a pulse in which no call was on time is said to be an incident, and a run
   whose calls stay mostly late to the end of the data is not `draining`;
2. else, when an overload was named or detected, or failure signals show one (the share of
   finished requests over D from the end-to-end histogram, calls not on time in the gateway
   log), the failure window lasts while those signals last: failing to the end of the data is
   `metastable` (or `overloaded` while arrivals stay above Ĉ), never `draining`; a failure
   that ended is `recovered`, with the recovery from the same signal;
3. else the per-bin rates after the overload (engine trace or metrics), worded as
   "suspected" (executions or admissions cannot tell a retry from a new call);
4. no overload and no failure signal: `healthy` only with evidence of delivery — at least
   MIN_CALLS calls with >= HEALTHY_SHARE delivered (gateway log), or completions counted by
   vllm:request_success_total over at least MIN_SCRAPES scrapes, or finished executions in an
   engine trace. No call delivered is `failing`; only gauges, an idle window or too few
   samples is `cannot tell`, naming the one input that would settle it.

Both recovery figures are kept: `recovered_after_s` (the delivery analysis's, or the
histogram's by finish time) and `drain` (relplan.analyses.drain). Where two sources give one
figure (finished requests by the engine log and by request_success_total; the waiting queue
by the stats line and by the gauge), both are shown in `disagreements`, with the one used.
Notes are generated from `present`, the table of inputs the workspace holds: a figure the
workspace cannot give names an input it lacks, never one it holds (`contradictions`).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses import coverage, drain, histograms, metrics_figures, overload
from relplan.analyses.context import RunContext
from relplan.analyses.coverage import DataWindow
from relplan.analyses.drain import Drain
from relplan.analyses.evidence import (
    Figure,
    estimated,
    given,
    measured,
    missing,
    source_name,
    source_status,
)
from relplan.analyses.histograms import LatencyHistogram
from relplan.analyses.wording import Words
from relplan.models import StrictModel

# The sentences of the verdict, worded by relplan/text/assessment.py (each code is a function
# there, called with the values named here): the analysis says which, with its numbers.
Said = Literal[
    "aborted_prefill_method",
    "arrivals_above",
    "bucket_note",
    "calls_answered",
    "calls_of",
    "cannot_judge_rates",
    "capacity_ramp_method",
    "collapsed",
    "counter_evidence",
    "delivered_evidence",
    "drain_note",
    "drained_only_after_load",
    "executions_done",
    "failure_ended_basis",
    "failure_window_note",
    "gateway_evidence",
    "healthy_counter",
    "healthy_gateway",
    "healthy_trace",
    "idle",
    "incident_pulse",
    "incident_recovered",
    "late_answers_note",
    "late_to_end_basis",
    "late_to_end_metastable",
    "late_to_end_overloaded",
    "low_share",
    "more_calls_need",
    "no_call_delivered",
    "no_completion_while_waiting",
    "no_deadline",
    "no_evidence",
    "no_evidence_evidence",
    "not_recovered",
    "over",
    "queue_emptied",
    "rates",
    "rates_need",
    "recovered_beside",
    "recovered_needs",
    "requests_completed",
    "retries_note",
    "scrapes_need",
    "still_draining",
    "throughput_method",
    "too_few_calls",
    "too_few_calls_basis",
    "trace_evidence",
    "waiting_last_bin_label",
    "waiting_trend_label",
    "waiting_trend_note",
    "window_note",
    "window_text",
]
_say: Words[Said] = Words("relplan.text.assessment")


VerdictName = Literal[
    "metastable", "draining", "overloaded", "recovered", "healthy", "failing", "cannot tell"
]
COLLAPSE = 0.5
GATEWAY = "a gateway log (attempt outcomes)"
UNTIMED_NEED = "request durations in the gateway log (nginx: $request_time in log_format)"
MIN_CALLS = 5  # calls a delivered share needs before it can call a run healthy
MIN_SCRAPES = 3  # scrapes a counter's completions need (a rise needs two)
HEALTHY_SHARE = 0.9
LATE_SHARE = 0.5  # a bin fails when more than this share of its requests missed D
ON_TIME_AGAIN = 0.1  # ... and has recovered when at most this share missed D
MIN_AFTER_BINS = 2  # bins after the overload the rates need before they judge "after"
MIN_TREND_BINS = 3  # bins a least-squares trend of the queue needs


class SourceValue(StrictModel):
    source: str
    value: float | None
    start_s: float | None = Field(description="first sample, seconds from t0")
    end_s: float | None = Field(description="last sample, seconds from t0")
    samples: int


class Disagreement(StrictModel):
    figure: str = Field(description="the quantity two sources give")
    values: list[SourceValue]
    used: str = Field(description="the source the verdict used")
    why: str


class Assessment(StrictModel):
    verdict: VerdictName
    suspected: bool = Field(description="the evidence is indirect")
    basis: str = Field(description="which evidence decided it")
    evidence: str = Field(description="the evidence the verdict rests on, and over what")
    window: DataWindow | None = Field(
        default=None, description="the analysis window and the source that bounds it"
    )
    missing_input: str | None = Field(
        default=None, description="the one input that would settle a `cannot tell`"
    )
    min_calls: int = MIN_CALLS
    min_scrapes: int = MIN_SCRAPES
    reasons: list[str] = Field(description="the figures behind the verdict")
    recovered_after_s: float | None = Field(
        default=None, description="seconds from the overload's end to on-time service again"
    )
    recovered_source: str | None = Field(default=None, description="what recovered_after_s is from")
    drain: Drain | None = Field(default=None, description="drained after: the backlog's return")
    figures: list[Figure] = Field(description="the evidence ladder")
    disagreements: list[Disagreement] = Field(default_factory=list)
    latency: list[LatencyHistogram] = Field(
        default_factory=list, description="percentile estimates from vLLM's histograms"
    )
    present: list[str] = Field(default_factory=list, description="the inputs the workspace holds")
    settle: list[str] = Field(description="inputs that would settle or strengthen it")


# Inputs a figure can need, and how a note names them (the evidence table's keys).
NEEDS = {
    "gateway": GATEWAY,
    "steps": "an engine trace with step records",
    "trace": "an engine trace (lifecycle events)",
    "metrics": "vLLM metrics (/metrics scrapes or a Prometheus export)",
    "prompt_counters": "the vLLM metrics prompt_tokens_total and prefix_cache_queries_total",
    "success": "vllm:request_success_total (vLLM /metrics)",
    "hist_ttft": "the vllm:time_to_first_token_seconds histogram",
    "hist_queue": "the vllm:request_queue_time_seconds histogram",
    "hist_e2e": "the vllm:e2e_request_latency_seconds histogram",
    "waiting": "vllm:num_requests_waiting",
}


def present_inputs(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    names: frozenset[str],
    scrapes: dict[str, int] | None = None,
) -> dict[str, bool]:
    """Which inputs the workspace holds; `scrapes`: histograms.scrapes(con) if read already."""
    hist = set(histograms.scrapes(con) if scrapes is None else scrapes)
    return {
        "gateway": ctx.has_proxy,
        "steps": ctx.has_steps,
        "trace": ctx.has_events,
        "metrics": ctx.has_metrics,
        "prompt_counters": {"vllm:prompt_tokens_total", "vllm:prefix_cache_queries_total"} <= names,
        "success": "vllm:request_success_total" in names,
        "hist_ttft": "vllm:time_to_first_token_seconds" in hist,
        "hist_queue": "vllm:request_queue_time_seconds" in hist,
        "hist_e2e": "vllm:e2e_request_latency_seconds" in hist,
        "waiting": "vllm:num_requests_waiting" in names,
    }


# How a note can name each input (any of these phrases counts as asking for it).
PHRASES = {
    "gateway": ("a gateway log", "a proxy log"),
    "steps": (NEEDS["steps"],),
    "trace": (NEEDS["trace"],),
    "prompt_counters": (NEEDS["prompt_counters"],),
    "hist_ttft": (NEEDS["hist_ttft"],),
    "hist_queue": (NEEDS["hist_queue"],),
    "hist_e2e": (NEEDS["hist_e2e"],),
}


def contradictions(a: Assessment) -> list[str]:
    """Notes that name as missing an input the workspace holds (must be none): a
    not-available figure's `needs` and note, the missing input and the settle list; and a
    "not recovered" beside a verdict that says it recovered."""
    phrases = [p for k in a.present for p in PHRASES.get(k, ())]
    notes = [
        f"{f.label}: needs {f.needs}" for f in a.figures if f.status == "not available" and f.needs
    ]
    notes += [f"{f.label}: {f.note}" for f in a.figures if f.status == "not available" and f.note]
    if a.missing_input:
        notes.append(f"missing input: {a.missing_input}")
    notes += [f"settle: {s}" for s in a.settle]
    out = [n for n in notes if any(p in n for p in phrases)]
    rec = next((f for f in a.figures if f.key == "recovered_after"), None)
    said_none = rec is not None and rec.status == "measured" and rec.value is None
    if rec is not None and said_none and a.verdict in ("recovered", "healthy"):
        out.append(f"{rec.label}: {rec.note} beside the verdict {a.verdict}")
    if rec is not None and a.verdict in DOWN and rec.value is not None:
        out.append(_say("recovered_beside", label=rec.label, value=rec.value, verdict=a.verdict))
    return out


def _need(present: dict[str, bool], key: str, held_reason: str) -> str:
    """The note for a figure that is not available: the input it needs, or, when the
    workspace holds that input, why it gave no value."""
    return f"{held_reason} ({NEEDS[key]} is present)" if present.get(key) else NEEDS[key]


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
    if ctx.capacity is not None:
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
                "deadline",
                "D, the client deadline",
                "s",
                "--deadline or a run.json"
                + ("" if ctx.has_proxy else ", or a gateway log whose attempts show the cut-off"),
                note="the gateway log shows no common cut-off of the attempts the client left"
                if ctx.has_proxy
                else None,
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


def _capacity_figure(
    ctx: RunContext, s: overload.Series, width: float, res: Any
) -> tuple[Figure, float | None]:
    """Ĉ when neither a flag nor run.json gives it: a staged ramp (the capacity analysis),
    else the highest completion rate sustained under a standing queue, with the spread of
    its bins as the uncertainty."""
    cal = getattr(res, "capacity", None)
    if cal is not None and cal.capacity_calls_per_s is not None:
        return (
            estimated(
                "capacity",
                "Ĉ, calls per second",
                cal.capacity_calls_per_s,
                "per_s",
                ["capacity calibration (staged ramp)"],
                needs="--capacity or a run.json",
                note=_say("capacity_ramp_method", bound=cal.bound),
            ),
            cal.capacity_calls_per_s,
        )
    est = overload.capacity_estimate(s, width)
    if est is None:
        return (
            missing(
                "capacity",
                "Ĉ, calls per second",
                "per_s",
                "--capacity or a run.json (no completions in balance with the work done,"
                " under a standing queue or in calm bins with the engine's busy time, to"
                " estimate it)",
            ),
            None,
        )
    sources = [s.completions_source or "completions"]
    if est.method.startswith("utilization"):
        sources.append("vllm_log:iteration_elapsed_seconds")
    return (
        estimated(
            "capacity",
            "Ĉ, calls per second",
            est.rate,
            "per_s",
            sources,
            low=est.low,
            high=est.high,
            needs="--capacity or a run.json",
            note=f"method: {est.method}",
        ),
        est.rate,
    )


PREFILL_COMPUTED = "vllm:request_prefill_kv_computed_tokens_sum"


def _aborted_prefill_from_counters(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, rows: list[dict[str, Any]]
) -> Figure | None:
    """Without step records: the computed prefill of executions that never finished, from
    vLLM's counters over the window. Every computed prompt token is a prefix-cache query that
    missed (prefix_cache_queries_total - prefix_cache_hits_total); the finished requests'
    share is request_prefill_kv_computed_tokens (observed when a request finishes); the rest
    went to executions that did not finish: aborted ones, when the engine log's abort lines
    name some (work still running at the end of the data counts too); None without them."""
    rises = {
        str(r["name"]): float(r["rise"])
        for r in rows
        if r["le"] is None and r["finished_reason"] is None
    }
    queries = rises.get("vllm:prefix_cache_queries_total")
    hits = rises.get("vllm:prefix_cache_hits_total")
    finished = rises.get(PREFILL_COMPUTED)
    if queries is None or hits is None or finished is None or queries - hits <= 0:
        return None
    computed = queries - hits
    share = max(0.0, 1.0 - finished / computed)
    ab = sql.one(
        con, "analyses/aborted_executions_in_window", {"a": ctx.window_start, "b": ctx.window_end}
    )
    aborted = int(ab["aborted"]) if ab is not None else 0
    if not aborted:
        return None  # no abort line: the rest may be work still running at the end
    sources = [
        "vllm:prefix_cache_queries_total",
        "vllm:prefix_cache_hits_total",
        PREFILL_COMPUTED,
    ]
    sources.append("engine log (abort lines)")
    return estimated(
        "aborted_prefill",
        "computed prefill that went to aborted executions",
        share,
        "share",
        sources,
        needs="an engine trace with step records (per execution)",
        note=_say("aborted_prefill_method", finished=finished, computed=computed, aborted=aborted),
    )


def _capacity_from_throughput(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, rows: list[dict[str, Any]]
) -> Figure | None:
    """Ĉ from vLLM's stats log line: the highest generation throughput sustained over
    SUSTAIN_BINS consecutive lines while requests waited, divided by the mean generated
    tokens per finished request (generation_tokens_total ÷ request_success_total over the
    window); the spread of those lines is its uncertainty."""
    pts = [
        (float(r["t"]), r["gen_tps"], r["waiting"])
        for r in sql.rows(con, "analyses/stats_line_throughput")
        if r["gen_tps"] is not None
    ]
    k = overload.SUSTAIN_BINS
    best: tuple[float, float, float] | None = None
    for i in range(len(pts) - k + 1):
        run = pts[i : i + k]
        if all((w or 0) > 0 for _, _, w in run):
            rates = [float(g) for _, g, _ in run]
            mean = sum(rates) / k
            if mean > 0 and (best is None or mean > best[0]):
                best = (mean, min(rates), max(rates))
    if best is None:
        return None
    gen = sum(float(r["rise"]) for r in rows if r["name"] == "vllm:generation_tokens_total")
    done = sum(
        float(r["rise"])
        for r in rows
        if r["name"] == "vllm:request_success_total"
        and r["finished_reason"] in ("stop", "length", None)
    )
    if not gen or not done:
        return None
    ab = sql.one(
        con, "analyses/aborted_executions_in_window", {"a": ctx.window_start, "b": ctx.window_end}
    )
    if ab is not None and ab["aborted"] > overload.CUT_SHARE * done:
        # aborted work kept the engine busy generating little: its throughput is no capacity
        # (the bins-in-flow-balance rule of overload.capacity_estimate)
        return None
    per = gen / done
    return estimated(
        "capacity_from_throughput",
        "ceiling on Ĉ from the stats line's decode throughput, calls per second",
        best[0] / per,
        "per_s",
        ["vLLM stats log line", "vllm:generation_tokens_total", "vllm:request_success_total"],
        low=best[1] / per,
        high=best[2] / per,
        needs="--capacity or a run.json",
        note=_say("throughput_method", lines=k, peak=best[0], per=per),
    )


def _result_figures(res: Any, present: dict[str, bool]) -> list[Figure]:
    out: list[Figure] = []
    dl, amp = res.delivery, res.amplification
    if dl is not None:
        run = dl.windows[0]
        untimed = "on_time" in run.null_reasons and dl.deadline_s is not None
        out.append(
            measured(
                "delivered_share",
                "calls answered (the gateway log has no durations to check them against D)"
                if untimed
                else "calls answered (D unknown: not checked against the client's deadline)"
                if dl.deadline_s is None
                else "calls delivered (answered within D)",
                run.delivered_share,
                "share",
                ["gateway log"],
                note=_say("calls_of", part=run.delivered, calls=run.calls),
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
    elif not present["gateway"]:
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
                note=_say("retries_note", retries=run_amp.retries, attempts=run_amp.attempts),
            )
        )
    elif run_amp is not None and present["gateway"]:
        out.append(
            measured(
                "retries",
                "retries (attempts after a call's first)",
                float(run_amp.retries),
                "count",
                ["gateway log"],
                note="no execution is linked to these attempts, so no retry share of executions",
            )
        )
    elif not present["gateway"]:
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
    elif not present["steps"]:
        out.append(
            missing(
                "aborted_prefill",
                "computed prefill that went to aborted executions",
                "share",
                NEEDS["steps"],
            )
        )
    ct = res.counters
    if ct is not None:
        w = ct.windows[0]
        label = "prompt-token counter shortfall against prefix-cache queries"
        if w.shortfall is None:  # held, but no value: say why, never "measured: none"
            out.append(
                Figure(
                    key="counter_shortfall",
                    label=label,
                    value=None,
                    unit="share",
                    status="not available",
                    inputs=["metrics"],
                    note=w.null_reasons.get("shortfall")
                    or "the prefix-cache query counter did not rise in the window",
                )
            )
        else:
            out.append(measured("counter_shortfall", label, w.shortfall, "share", ["metrics"]))
    elif not present["prompt_counters"]:
        out.append(
            missing(
                "counter_shortfall",
                "prompt-token counter shortfall",
                "share",
                NEEDS["prompt_counters"],
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
    elif not present["metrics"]:
        out.append(
            missing("health_fired", "engine health signals fired", "count", NEEDS["metrics"])
        )
    return out


def _disagreements(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> list[Disagreement]:
    a, b = ctx.window_start, ctx.window_end
    out: list[Disagreement] = []

    def s(t: Any) -> float | None:
        return None if t is None else float(t) - ctx.t0

    comp = {
        r["source"]: r for r in sql.rows(con, "analyses/completions_by_source", {"a": a, "b": b})
    }
    log, ctr = comp.get("engine log"), comp.get("request_success_total")
    if log and ctr and int(log["samples"]) and int(ctr["samples"]):
        lf, cf = float(log["finished"]), float(ctr["finished"])
        if lf != cf:
            used = "request_success_total" if lf == 0 else "engine log"
            why = (
                "the engine log has no finish line (vLLM 0.32 writes none without"
                " --enable-log-outputs): the counter counts the completions it cannot see"
                if lf == 0
                else "the engine log names each execution; the counter only counts, between scrapes"
            )
            out.append(
                Disagreement(
                    figure="finished requests",
                    values=[
                        SourceValue(
                            source="engine log (finished events)",
                            value=lf,
                            start_s=s(log["t_min"]),
                            end_s=s(log["t_max"]),
                            samples=int(log["samples"]),
                        ),
                        SourceValue(
                            source="vllm:request_success_total (stop, length)",
                            value=cf,
                            start_s=s(ctr["t_min"]),
                            end_s=s(ctr["t_max"]),
                            samples=int(ctr["samples"]),
                        ),
                    ],
                    used=used,
                    why=why,
                )
            )
    fams = {r["family"]: r for r in sql.rows(con, "analyses/waiting_by_family", {"a": a, "b": b})}
    if "stats line" in fams and "metrics" in fams:
        sl, mt = fams["stats line"], fams["metrics"]
        out.append(
            Disagreement(
                figure="requests waiting (mean over samples)",
                values=[
                    SourceValue(
                        source="vLLM stats log line (Waiting)",
                        value=float(sl["mean_v"]),
                        start_s=s(sl["t_min"]),
                        end_s=s(sl["t_max"]),
                        samples=int(sl["samples"]),
                    ),
                    SourceValue(
                        source="vllm:num_requests_waiting (scraped)",
                        value=float(mt["mean_v"]),
                        start_s=s(mt["t_min"]),
                        end_s=s(mt["t_max"]),
                        samples=int(mt["samples"]),
                    ),
                ],
                used="vllm:num_requests_waiting (scraped)",
                why="one series per quantity: the scraped gauge is sampled on a fixed interval"
                " by the same clock as the other metrics; the two are never added together",
            )
        )
    return out


def _late_bins(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    res: Any,
    present: dict[str, bool],
    width: float,
) -> tuple[list[tuple[float, float | None, float]], str | None]:
    """Per bin (start epoch, share of work that missed D, weight): from the gateway log (calls
    by planned arrival not on time) when it has calls, else from the e2e histogram (finished
    requests by finish time)."""
    if ctx.deadline_s is None:
        return [], None
    dl = res.delivery
    if dl is not None and dl.series:
        pts = [
            (
                ctx.t0 + b.start_s,
                None if b.on_time_share is None else 1 - b.on_time_share,
                float(b.calls),
            )
            for b in dl.series
        ]
        if any(w for _, sh, w in pts if sh is not None):
            return pts, "calls not on time (gateway log, by planned arrival)"
    if present["hist_e2e"]:
        bins = ctx.bins(width, tag="late")
        pts = histograms.late_share_bins(con, bins, ctx.deadline_s)
        if any(w for _, _, w in pts):
            return pts, "finished requests over D (e2e histogram, by finish time)"
    return [], None


def _failure_run(
    pts: list[tuple[float, float | None, float]], start: float | None
) -> tuple[int, int, bool] | None:
    """The failure window in bins: from the first failing bin (at or after `start`, the
    overload's start when known) for as long as the failure signal lasts; whether it lasts
    to the end of the data. Bins with fewer than MIN_CALLS calls or requests carry no signal
    either way; a failure followed only by such bins is not judged (None)."""
    idx = [i for i, (_, sh, w) in enumerate(pts) if w >= MIN_CALLS and sh is not None]
    if not idx:
        return None
    first = next(
        (
            i
            for i in idx
            if (start is None or pts[i][0] >= start - 1e-9) and (pts[i][1] or 0) > LATE_SHARE
        ),
        None,
    )
    if first is None:
        return None
    last = first
    ended = False
    for i in idx:
        if i <= first:
            continue
        if (pts[i][1] or 0) > ON_TIME_AGAIN:
            last = i
        else:
            ended = True
            break
    if ended:
        return first, last, False
    data = [i for i, (_, _, w) in enumerate(pts) if w > 0]
    if data and data[-1] - last > 1:
        return None  # later bins are too thin to say whether it lasted
    return first, last, True


def assess(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    res: Any,
    metric_names: frozenset[str] | None = None,
) -> Assessment:
    names = (
        metric_names
        if metric_names is not None
        else frozenset(r["name"] for r in sql.rows(con, "analyses/metric_names_present"))
    )
    scrapes = histograms.scrapes(con)
    present = present_inputs(con, ctx, names, scrapes)
    rises = metrics_figures.window_rises(con, ctx)  # read by three figures, once
    win = _with_analysis_span(coverage.window(con), ctx)
    figures = _ctx_figures(ctx)
    series, width = overload.series(con, ctx.t0, ctx.t_end)
    cap = ctx.capacity
    if cap is not None and (ctx.capacity_source or "").startswith("estimated:"):
        # the detection's estimate: the same figure with its spread and method
        full, value = _capacity_figure(ctx, series, width, res)
        if value is not None and math.isclose(value, cap):
            figures = [full if f.key == "capacity" else f for f in figures]
    if cap is None:
        cap_fig, cap = _capacity_figure(ctx, series, width, res)
        figures.append(cap_fig)
    tput = _capacity_from_throughput(con, ctx, rises)
    if tput is not None:
        figures.append(tput)
        if cap is None:
            cap = tput.value
    dr = _load_stopped(drain.measure(con, ctx), ctx, series, width, cap)
    latency = histograms.latency(con, ctx, scrapes) if ctx.has_metrics else []
    rec = res.delivery.recovery if res.delivery is not None else None
    late, late_src = _late_bins(con, ctx, res, present, width)
    ov = next((p for p in ctx.phases if p.name == ctx.overload_phase), None)
    fail = _failure_run(late, None if ov is None else ctx.t0 + ov.start_s) if late else None
    if ov is None and fail is not None:
        # no overload found, but a failure window: both recovery figures from its start
        start = late[fail[0]][0]
        dr = drain.measure_window(con, ctx, start, start, drain.FROM_FAILURE, from_peak=True)
    recovered_after: float | None = None
    recovered_src: str | None = None
    w_text = _window_text(win, ctx)

    if rec is not None and rec.verdict != "insufficient data":
        verdict, suspected, basis, reasons, evidence = _from_gateway(ctx, res, rec, late, w_text)
        recovered_after = rec.recovery_s
        recovered_src = (
            "gateway log: first 30 s planned-arrival bin from which every bin is >= 90 % on time"
        )
        figures += _gateway_figures(rec)
    elif fail is not None:
        verdict, suspected, basis, reasons, evidence, recovered_after, extra = _from_failure(
            ctx, late, late_src or "", fail, series, cap, width, w_text, present["gateway"]
        )
        recovered_src = None if recovered_after is None else late_src
        figures += extra
    elif ov is not None:
        verdict, suspected, basis, reasons, extra = _from_rates(
            ctx, series, width, cap, present["gateway"]
        )
        if verdict == "draining" and dr.after_load_ended and dr.drained_after_s is not None:
            # the lab's retries-no-cancel without D: the backlog emptied in the data's last
            # second, after the drill had stopped sending; that is no service under load
            reasons.append(
                _say(
                    "drained_only_after_load",
                    drained_after_s=dr.drained_after_s,
                    has_e2e=present["hist_e2e"],
                )
            )
        evidence = _say("over", what=basis, window=w_text)
        figures += extra
        if verdict == "cannot tell":
            need = _say(
                "rates_need",
                capacity_known=cap is not None,
                after_bins=MIN_AFTER_BINS,
                deadline_known=ctx.deadline_s is not None,
                has_gateway=present["gateway"],
            )
            return _finish(
                con,
                ctx,
                res,
                present,
                win,
                figures,
                series,
                dr,
                latency,
                rises,
                verdict,
                suspected,
                basis,
                evidence,
                reasons,
                None,
                None,
                need,
            )
    else:
        verdict, suspected, basis, reasons, evidence, missing_in, extra = _no_overload(
            con, ctx, res, present, win, series, w_text
        )
        figures += extra
        return _finish(
            con,
            ctx,
            res,
            present,
            win,
            figures,
            series,
            dr,
            latency,
            rises,
            verdict,
            suspected,
            basis,
            evidence,
            reasons,
            None,
            None,
            missing_in,
        )
    return _finish(
        con,
        ctx,
        res,
        present,
        win,
        figures,
        series,
        dr,
        latency,
        rises,
        verdict,
        suspected,
        basis,
        evidence,
        reasons,
        recovered_after,
        recovered_src,
        None,
    )


def _finish(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    res: Any,
    present: dict[str, bool],
    win: DataWindow,
    figures: list[Figure],
    series: overload.Series,
    dr: Drain,
    latency: list[LatencyHistogram],
    rises: list[dict[str, Any]],
    verdict: VerdictName,
    suspected: bool,
    basis: str,
    evidence: str,
    reasons: list[str],
    recovered_after: float | None,
    recovered_src: str | None,
    missing_in: str | None,
) -> Assessment:
    figures.extend(_result_figures(res, present))
    from_counters = _aborted_prefill_from_counters(con, ctx, rises)
    if from_counters is not None:
        figures = [
            from_counters if f.key == "aborted_prefill" and f.status == "not available" else f
            for f in figures
        ]
    figures.extend(metrics_figures.figures(con, ctx, series.mean_prompt, present, rises))
    timed = dr.null_reason != drain.NO_OVERLOAD  # an overload or a failure window to time
    if ctx.overload_phase is not None or recovered_after is not None or timed:
        figures.append(_recovered_figure(recovered_after, recovered_src, verdict, ctx, present))
        figures.append(_drain_figure(dr))
    trend = _waiting_trend(ctx, series)
    if trend is not None:
        figures.append(trend)
    late_answers = _late_answer_figure(con, ctx)
    if late_answers is not None:
        figures.append(late_answers)
    for h in latency:
        figures.extend(_latency_figures(h))
    settle = sorted(
        {f.needs for f in figures if f.needs and f.status in ("estimated", "not available")}
    )
    if missing_in is not None and missing_in not in settle:
        settle.insert(0, missing_in)
    return Assessment(
        verdict=verdict,
        suspected=suspected,
        basis=basis,
        evidence=evidence,
        window=win,
        missing_input=missing_in,
        reasons=reasons,
        recovered_after_s=recovered_after,
        recovered_source=recovered_src,
        drain=None if dr.null_reason == drain.NO_OVERLOAD else dr,
        figures=figures,
        disagreements=_disagreements(con, ctx),
        latency=latency,
        present=sorted(k for k, v in present.items() if v),
        settle=settle,
    )


DOWN: tuple[VerdictName, ...] = ("metastable", "overloaded", "draining", "failing")


def _recovered_figure(
    rec: float | None,
    src: str | None,
    verdict: VerdictName,
    ctx: RunContext,
    present: dict[str, bool],
) -> Figure:
    """`recovered after`, from the same evidence table as the verdict: a run the verdict
    calls down did not recover (a finding, not a gap); otherwise, when no figure came out,
    the note names only an input the workspace lacks (never "a gateway log" with one)."""
    label = "recovered after (on-time service again after the overload)"
    if rec is not None:
        make = estimated if src and src.startswith("finished requests") else measured
        return make("recovered_after", label, rec, "s", [src or "gateway log"])
    if verdict in DOWN:
        return measured(
            "recovered_after",
            label,
            None,
            "s",
            [],
            note=_say("not_recovered", verdict=verdict),
        )
    return missing("recovered_after", label, "s", _recovered_needs(ctx, present))


def _recovered_needs(ctx: RunContext, present: dict[str, bool]) -> str:
    """What `recovered after` lacks: D to judge on time by, else an on-time signal (a
    gateway log, or the e2e histogram), else, with both held, enough calls per bin."""
    if ctx.deadline_s is None:
        lacks = "deadline"
    elif not present.get("gateway") and not present.get("hist_e2e"):
        lacks = "signal"
    else:
        lacks = "calls"
    return _say("recovered_needs", lacks=lacks, min_calls=MIN_CALLS)


QUIET = 0.1  # a bin with arrivals under this share of Ĉ carries no load


def _load_stopped(
    dr: Drain, ctx: RunContext, s: overload.Series, width: float, cap: float | None
) -> Drain:
    """Detected phases end with the data, so the drain cannot tell from them that the load had
    stopped; the arrival series can: the backlog drained only once arrivals had fallen under
    QUIET × Ĉ for good (the lab's drills end with 30 s without new calls)."""
    ov_end = ctx.overload_end()
    if dr.drained_after_s is None or dr.after_load_ended or s.arrivals is None or ov_end is None:
        return dr
    floor = QUIET * cap if cap else 0.0
    busy = [t + width for t, a in zip(s.start_s, s.arrivals, strict=True) if a > floor]
    if busy and ov_end + dr.drained_after_s >= ctx.t0 + max(busy):
        return dr.model_copy(update={"after_load_ended": True})
    return dr


def _drain_figure(dr: Drain) -> Figure:
    if dr.drained_after_s is None:
        return Figure(
            key="drained_after",
            label="drained after (backlog back to its pre-pulse level)",
            value=None,
            unit="s",
            status="not available",
            inputs=[dr.source] if dr.source else [],
            note=dr.null_reason,
        )
    return measured(
        "drained_after",
        "drained after (backlog back to its pre-pulse level)",
        dr.drained_after_s,
        "s",
        [dr.source or "backlog"],
        note=_say(
            "drain_note",
            pre_level=dr.pre_level,
            peak=dr.peak,
            after_load_ended=dr.after_load_ended,
        ),
    )


def _waiting_trend(ctx: RunContext, s: overload.Series) -> Figure | None:
    """The waiting queue's trend: the least-squares slope of the per-bin waiting count
    after the overload (over the whole window without one), per second."""
    if s.queue is None or len(s.queue) < 2:
        return None
    ov_end = ctx.overload_end()
    cut = ctx.s(ov_end) if ov_end is not None else None
    pts = [(t, q) for t, q in zip(s.start_s, s.queue, strict=True) if cut is None or t >= cut]
    if len(pts) < MIN_TREND_BINS:
        return None
    mt = sum(t for t, _ in pts) / len(pts)
    mq = sum(q for _, q in pts) / len(pts)
    den = sum((t - mt) ** 2 for t, _ in pts)
    slope = sum((t - mt) * (q - mq) for t, q in pts) / den if den else 0.0
    return measured(
        "waiting_trend",
        _say(
            "waiting_trend_label",
            attempts=s.queue_source == "attempts in flight",
            after_overload=cut is not None,
        ),
        slope,
        "per_s",
        [s.queue_source or "waiting count"],
        note=_say("waiting_trend_note", bins=len(pts), first=pts[0][1], last=pts[-1][1]),
    )


def _late_answer_figure(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> Figure | None:
    if not ctx.has_proxy or ctx.deadline_s is None:
        return None
    r = sql.one(con, "analyses/answers_after_deadline", {"deadline_s": ctx.deadline_s})
    if r is None or not r["attempts_late"]:
        return None
    return measured(
        "answered_after_deadline",
        "attempts logged as delivered after D (not counted as deliveries)",
        float(r["attempts_late"]),
        "count",
        ["gateway log"],
        note=_say("late_answers_note", calls_only_late=int(r["calls_only_late"])),
    )


def _latency_figures(h: LatencyHistogram) -> list[Figure]:
    run = next((w for w in h.windows if w.window == "run"), None)
    if run is None or not run.percentiles:
        return [
            Figure(
                key=f"{h.key}_p90",
                label=f"{h.label}, p90 (histogram estimate)",
                value=None,
                unit="s",
                status="not available",
                inputs=[h.metric],
                note=h.null_reason,
            )
        ]
    out = []
    for p in run.percentiles:
        out.append(
            estimated(
                f"{h.key}_p{round(p.q * 100)}",
                f"{h.label}, p{round(p.q * 100)} (histogram estimate)",
                p.value,
                "s",
                [h.metric],
                low=p.low,
                high=p.high,
                note=_say(
                    "bucket_note",
                    low=p.low,
                    high=p.high,
                    change=h.change if h.change and p.q == 0.9 else None,
                ),
            )
        )
    return out


SAME_SPAN_S = 2.0  # windows closer than this (whole-second log times) are the same span


def _with_analysis_span(win: DataWindow, ctx: RunContext) -> DataWindow:
    """The verdict's window is where the load-carrying sources overlap; the analyses run over
    the run context's window (the Run line), which also takes in records outside that overlap
    (an isolated abort line, a source's last seconds). When the two differ, the window's note
    says by how much and why, so the verdict line and the Run line never disagree silently."""
    if win.start is None or win.end is None:
        return win
    before = win.start - ctx.window_start
    after = ctx.window_end - win.end
    if before < SAME_SPAN_S and after < SAME_SPAN_S:
        return win
    note = _say(
        "window_note",
        note=win.note,
        before=before if before >= SAME_SPAN_S else None,
        after=after if after >= SAME_SPAN_S else None,
        outside=[s.label for s in win.sources if not s.carries_load],
    )
    return win.model_copy(update={"note": note})


def _window_text(win: DataWindow, ctx: RunContext) -> str:
    return _say(
        "window_text",
        start=win.start,
        end=win.end,
        start_bound_by=win.start_bound_by,
        end_bound_by=win.end_bound_by,
    )


def _gateway_figures(rec: Any) -> list[Figure]:
    return [
        measured(
            "calls_after",
            "calls arriving after the overload (× Ĉ)",
            rec.calls_x_capacity_after,
            "x_capacity",
            ["gateway log"],
        ),
        measured(
            "accepted_after",
            "executions accepted after the overload (× Ĉ)",
            rec.accepted_x_capacity_after,
            "x_capacity",
            [rec.accepted_source or "gateway log"],
        ),
    ]


def _from_gateway(
    ctx: RunContext, res: Any, rec: Any, late: list[tuple[float, float | None, float]], w_text: str
) -> tuple[VerdictName, bool, str, list[str], str]:
    verdict: VerdictName = rec.verdict
    suspected = False
    basis = "the gateway log's calls and on-time share after the overload"
    reasons = [rec.because]
    ov = ctx.overload_phase
    pulse = next((w for w in res.delivery.windows if w.window == ov), None)
    if pulse is not None and pulse.calls and pulse.on_time_share == 0:
        reasons.insert(0, _say("incident_pulse", calls=pulse.calls, phase=ov))
    if verdict == "metastable" and (rec.accepted_x_capacity_after or 0.0) <= 1.0:
        # delivery's late-to-the-end rule (its `because` says so): executions stayed within
        # Ĉ, so that retries sustain it is a suspicion
        suspected = True
    evidence = _say("gateway_evidence", window=w_text)
    return verdict, suspected, basis, reasons, evidence


def _from_failure(
    ctx: RunContext,
    late: list[tuple[float, float | None, float]],
    src: str,
    fail: tuple[int, int, bool],
    s: overload.Series,
    cap: float | None,
    width: float,
    w_text: str,
    has_gateway: bool,
) -> tuple[VerdictName, bool, str, list[str], str, float | None, list[Figure]]:
    first, last, to_end = fail
    a = late[first][0]
    b = late[last][0] + width
    ov_end = ctx.overload_end()
    shares = [sh for _, sh, w in late[first : last + 1] if w >= MIN_CALLS and sh is not None]
    mean_late = sum(shares) / len(shares) if shares else None
    fig = estimated(
        "failure_window",
        "failure window (while the failure signal lasts)",
        b - a,
        "window",
        [src],
        low=a - ctx.t0,
        high=b - ctx.t0,
        note=_say(
            "failure_window_note",
            width=width,
            late_share=LATE_SHARE,
            on_time_again=ON_TIME_AGAIN,
        ),
    )
    evidence = _say("over", what=src, window=w_text)
    arr_tail = s.arrivals[-3:] if s.arrivals else None
    ax = (sum(arr_tail) / len(arr_tail) / cap) if arr_tail and cap else None
    if to_end:
        tail = [sh for _, sh, w in late if w >= MIN_CALLS and sh is not None][-3:]
        if ax is not None and ax > 1:
            return (
                "overloaded",
                True,
                _say("late_to_end_basis", source=src, arrivals_above=True),
                [_say("late_to_end_overloaded", last=tail, arrivals_x=ax)],
                evidence,
                None,
                [fig],
            )
        return (
            "metastable",
            True,
            _say("late_to_end_basis", source=src, arrivals_above=False),
            [
                _say(
                    "late_to_end_metastable",
                    last=tail,
                    mean_late=mean_late or 0,
                    arrivals_x=ax,
                    has_gateway=has_gateway,
                )
            ],
            evidence,
            None,
            [fig],
        )
    ref = ov_end if ov_end is not None else a  # no overload named: from the failure's start
    rec_t = b
    recovered_after = max(0.0, rec_t - ref)
    return (
        "recovered",
        src.startswith("finished requests"),
        _say("failure_ended_basis", source=src),
        [
            _say(
                "incident_recovered",
                mean_late=mean_late or 0,
                start_s=a - ctx.t0,
                end_s=b - ctx.t0,
                on_time_again=ON_TIME_AGAIN,
                recovered_after=recovered_after,
            )
        ],
        evidence,
        recovered_after,
        [fig],
    )


def _no_overload(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    res: Any,
    present: dict[str, bool],
    win: DataWindow,
    s: overload.Series,
    w_text: str,
) -> tuple[VerdictName, bool, str, list[str], str, str | None, list[Figure]]:
    """No overload and no failure signal: healthy only with evidence of delivery."""
    dl = res.delivery
    if dl is not None:
        run = dl.windows[0]
        ev = _say(
            "delivered_evidence",
            deadline_known=ctx.deadline_s is not None,
            calls=run.calls,
            window=w_text,
        )
        if run.calls and run.delivered == 0:
            return (
                "failing",
                False,
                "the gateway log: no call delivered",
                [
                    _say(
                        "no_call_delivered",
                        calls=run.calls,
                        deadline_s=ctx.deadline_s,
                        **_attempts(res),
                    )
                ],
                ev,
                None,
                [],
            )
        if run.calls < MIN_CALLS:
            return (
                "cannot tell",
                False,
                _say("too_few_calls_basis", min_calls=MIN_CALLS),
                [
                    _say(
                        "too_few_calls",
                        delivered=run.delivered,
                        calls=run.calls,
                        min_calls=MIN_CALLS,
                    )
                ],
                ev,
                _say("more_calls_need", min_calls=MIN_CALLS),
                [],
            )
        share = run.delivered_share or 0.0
        if share < HEALTHY_SHARE:
            return (
                "failing",
                False,
                "the gateway log's delivered share",
                [_say("low_share", share=share, calls=run.calls, healthy_share=HEALTHY_SHARE)],
                ev,
                None,
                [],
            )
        answered = _say("calls_answered", share=share, calls=run.calls)
        if ctx.deadline_s is None:
            return _no_deadline(ev, answered)
        if run.on_time is None:  # delivery.UNTIMED: every answer looked instant
            return _no_deadline(
                ev,
                answered,
                "no request durations in the gateway log",
                UNTIMED_NEED,
            )
        return (
            "healthy",
            False,
            "the gateway log's delivered share",
            [_say("healthy_gateway", share=share, calls=run.calls)],
            ev,
            None,
            [],
        )
    comp = {
        r["source"]: r
        for r in sql.rows(
            con, "analyses/completions_by_source", {"a": ctx.window_start, "b": ctx.window_end}
        )
    }
    log = comp.get("engine log")
    trace_load = ctx.has_events and any(
        x.family == "events" and x.carries_load for x in win.sources
    )
    if log and trace_load and int(log["finished"]) >= MIN_CALLS:
        fin, ab = int(log["finished"]), int(log["aborted"])
        if fin >= ab and ctx.deadline_s is None:
            return _no_deadline(
                _say("trace_evidence", window=w_text),
                _say("executions_done", finished=fin, aborted=ab),
            )
        if fin >= ab:
            return (
                "healthy",
                True,
                "the engine trace's finished executions",
                [_say("healthy_trace", finished=fin, aborted=ab)],
                _say("trace_evidence", window=w_text),
                None,
                [],
            )
    ctr = comp.get("request_success_total")
    scrapes = int(ctr["samples"]) if ctr else 0
    if present["success"] and scrapes >= MIN_SCRAPES:
        done = float(ctr["finished"]) if ctr else 0.0
        ev = _say("counter_evidence", scrapes=scrapes, window=w_text)
        if done > 0 and ctx.deadline_s is None:
            return _no_deadline(ev, _say("requests_completed", done=done))
        if done > 0:
            return (
                "healthy",
                True,
                "completions from vllm:request_success_total",
                [_say("healthy_counter", done=done)],
                ev,
                None,
                [],
            )
        busy = (s.queue or [0.0])[-1] if s.queue else 0.0
        if busy > 0:
            return (
                "failing",
                True,
                "no completion while work waited",
                [_say("no_completion_while_waiting", scrapes=scrapes, waiting=busy)],
                ev,
                None,
                [],
            )
        return (
            "cannot tell",
            False,
            "an idle window",
            [_say("idle", scrapes=scrapes)],
            ev,
            "a gateway log (attempt outcomes) over a window with traffic",
            [],
        )
    # Not enough evidence of delivery: say which one input would settle it.
    aborts = int(log["aborted"]) if log else 0
    gauges = present["metrics"] or any(x.family == "stats line" for x in win.sources)
    if present["success"]:
        need = _say("scrapes_need", min_scrapes=MIN_SCRAPES)
    elif gauges:
        need = "vllm:request_success_total (vLLM /metrics) or a gateway log"
    else:
        need = GATEWAY
    return (
        "cannot tell",
        False,
        "no evidence of delivery",
        [
            _say(
                "no_evidence",
                aborts=aborts,
                scrapes=scrapes if present["success"] else None,
                min_scrapes=MIN_SCRAPES,
                gauges_only=gauges,
            )
        ],
        _say("no_evidence_evidence", window=w_text),
        need,
        [],
    )


def _no_deadline(
    evidence: str,
    what: str,
    lacking: str = "D unknown",
    need: str = "D, the client deadline (--deadline or a run.json)",
) -> tuple[VerdictName, bool, str, list[str], str, str | None, list[Figure]]:
    """Answers or completions, but no client deadline to judge them by (or, from a gateway
    log without durations, no time to judge against it): a pulse of late answers would look
    healthy, so the verdict cannot tell (the lab's 9 s pulses at 2.7 Ĉ were called healthy
    from vLLM's log and Prometheus alone, and from nginx's `combined` log with D given)."""
    return (
        "cannot tell",
        False,
        "work done, but no deadline to judge it by"
        if lacking == "D unknown"
        else "work done, but no duration to judge it by",
        [_say("no_deadline", what=what, lacking=lacking)],
        evidence,
        need,
        [],
    )


def _attempts(res: Any) -> dict[str, int | None]:
    """The gateway log's attempts and retries (None without the amplification analysis)."""
    amp = res.amplification
    if amp is None:
        return {"attempts": None, "retries": None}
    w = amp.windows[0]
    return {"attempts": w.attempts, "retries": w.retries}


def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def _from_rates(
    ctx: RunContext, s: overload.Series, width: float, cap: float | None, has_gateway: bool
) -> tuple[VerdictName, bool, str, list[str], list[Figure]]:
    src = [x for x in (s.arrivals_source, s.completions_source, s.queue_source) if x]
    kind = estimated if s.arrivals_source and "estimated" in s.arrivals_source else measured
    ov_end = ctx.overload_end()
    assert ov_end is not None
    ov_end_s = ctx.s(ov_end)
    idx = [i for i, t in enumerate(s.start_s) if t >= ov_end_s - 1e-9 and t < ctx.s(ctx.t_end)]
    tail = "after the overload"
    if ctx.s(ctx.t_end) - ov_end_s < MIN_AFTER_BINS * width:
        idx = []  # too little data after the overload to judge it: judge the end instead
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
            needs=None if has_gateway else GATEWAY,
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
            _say("waiting_last_bin_label", width=width),
            q_end,
            "count",
            [s.queue_source or "none"],
        ),
    ]
    words = _say(
        "rates",
        tail=tail,
        arrivals_x=ax,
        completions_x=cx,
        waiting=q_end,
        width=width,
        sources=src,
    )
    basis = "rates " + tail + " from " + (s.arrivals_source or "the queue")
    if cx is not None and cx < COLLAPSE and ((q_end or 0) > 0 or (ax or 0) > COLLAPSE):
        return (
            "metastable",
            True,
            basis,
            [_say("collapsed", collapse=COLLAPSE, rates=words, has_gateway=has_gateway)],
            extra,
        )
    if q_end is not None and q_end < 1 and tail == "after the overload":
        return "recovered", True, basis, [_say("queue_emptied", rates=words)], extra
    if cap is None or (ax is None and cx is None):
        return (
            "cannot tell",
            False,
            basis,
            [_say("cannot_judge_rates", capacity_known=cap is not None, tail=tail, rates=words)],
            extra,
        )
    if ax is not None and ax > 1:
        return "overloaded", True, basis, [_say("arrivals_above", rates=words)], extra
    return (
        "draining",
        True,
        basis,
        [_say("still_draining", rates=words)],
        extra,
    )
