"""The verdict's sentences: its reasons, evidence, needs and the notes of its figures.

relplan/analyses/assessment.py decides the verdict and computes its figures; wherever it has
something to say it names a sentence (`Said`, a Literal of the codes in `SENTENCES` below)
with the numbers and names it rests on, and this module words it (relplan/analyses/wording.py:
reached by name, so the analyses never import relplan.text). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from relplan.analyses.assessment import GATEWAY, NEEDS
from relplan.values import clock_span, fixed, num, percent, short, sig, sig_grouped

# --- figures' notes and labels --------------------------------------------------------------


def capacity_ramp_method(bound: str) -> str:
    return f"method: the highest stage rate whose queue did not grow ({bound})"


def aborted_prefill_method(finished: float, computed: float, aborted: int) -> str:
    return (
        f"method: 1 - {num(finished)} prompt tokens computed for finished requests ÷"
        f" {num(computed)} computed in all (prefix-cache queries - hits); "
        f"{num(aborted)} executions aborted by the engine log's abort lines"
        f" ({num(computed - finished)} tokens, {num((computed - finished) / aborted)} each;"
        " work still running at the end of the data counts here too)"
    )


def throughput_method(lines: int, peak: float, per: float) -> str:
    return (
        f"method: peak generation throughput sustained over {lines} stats lines while"
        f" requests waited ({num(peak, 1)} tokens/s) ÷ {num(per, 1)} generated tokens per"
        " finished request; it weighs decode only, which batches, and no prefill, so it reads"
        " high: a ceiling, not the Ĉ the verdict uses"
    )


def not_recovered(verdict: str) -> str:
    return f"not recovered by the end of the data (the verdict: {verdict})"


def recovered_needs(lacks: Literal["deadline", "signal", "calls"], min_calls: int) -> str:
    """What `recovered after` lacks: D, an on-time signal, or enough calls per bin."""
    if lacks == "deadline":
        return "D, the client deadline (--deadline or a run.json)"
    if lacks == "signal":
        return f"{GATEWAY}, or {NEEDS['hist_e2e']}"
    return (
        f"at least {min_calls} calls or finished requests per 30 s bin after the overload"
        " (the on-time signal the workspace holds has fewer)"
    )


def drain_note(pre_level: float | None, peak: float | None, after_load_ended: bool) -> str:
    return f"pre-pulse level {fixed(pre_level, 1)}, peak {num(peak)}" + (
        ", only once the load stopped" if after_load_ended else ""
    )


def waiting_trend_label(attempts: bool, after_overload: bool) -> str:
    # a gateway log alone has no queue: its series is the attempts in flight, named so
    what = "attempts in flight" if attempts else "waiting queue"
    where = "after the overload" if after_overload else "over the window"
    return f"{what} trend {where} (change per second)"


def waiting_trend_note(bins: int, first: float, last: float) -> str:
    return (
        f"least-squares slope over {bins} bins; {num(first)} waiting in the first,"
        f" {num(last)} in the last"
    )


def late_answers_note(calls_only_late: int) -> str:
    return (
        f"{num(calls_only_late)} calls had only such answers: their client had left"
        " at D (with cancellation off the gateway logs 200 for them)"
    )


def window_note(note: str, before: float | None, after: float | None, outside: list[str]) -> str:
    """The verdict window's note when the analysis window starts `before` s earlier or ends
    `after` s later (None: the same span at that end); `outside`: sources carrying no load."""
    parts = []
    if before is not None:
        parts.append(f"starts {sig_grouped(before, 3)} s earlier")
    if after is not None:
        parts.append(f"ends {sig_grouped(after, 3)} s later")
    why = (
        f" (it takes in {', '.join(outside)}, which carry no load data)"
        if outside
        else " (it spans every source, not only their overlap)"
    )
    return f"{note}; the analysis window (the Run line) {' and '.join(parts)}{why}"


def window_text(
    start: float | None, end: float | None, start_bound_by: str, end_bound_by: str
) -> str:
    """The window a verdict's evidence covers, as its evidence line names it."""
    if start is None or end is None:
        return "no window (no load data)"
    bound = (
        start_bound_by if start_bound_by == end_bound_by else f"{start_bound_by} to {end_bound_by}"
    )
    secs = end - start
    length = num(secs) if secs >= 10 else sig(secs, 3)
    return f"{clock_span(start, end)} ({length} s, bounded by {bound})"


