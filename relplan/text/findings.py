"""The finding of each analysis: one sentence from its model, worded here and nowhere else.

An analysis returns data (relplan/analyses/); its registry row names its finding function here
by import string (`finding="relplan.text.findings:delivery"`), and `analyze()` fills the
model's `finding` field with it, so `relplan analyze --json`, the terminal text and the report
all carry the same sentence. Each function is `(model, ctx) -> str`.
"""

from __future__ import annotations

from relplan.alerts.health import HealthResult
from relplan.analyses.amplification import Amplification
from relplan.analyses.capacity import CapacityCalibration
from relplan.analyses.context import RunContext
from relplan.analyses.counters import DEFAULT_THRESHOLD, Counters
from relplan.analyses.delivery import Delivery, Recovery
from relplan.analyses.findings import NOT_RECOVERED
from relplan.analyses.heavy_requests import HeavyRequests
from relplan.analyses.littles_law import LittlesLaw
from relplan.analyses.restarts import Restarts
from relplan.analyses.result import AnalyzeResult
from relplan.analyses.retry_timing import RetryTiming
from relplan.analyses.stuck import StuckEpisodes
from relplan.analyses.wasted_prefill import WastedPrefill
from relplan.values import clock_span, clock_span_list, fixed, num, pct, plural, short, sig


def _sentence(parts: list[str], empty: str) -> str:
    """Parts joined by semicolons, capitalised, with a full stop; `empty` when there are none."""
    if not parts:
        return empty
    text = "; ".join(parts)
    return text[0].upper() + text[1:] + "."


def amplification(a: Amplification, ctx: RunContext) -> str:
    windows = a.windows
    run = windows[0]
    parts = []
    if run.retry_share is not None:
        parts.append(f"retries created {pct(run.retry_share, 0)} of executions")
    if run.executions_per_call is not None and run.attempts_per_call is not None:
        parts.append(
            f"{fixed(run.executions_per_call, 2)} executions and"
            f" {fixed(run.attempts_per_call, 2)} attempts per call"
        )
    peak = max(
        (w for w in windows[1:] if w.accepted_x_capacity is not None),
        key=lambda w: w.accepted_x_capacity or 0.0,
        default=None,
    )
    if peak is not None and peak.accepted_x_capacity is not None:
        parts.append(
            f"accepted executions peaked at {fixed(peak.accepted_x_capacity, 2)} × Ĉ in {peak.window}"
        )
    return _sentence(parts, "Not enough input to measure amplification.")


def _x(v: float | None) -> str:
    return "?" if v is None else f"{fixed(v, 2)} ×"


def recovery_because(rec: Recovery, ctx: RunContext) -> str:
    """The figures behind the recovery verdict, in words (delivery.Recovery.because)."""
    ov_end = ctx.overload_end()
    assert ov_end is not None  # a Recovery exists only after an overload phase
    figures = (
        f"after the {rec.overload_phase} ({clock_span(ov_end, ctx.window_end)}): calls arrived"
        f" at {_x(rec.calls_x_capacity_after)} Ĉ, executions accepted at"
        f" {_x(rec.accepted_x_capacity_after)} Ĉ ({rec.accepted_source or 'no source'}),"
        f" on-time share {pct(rec.on_time_share_after)} over"
        f" {plural(rec.bins_with_enough_calls, 'bin')} of >= {plural(rec.min_calls, 'call')}"
    )
    if rec.bins_with_enough_calls == 0:
        return (
            f"no {short(rec.bin_s)} s bin after the overload has {plural(rec.min_calls, 'call')}; "
            + figures
        )
    if rec.on_time_again_bins is not None:
        figures = (
            f"on time again in {plural(rec.on_time_again_bins, 'bin')} only, fewer than the"
            f" {rec.min_bins} a recovery needs; " + figures
        )
    if rec.verdict == "recovered":
        return (
            f"on-time share >= {pct(rec.threshold, 0)} in every bin from {short(rec.recovery_s)} s"
            " after the overload on; " + figures
        )
    if rec.verdict == "insufficient data":
        return (
            "not recovered, but capacity unknown (give --capacity) or no accepted executions"
            " to judge why; " + figures
        )
    if rec.verdict == "overloaded":
        return "not recovered while calls kept arriving above capacity; " + figures
    if rec.verdict == "metastable" and (rec.accepted_x_capacity_after or 0.0) <= 1.0:
        tail = [b for b in rec.bins if b.calls >= rec.min_calls][-2:]
        return (
            "not recovered: most calls were late until the end of the data (on time in the"
            " last bins: " + ", ".join(pct(b.on_time_share, 0) for b in tail) + "), although"
            " executions were accepted at or below capacity: that is not draining; " + figures
        )
    if rec.verdict == "metastable":
        return (
            "not recovered although calls arrived at or below capacity, while executions"
            " were accepted above it; " + figures
        )
    return "not recovered yet, accepted executions stayed at or below capacity; " + figures


