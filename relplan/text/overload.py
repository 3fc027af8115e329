"""The words of the overload detection (relplan/analyses/overload.py): how Ĉ was estimated
(`method`, `rule`), where an arrival series or D came from, and why a phase is the overload.

The analysis names each sentence by a code (`overload.Said`) with its numbers; this table
words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable

from relplan.values import fixed, num, percent, plural, short, sig


def admissions_source(mean_prompt: float) -> str:
    return (
        "admissions estimated from prefix_cache_queries ÷ mean prompt length"
        f" ({num(mean_prompt)} tokens) plus the waiting gauge's growth"
    )


def standing_method(
    source: str | None,
    bins: int,
    width: float,
    queue_source: str | None,
    cut_share: float,
    collapse: float,
    low: float,
    high: float,
    scale: tuple[float, float] | None,
) -> str:
    """Ĉ as the median completion rate of the bins under a standing queue; `scale`: the
    lowest and highest weight of a bin's rate by its prompt share computed, when any is < 1."""
    scaled = (
        "; each bin's rate weighed by the share of its queried prompt tokens the engine"
        " computed (prefix-cache queries - hits) against the calm bins' share"
        f" (×{fixed(scale[0], 2)}–×{fixed(scale[1], 2)}: retried prompts served from the prefix"
        " cache make a completion cheaper than a fresh call; leans low where decode is"
        " much of the work)"
        if scale is not None
        else ""
    )
    return (
        f"median completion rate ({source}) over {bins} bins of"
        f" {short(width)} s in each of which work waited ({queue_source}), at most"
        f" {percent(cut_share)} of the work was cut and at least"
        f" {percent(collapse)} of the best such bin completed; bins ranged"
        f" {sig(low, 3)}–{sig(high, 3)}/s" + scaled
    )


def standing_rule(
    source: str | None, bins: int, width: float, queue_source: str | None, weighed: bool
) -> str:
    return (
        f"median {source} rate over {bins} bins of {short(width)} s"
        f" while work was waiting ({queue_source})"
        + (", weighed by the prompt share computed" if weighed else "")
    )


def _spread(bins: int, low: float, high: float) -> str:
    return f"bins ranged {sig(low, 3)}–{sig(high, 3)}/s" if bins > 1 else "one bin, so no spread"


def flow_method(
    source: str | None,
    bins: int,
    width: float,
    flow: float,
    min_busy: float,
    low: float,
    high: float,
) -> str:
    return (
        f"utilization law: the highest completion rate ({source})"
        f" per busy second of the engine (vLLM's iteration elapsed times) over"
        f" {plural(bins, 'calm bin')} of {short(width)} s in flow balance (nothing waiting,"
        f" completions within {percent(flow)} of arrivals, busy at least {percent(min_busy)});"
        f" {_spread(bins, low, high)}; batching grows with load,"
        " so the most loaded bin is the closest to capacity; low when no bin reached the"
        " engine's limit"
    )


def flow_rule(source: str | None, bins: int, width: float) -> str:
    return (
        f"utilization law: the highest {source} rate per busy second"
        f" over {plural(bins, 'calm bin')} of {short(width)} s in flow balance"
    )


def calm_method(
    source: str | None, bins: int, width: float, busy: float, low: float, high: float
) -> str:
    return (
        f"utilization law: completions ({source}) ÷ the engine's busy"
        f" share (vLLM's iteration elapsed times) over {plural(bins, 'calm bin')} of"
        f" {short(width)} s (nothing waiting, busy {percent(busy)} of the time on average; no"
        f" arrival series to show flow balance); {_spread(bins, low, high)}; leans low:"
        " batching under load makes a call cheaper"
    )


def calm_rule(source: str | None, bins: int, width: float) -> str:
    return (
        f"utilization law: {source} ÷ the engine's busy share over"
        f" {plural(bins, 'calm bin')} of {short(width)} s"
    )


def above_capacity(source: str | None, capacity: float) -> str:
    return f"detected: {source} above Ĉ ({sig(capacity, 3)}/s) while work was waiting"


def queue_grew(source: str | None) -> str:
    return f"detected: the waiting queue ({source}) grew"


def busiest_phase(rate: float, calls: bool) -> str:
    src = "calls" if calls else "engine arrivals"
    return f"the phase with the highest arrival rate ({sig(rate, 3)} {src}/s)"


def steady_named(name: str) -> str:
    return f"a phase is named {name!r}: no steady-state window is added"


def deadline_from_attempts(at_mode: int, gone: int, mode: float) -> str:
    return (
        f"from the data: {num(at_mode)} of {num(gone)} attempts the client left"
        f" lasted {short(mode)} s"
    )


def deadline_from_retries(at_mode: int, pairs: int, gap: float) -> str:
    return (
        f"from the data, an upper bound: {num(at_mode)} of {num(pairs)} retries started"
        f" {short(gap)} s after the previous attempt of their call, which was still running"
        f" (the client left it at D, then waited): D <= {short(gap)} s"
    )


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        admissions_source,
        standing_method,
        standing_rule,
        flow_method,
        flow_rule,
        calm_method,
        calm_rule,
        above_capacity,
        queue_grew,
        busiest_phase,
        steady_named,
        deadline_from_attempts,
        deadline_from_retries,
    )
}