def failure_window_note(width: float, late_share: float, on_time_again: float) -> str:
    return (
        f"bins of {short(width)} s with more than {percent(late_share)} missing D, until a bin"
        f" with at most {percent(on_time_again)}"
    )


def waiting_last_bin_label(width: float) -> str:
    return f"work waiting in the data's last {short(width)} s bin (mean)"


# --- the verdict's evidence and basis -------------------------------------------------------


def over(what: str, window: str) -> str:
    """An evidence line: what the verdict rests on, over which window."""
    return f"{what}, over {window}"


def gateway_evidence(window: str) -> str:
    return over("on-time share of calls by planned arrival (gateway log)", window)


def delivered_evidence(deadline_known: bool, calls: int, window: str) -> str:
    kind = "delivered" if deadline_known else "answered (D unknown)"
    return over(
        f"{kind} share of {num(calls)} call{'s' if calls != 1 else ''} (gateway log)", window
    )


def trace_evidence(window: str) -> str:
    return over("finished executions (engine trace)", window)


def counter_evidence(scrapes: int, window: str) -> str:
    return over(f"completions counted by vllm:request_success_total over {scrapes} scrapes", window)


def no_evidence_evidence(window: str) -> str:
    return over("none (no delivered share, no completions)", window)


def late_to_end_basis(source: str, arrivals_above: bool) -> str:
    return (
        f"{source} and arrivals above Ĉ"
        if arrivals_above
        else f"{source} until the end of the data"
    )


def failure_ended_basis(source: str) -> str:
    return f"{source}: the failure ended"


def too_few_calls_basis(min_calls: int) -> str:
    return f"fewer than {min_calls} calls"


def more_calls_need(min_calls: int) -> str:
    return f"more calls in the gateway log (at least {min_calls})"


def scrapes_need(min_scrapes: int) -> str:
    return f"at least {min_scrapes} scrapes of vLLM /metrics (vllm:request_success_total)"


def rates_need(
    capacity_known: bool, after_bins: int, deadline_known: bool, has_gateway: bool
) -> str:
    """The one input that would settle a `cannot tell` from the rates after an overload."""
    if not deadline_known:
        return (
            "D (--deadline or a run.json)"
            if has_gateway
            else "D (--deadline or a run.json) with the e2e histogram, or a gateway log"
        )
    return (
        "Ĉ (--capacity or a run.json)"
        if not capacity_known
        else f"{after_bins} bins of data after the overload"
    )


# --- the verdict's reasons ------------------------------------------------------------------


def incident_pulse(calls: int, phase: str | None) -> str:
    return (
        f"an incident: none of the {num(calls)} calls planned during the {phase} was answered"
        " on time"
    )


def drained_only_after_load(drained_after_s: float, has_e2e: bool) -> str:
    return (
        f"the backlog reached its pre-pulse level only once the load had stopped"
        f" (drained after {fixed(drained_after_s, 0)} s): that says nothing of service"
        " under load; "
        + (
            "D (--deadline or a run.json) with the e2e histogram the workspace holds"
            if has_e2e
            else f"D (--deadline or a run.json) and {GATEWAY}"
        )
        + " would tell whether the requests were late"
    )


def _last_bins(shares: list[float]) -> str:
    return ", ".join(f"{fixed(x * 100, 0)} %" for x in shares)


def late_to_end_overloaded(last: list[float], arrivals_x: float) -> str:
    return (
        f"work missed D until the end of the data ({_last_bins(last)} in the last bins) while"
        f" arrivals stayed at {fixed(arrivals_x, 2)} × Ĉ"
    )