def delivery(d: Delivery, ctx: RunContext) -> str:
    """The delivery finding. It quotes the recovery's `because`, so it words that field too
    (the one worded field of an analysis model besides `finding`)."""
    run = d.windows[0]
    rec = d.recovery
    if rec is not None:
        rec.because = recovery_because(rec, ctx)
    # with D unknown nothing was checked against the client's deadline: answered, not delivered
    done = "delivered" if d.deadline_s is not None else "answered (D unknown)"
    text = (
        f"{pct(run.delivered_share, 0)} of {plural(run.calls, 'call')} {done},"
        f" {pct(run.on_time_share, 0)} on time"
    )
    if rec is None:
        return f"{text}; no recovery verdict: {d.recovery_null_reason}."
    if rec.verdict == "recovered":
        return f"{text}; recovered {short(rec.recovery_s)} s after the {rec.overload_phase}."
    return f"{text}; verdict {rec.verdict.replace('_', ' ')}: {rec.because}."


def wasted_prefill(w: WastedPrefill, ctx: RunContext) -> str:
    run = w.windows[0]
    if run.computed_tokens == 0:
        return "No prompt tokens were computed in the window."
    wasted = run.tokens_by_fate["aborted"] + run.tokens_by_fate["finished_for_nobody"]
    text = (
        f"{pct(run.aborted_share, 0)} of computed prefill went to executions"
        " that were later aborted"
        f" ({pct(wasted / run.computed_tokens, 0)} including responses finished for nobody)"
    )
    if run.before_first_output_share:
        text += (
            f"; {pct(run.before_first_output_share, 0)} was aborted before its first output,"
            " which vLLM's prompt-token counter never records"
        )
    return text + "."


def counters(c: Counters, ctx: RunContext) -> str:
    run = c.windows[0]
    text = (
        f"The prompt-token counter rose {num(run.prompt_rise)} while prefix-cache queries rose"
        f" {num(run.query_rise)}: a shortfall of {pct(run.shortfall)}"
    )
    if run.truth_shortfall is not None:
        text += f" (engine trace: {pct(run.truth_shortfall)})"
    if run.trace_computed_tokens and run.counter_share_of_computed is not None:
        text += (
            f"; the engine trace prefilled {num(run.trace_computed_tokens)} prompt tokens,"
            f" of which the counter shows {pct(run.counter_share_of_computed, 0)}"
        )
    total = [a for a in c.alarms if a.replica is None]
    if total:
        spans = clock_span_list([(ctx.t0 + a.start_s, ctx.t0 + a.end_s) for a in total])
        text += f"; alarm (shortfall > {pct(DEFAULT_THRESHOLD, 0)}) during {spans}"
    else:
        text += "; no alarm"
    if c.query_counts_blocks:
        text += (
            f". Only {c.query_metric} exists: early V1 builds counted blocks there, not tokens,"
            " so compare with care"
        )
    return text + "."


def _window_words(name: str) -> str:
    """`the run`, `the hold`; the detected windows `before` and `after` as `the time after
    the overload`."""
    return f"the time {name} the overload" if name in ("before", "after") else f"the {name}"


def littles_law(e: LittlesLaw, ctx: RunContext) -> str:
    windows = [w for w in e.windows if w.replica is None]
    worst = max(
        (w for w in windows if w.deadline_saturation is not None),
        key=lambda w: w.deadline_saturation or 0.0,
        default=None,
    )
    run = windows[0]
    parts = []
    if run.consistency is not None:
        parts.append(
            f"Little's law holds to {fixed(run.consistency, 2)} over the run ({run.source})"
        )
    if worst is not None and worst.deadline_saturation is not None and worst.waiting_l is not None:
        parts.append(
            f"the waiting queue held {fixed(worst.deadline_saturation, 2)} deadlines' worth of"
            f" arrivals in {_window_words(worst.window)} (L = {fixed(worst.waiting_l, 1)})"
            + (
                "; near 1 means executions wait out their whole deadline"
                if worst.deadline_saturation >= 0.8
                else ""
            )
        )
    return _sentence(parts, "Not enough input for Little's law.")


def retry_timing(f: RetryTiming, ctx: RunContext) -> str:
    run = f.windows[0]
    if run.retries_after_abort == 0:
        if run.retries:
            return (
                f"{num(run.retries)} retries in the attempts table; {num(run.retries_with_execution)}"
                " created an execution after an earlier one, and none of those followed an"
                " execution the engine trace shows aborted."
            )
        return "No retry created an execution after an aborted one."
    text = f"{num(run.retries_after_abort)} retries re-ran an aborted execution"
    if run.gap_median_s is not None:
        text += f"; median {fixed(run.gap_median_s, 1)} s from the abort to the retry's scheduling"
    if run.slack_median_s is not None:
        text += f"; median slack {fixed(run.slack_median_s, 1)} s before the retry's own deadline"
        if run.slack_negative:
            text += f", {num(run.slack_negative)} reached the GPU after their client had gone"
    if run.never_scheduled:
        text += f"; {num(run.never_scheduled)} never scheduled"
    return text + "."