def late_to_end_metastable(
    last: list[float], mean_late: float, arrivals_x: float | None, has_gateway: bool
) -> str:
    return (
        f"most work missed D until the end of the data ({_last_bins(last)} in the last bins;"
        f" {percent(mean_late)} over the failure window): not recovered, and not"
        " draining"
        + ("" if arrivals_x is None else f"; arrivals at the end {fixed(arrivals_x, 2)} × Ĉ")
        + ("" if has_gateway else "; whether retries sustain it needs a gateway log")
    )


def incident_recovered(
    mean_late: float, start_s: float, end_s: float, on_time_again: float, recovered_after: float
) -> str:
    return (
        f"an incident: {percent(mean_late)} of the work missed D from"
        f" {short(start_s)} s to {short(end_s)} s after t0; from then on at most"
        f" {percent(on_time_again)} did (recovered after {short(recovered_after)} s)"
    )


NONE_FOUND = "no overload found (no bin with arrivals above Ĉ while work waited, no growing queue)"


def _attempts(attempts: int | None, retries: int | None) -> str:
    if attempts is None or retries is None:
        return ""
    return f" ({num(attempts)} attempts, {num(retries)} of them retries)"


def no_call_delivered(
    calls: int, deadline_s: float | None, attempts: int | None, retries: int | None
) -> str:
    return (
        f"0 of {num(calls)} calls delivered"
        + (f" within D = {short(deadline_s)} s" if deadline_s is not None else "")
        + _attempts(attempts, retries)
    )


def too_few_calls(delivered: int, calls: int, min_calls: int) -> str:
    return (
        f"{num(delivered)} of {num(calls)} calls delivered: too few calls to judge"
        f" (at least {min_calls})"
    )


def low_share(share: float, calls: int, healthy_share: float) -> str:
    return (
        f"only {percent(share)} of {num(calls)} calls delivered"
        f" (healthy needs >= {percent(healthy_share)})"
    )


def calls_answered(share: float, calls: int) -> str:
    return f"{percent(share)} of {num(calls)} calls answered"


def healthy_gateway(share: float, calls: int) -> str:
    return f"{percent(share)} of {num(calls)} calls delivered; {NONE_FOUND}"


def executions_done(finished: int, aborted: int) -> str:
    return f"{num(finished)} executions finished and {num(aborted)} aborted"


def healthy_trace(finished: int, aborted: int) -> str:
    return (
        f"{executions_done(finished, aborted)}; {NONE_FOUND}; whether clients"
        " received them needs a gateway log"
    )


def requests_completed(done: float) -> str:
    return f"{num(done)} requests completed (stop or length)"


def healthy_counter(done: float) -> str:
    return (
        f"{requests_completed(done)} and no failure signal; {NONE_FOUND};"
        " completions are not client deliveries"
    )


def no_completion_while_waiting(scrapes: int, waiting: float) -> str:
    return f"no request completed over {scrapes} scrapes while {num(waiting)} waited"


def idle(scrapes: int) -> str:
    return (
        f"no request completed over {scrapes} scrapes and nothing waited: idle, no evidence of"
        " delivery"
    )


def no_evidence(aborts: int, scrapes: int | None, min_scrapes: int, gauges_only: bool) -> str:
    """No evidence of delivery: the engine log's abort lines, the completion counter's too few
    scrapes (`scrapes`, None without the counter) or, with only gauges, that none counts."""
    parts = []
    if aborts:
        parts.append(
            f"{num(aborts)} abort line{'s' if aborts > 1 else ''} in the engine log"
            " (a failure signal, not a rate)"
        )
    if scrapes is not None:
        parts.append(
            f"vllm:request_success_total has {scrapes} scrape{'s' if scrapes != 1 else ''} in the"
            f" window (at least {min_scrapes} needed: a rise needs two)"
        )
    elif gauges_only:
        parts.append(
            "no completion counter: gauges and histograms show load and latency, not delivery"
        )
    return "no evidence of delivery: " + (
        "; ".join(parts) if parts else "no calls, completions or counters"
    )


def no_deadline(what: str, lacking: str) -> str:
    return (
        f"{what}, but with {lacking} nothing says it was in time, and no overload was"
        " found to judge; a pulse of late answers looks like this"
    )


def _x(v: float | None) -> str:
    return "?" if v is None else f"{fixed(v, 2)} ×"


def _n(v: float | None) -> str:
    return "?" if v is None else num(v)


def rates(
    tail: str,
    arrivals_x: float | None,
    completions_x: float | None,
    waiting: float | None,
    width: float,
    sources: list[str],
) -> str:
    """The rates after an overload (or at the end of the data) that the reasons quote."""
    return (
        f"{tail}: arrivals at {_x(arrivals_x)} Ĉ, completions at {_x(completions_x)} Ĉ,"
        f" {_n(waiting)} waiting in the last {short(width)} s bin ({'; '.join(sources)})"
    )


def collapsed(collapse: float, rates: str, has_gateway: bool) -> str:
    return (
        f"completions collapsed below {short(collapse)} × Ĉ while work kept arriving or"
        f" waiting, {rates}"
        + ("" if has_gateway else "; whether the arrivals were retries needs a gateway log")
    )


def queue_emptied(rates: str) -> str:
    return f"the queue emptied {rates}"


def cannot_judge_rates(capacity_known: bool, tail: str, rates: str) -> str:
    why = "Ĉ is unknown" if not capacity_known else "no arrival or completion rate"
    return (
        f"an overload was found but {why}, so nothing says whether the engine keeps up"
        f" {tail} ({rates})"
    )


def arrivals_above(rates: str) -> str:
    return f"arrivals stayed above Ĉ {rates}"


def still_draining(rates: str) -> str:
    return f"work still waited but arrivals stayed within Ĉ {rates}"


def calls_of(part: int, calls: int) -> str:
    return f"{num(part)} of {num(calls)} calls"


def retries_note(retries: int, attempts: int) -> str:
    return f"{num(retries)} retries of {num(attempts)} attempts"


def bucket_note(low: float | None, high: float | None, change: str | None) -> str:
    """A histogram percentile's bucket, and the percentile's change (p90 only)."""
    return f"bucket {short(low)}–{'+Inf' if high is None else short(high)} s" + (
        f"; {change}" if change else ""
    )


def recovered_beside(label: str, value: float | None, verdict: str) -> str:
    """A contradiction: a recovery figure beside a verdict that says the run is down."""
    return f"{label}: {short(value)} s beside the verdict {verdict}"


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        capacity_ramp_method,
        aborted_prefill_method,
        throughput_method,
        not_recovered,
        recovered_needs,
        drain_note,
        waiting_trend_label,
        waiting_trend_note,
        late_answers_note,
        window_note,
        window_text,
        failure_window_note,
        waiting_last_bin_label,
        over,
        gateway_evidence,
        delivered_evidence,
        trace_evidence,
        counter_evidence,
        no_evidence_evidence,
        late_to_end_basis,
        failure_ended_basis,
        too_few_calls_basis,
        more_calls_need,
        scrapes_need,
        rates_need,
        incident_pulse,
        drained_only_after_load,
        late_to_end_overloaded,
        late_to_end_metastable,
        incident_recovered,
        no_call_delivered,
        too_few_calls,
        low_share,
        calls_answered,
        healthy_gateway,
        executions_done,
        healthy_trace,
        requests_completed,
        healthy_counter,
        no_completion_while_waiting,
        idle,
        no_evidence,
        no_deadline,
        rates,
        collapsed,
        queue_emptied,
        cannot_judge_rates,
        arrivals_above,
        still_draining,
        calls_of,
        retries_note,
        bucket_note,
        recovered_beside,
    )
}