def capacity(g: CapacityCalibration, ctx: RunContext) -> str:
    cap, bound = g.capacity_calls_per_s, g.bound
    if bound == "within" and cap is not None:
        return f"Ĉ ≈ {sig(cap, 3)} calls/s: the waiting queue starts to grow in the next stage."
    if bound == "below_first_stage":
        first = num(g.stages[0].offered_per_s, 3)
        return f"Ĉ lies below the first stage ({first} calls/s): the queue already grows there."
    if bound == "at_or_above_last_stage" and cap is not None:
        return f"Ĉ is at least {sig(cap, 3)} calls/s: the queue did not grow in any stage; ramp higher."
    return "Ĉ unknown: some stage has no waiting-count data."


def restarts(r: Restarts, ctx: RunContext) -> str:
    if not r.restarts:
        return f"No restart in the window on the {r.replicas_seen} pod(s) with restart signals."
    text = (
        f"{r.crashes} crash(es) and {r.planned} planned restart(s) on {r.replicas_seen} pod(s)"
        f" ({fixed(r.crashes_per_replica, 2)} crashes per replica in the window)"
    )
    if r.streams_killed_per_crash is not None:
        text += f"; {fixed(r.streams_killed_per_crash, 1)} streams killed per crash"
    if r.mean_down_to_ready_s is not None:
        text += f"; {fixed(r.mean_down_to_ready_s, 0)} s down per crash"
    if r.crash_loops:
        text += f"; crash loop on {', '.join(r.crash_loops)}"
    if r.rollouts:
        drained = sum(1 for x in r.rollouts if x.drained)
        text += f"; {len(r.rollouts)} rollout(s), {drained} drained"
    cordon = [n.node for n in r.nodes if n.cordon_candidate]
    if cordon:
        text += f"; cordon candidate(s): {', '.join(cordon)}"
    return text + "."


def heavy_requests(h: HeavyRequests, ctx: RunContext) -> str:
    parts = []
    if h.by_prefill:
        top = h.by_prefill[0]
        parts.append(
            f"the heaviest prefill was {top.execution_id} ({num(top.prefill_tokens or 0)} prompt"
            f" tokens computed, {fixed(top.prefill_gpu_s or 0, 1)} s of prefill steps)"
        )
    if h.by_duration:
        top = h.by_duration[0]
        name = top.call_id or top.execution_id
        parts.append(f"the longest ran {fixed(top.duration_s or 0, 1)} s ({name})")
    for x in h.limits:
        if x.tier is None and x.limit is not None and x.cuts_top:
            parts.append(
                f"a {x.measure} limit of {num(x.limit)} would cut {x.cuts_top} of the top"
                f" {x.top_n} and {num(x.cuts_rest)} others"
            )
    words = {
        "first_token": "before their first token",
        "between_tokens": "between tokens",
        "total": "by a total timeout",
    }
    seen = [
        f"{num(t.attempts)} {words[t.kind]} (median {fixed(t.median_s, 1)} s)"
        for t in h.timeouts
        if t.attempts and t.kind in words and t.median_s is not None
    ]
    if seen:
        parts.append("attempts cut " + ", ".join(seen))
    return _sentence(
        parts, "No request stood out: the data holds no steps, durations or cut attempts."
    )


def stuck(s: StuckEpisodes, ctx: RunContext) -> str:
    episodes, range_s = s.episodes, s.range_s
    if not episodes:
        return f"No replica had requests running without generating a token for {short(range_s)} s."
    longest = max(episodes, key=lambda e: e.duration_s)
    caught = [e.streams_caught for e in episodes if e.streams_caught is not None]
    text = (
        f"{len(episodes)} stuck episode{'s' if len(episodes) > 1 else ''}"
        f" (requests running, no token for {short(range_s)} s or more)"
        f" on {len({e.replica for e in episodes})} replica(s); the longest"
        f" {fixed(longest.duration_s, 0)} s on {longest.replica or 'the only replica'}"
    )
    if caught:
        text += f"; {num(sum(caught))} streams caught"
    return text + "."


def fail_on_findings(result: AnalyzeResult, fail_on: list[str]) -> list[str]:
    """`--fail-on`: the findings among `fail_on` that the result shows, each in one sentence
    (conditions: relplan/analyses/findings.py)."""
    out: list[str] = []
    delivery, counters, health = (
        result.get(Delivery),
        result.get(Counters),
        result.get(HealthResult),
    )
    rec = delivery.recovery if delivery else None
    verdict = rec.verdict if rec else None
    for name in fail_on:
        if name in NOT_RECOVERED and verdict == name and rec is not None:
            out.append(f"verdict {verdict}: {rec.because}")
        elif name == "not-recovered" and verdict in NOT_RECOVERED and rec is not None:
            out.append(f"not recovered (verdict {verdict}): {rec.because}")
        elif name == "counter-alarm" and counters and counters.alarms:
            n = len(counters.alarms)
            out.append(f"counter divergence alarm: {n} interval{'s' if n > 1 else ''}")
        elif name == "health" and health:
            fired = sorted({s.signal for s in health.signals if s.intervals})
            if fired:
                out.append(f"engine health signals fired: {', '.join(fired)}")
    return out
