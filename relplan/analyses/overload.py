"""Find the overload when nobody names it (docs/analyses.md, "Detected overload").

Without `--phases` or run.json phases, the windows `before`, `overload` and `after` are
detected from per-bin rates (queries/analyses/load_rates_by_bin.sql):

- arrivals: new calls from the gateway log (attempt 0 by planned time), else executions
  arriving in the engine trace (retries included), else admissions estimated from metrics
  (prefix-cache queries ÷ the mean prompt length while nothing waited, plus the growth of
  the waiting gauge);
- completions: delivered attempts, else finished executions, else
  request_success_total{finished_reason=stop|length};
- queue: the waiting gauge, else executions arrived and not yet scheduled, else attempts in
  flight.

Ĉ (when `--capacity` and run.json give none) is estimated from bins in flow balance, where
the work done in a bin is the work completed in it (capacity_estimate):
1. under a standing queue: the median completion rate over at least SUSTAIN_BINS whole bins in
   each of which work waited, little work was cut (client_gone attempts and aborted
   executions at most CUT_SHARE of the completions: cut work kept the engine busy without
   completing) and at least COLLAPSE of the best such bin completed (below it the engine
   spends itself on work that completes later or never: the bin where the queue forms, work
   cancelled or timed out). The median, not
   the best bins: a backlog that drains completes in a burst work done earlier, and retried
   prompts hit the prefix cache. Each bin's rate is weighed by the share of its queried prompt
   tokens the engine computed against the calm bins' share, where it fell by more than
   CACHE_NOISE (_work_scale): a retried prompt served from the cache is a cheaper completion;
2. else, by the utilization law (capacity = throughput ÷ busy share), from whole bins in which
   nothing waited and the engine was busy at least MIN_BUSY of the time, the busy seconds
   from vLLM's per-iteration log (`iteration elapsed time`,
   --enable-logging-iteration-details): the highest completions ÷ busy seconds among the
   bins in flow balance (completions within FLOW of arrivals; a bin after a pulse completes
   the running backlog and is not). The highest, not the pooled rate: batching grows with
   load, so the most loaded bin prices a call closest to capacity (low when no bin reached the engine's limit).
   Without arrivals to show balance, the pooled rate over the calm bins, which leans low.
The spread of the bins' rates is the estimate's uncertainty. The overload is
the first run of consecutive bins whose arrivals exceed Ĉ while work was waiting and whose
queue reached DEEP_SHARE of the deepest such run's (a ramp's closed-loop levels pass Ĉ with
a request or two waiting long before the pulse);
without an arrival series, the first run of bins in which the waiting queue grew.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Literal

import duckdb

from relplan import sql
from relplan.analyses.windows import Window, window_params
from relplan.analyses.wording import Words

# The sentences of the detection, worded by relplan/text/overload.py (one function per code).
Said = Literal[
    "admissions_source",
    "standing_method",
    "standing_rule",
    "flow_method",
    "flow_rule",
    "calm_method",
    "calm_rule",
    "above_capacity",
    "queue_grew",
    "busiest_phase",
    "steady_named",
    "deadline_from_attempts",
    "deadline_from_retries",
]
_say: Words[Said] = Words("relplan.text.overload")

MIN_BIN_S = 30.0
MAX_DETECT_BINS = 400


@dataclass(frozen=True)
class Detection:
    phases: list[tuple[str, float, float]]  # (name, start_s, end_s) from t0; [] for none
    rule: str  # "" when no overload was found
    capacity: float | None
    capacity_rule: str | None
    arrivals_source: str | None
    completions_source: str | None
    queue_source: str | None
    bin_s: float


@dataclass(frozen=True)
class Series:
    start_s: list[float]
    arrivals: list[float] | None  # per second
    completions: list[float] | None  # per second
    queue: list[float] | None
    arrivals_source: str | None
    completions_source: str | None
    queue_source: str | None
    mean_prompt: float | None
    busy: list[float | None] | None = None  # busy share of the engine(s), 0..1
    cut: list[float] | None = None  # attempts cut by the client + executions aborted, per second
    whole: list[bool] | None = None  # the bin lies wholly inside the data
    # prompt tokens computed (prefix-cache queries - hits) and queried, per bin, from the
    # scrapes; None without prefix-cache hits
    computed: list[float] | None = None
    queried: list[float] | None = None


@dataclass(frozen=True)
class CapacityEstimate:
    rate: float  # calls per second
    low: float  # the lowest bin's rate among those used
    high: float
    start_s: float  # first bin used, seconds from t0
    bins: int
    method: str  # how, in words (the figure's note)
    rule: str  # short, for context.capacity_source


SUSTAIN_BINS = 3
CUT_SHARE = 0.1
MIN_BUSY = 0.2
CACHE_NOISE = 0.1  # a bin's computed share within this of the calm bins' is not weighed
FLOW = 0.1  # a calm bin whose completions are within this of its arrivals is in flow balance
COLLAPSE = 0.5  # a standing-queue bin completing less than this share of the best one wastes work


def _width(span_s: float) -> float:
    w = MIN_BIN_S
    while span_s / w > MAX_DETECT_BINS:
        w *= 2
    return w


def series(con: duckdb.DuckDBPyConnection, t0: float, t_end: float) -> tuple[Series, float]:
    width = _width(max(t_end - t0, 1.0))
    n = max(1, int((t_end - t0) // width) + 1)
    rows = sql.rows(con, "analyses/load_rates_by_bin", {"origin": t0, "width": width, "n": n})
    start = [float(r["start"]) - t0 for r in rows]
    has = {k: any(r[k] for r in rows) for k in ("proxy_calls", "eng_arrived", "m_samples")}
    has_success = any(r["m_success"] for r in rows)
    mean_prompt = _mean_prompt(rows)
    arr: list[float] | None
    comp: list[float] | None
    queue: list[float] | None
    if has["proxy_calls"]:
        arr, a_src = [r["proxy_calls"] / width for r in rows], "new calls in the gateway log"
        comp, c_src = [r["proxy_delivered"] / width for r in rows], "delivered attempts"
    elif has["eng_arrived"]:
        arr = [r["eng_arrived"] / width for r in rows]
        a_src = "executions arriving in the engine trace (retries included)"
        comp, c_src = [r["eng_finished"] / width for r in rows], "finished executions"
        if not any(r["eng_finished"] for r in rows):
            # vLLM 0.32 writes no finish line without --enable-log-outputs: the counter
            # counts the completions the log cannot see; without it they are unknown, not 0.
            if has_success:
                comp = [r["m_success"] / width for r in rows]
                c_src = "request_success_total (the log has no finish lines)"
            else:
                comp, c_src = None, None
    else:
        arr, a_src, comp, c_src = None, None, None, None
    if has["m_samples"]:
        queue = [float(r["m_waiting_mean"] or 0.0) for r in rows]
        q_src = "vllm:num_requests_waiting"
    elif has["eng_arrived"]:
        queue, q_src = [float(r["eng_waiting"]) for r in rows], "executions not yet scheduled"
    elif has["proxy_calls"]:
        queue, q_src = [float(r["proxy_in_flight"]) for r in rows], "attempts in flight"
    else:
        queue, q_src = None, None
    if arr is None and has["m_samples"] and has_success:
        comp, c_src = [r["m_success"] / width for r in rows], "request_success_total"
        if mean_prompt is not None:
            arr, prev = [], 0.0
            for r in rows:
                last = float(r["m_waiting_last"] if r["m_waiting_last"] is not None else prev)
                arr.append(max(0.0, r["m_queries"] / mean_prompt / width + (last - prev) / width))
                prev = last
            a_src = _say("admissions_source", mean_prompt=mean_prompt)
    span = t_end - t0
    busy = [
        None if r["busy_s"] is None else float(r["busy_s"]) / (width * max(1, r["engines"]))
        for r in rows
    ]
    cut = [float(r["cut"]) / width for r in rows]
    whole = [x + width <= span + 1e-9 for x in start]
    has_busy = any(b is not None for b in busy)
    has_hits = any(r["m_hits"] for r in rows)
    computed = [float(r["m_queries"] - r["m_hits"]) for r in rows] if has_hits else None
    queried = [float(r["m_queries"]) for r in rows] if has_hits else None
    return (
        Series(
            start,
            arr,
            comp,
            queue,
            a_src,
            c_src,
            q_src,
            mean_prompt,
            busy if has_busy else None,
            cut,
            whole,
            computed,
            queried,
        ),
        width,
    )


def _mean_prompt(rows: list[dict[str, float]]) -> float | None:
    """Prompt tokens per completed request in the bins where nothing waited (no abort skews
    the prompt counter there)."""
    calm = [r for r in rows if r["m_samples"] and not r["m_waiting_last"] and r["m_success"]]
    tokens, done = sum(r["m_prompt"] for r in calm), sum(r["m_success"] for r in calm)
    return tokens / done if done and tokens else None


def estimate_capacity(s: Series) -> float | None:
    est = capacity_estimate(s, MIN_BIN_S)
    return None if est is None else est.rate


def _balanced(s: Series, i: int) -> bool:
    """Bin i is whole and little of its work was cut (module docstring)."""
    comp = s.completions[i] if s.completions is not None else 0.0
    cut = s.cut[i] if s.cut is not None else 0.0
    whole = s.whole[i] if s.whole is not None else True
    return whole and cut <= CUT_SHARE * comp


def _work_scale(s: Series) -> dict[int, float] | None:
    """Per bin: the share of the prompt tokens queried that the engine computed (prefix-cache
    queries - hits, ÷ queries) ÷ that share in the calm bins (nothing waiting), from the
    scrapes, at most 1. A completion whose prompt the prefix cache served (a retried prompt)
    costs the engine less than the calls' own mix, so its bin completes more per second than
    the engine's capacity for fresh calls. A share, not tokens per request, so that a bin of
    shorter prompts is not mistaken for cached ones. None without prefix-cache hits or calm
    bins to compare with."""
    if s.computed is None or s.queried is None or s.queue is None:
        return None
    calm = [k for k, q in enumerate(s.queue) if q == 0 and s.queried[k] > 0]
    queried = sum(s.queried[k] for k in calm)
    ref = sum(s.computed[k] for k in calm) / queried if queried else 0.0
    if ref <= 0:
        return None
    # never above 1: a bin that computed more of its prompts than the calm bins did is not
    # completing dearer work for it (the cache was warm in the calm bins)
    # and within CACHE_NOISE of it, the mix of prompts moved, not the cache: left as it is
    out = {}
    for k in range(len(s.queue)):
        if s.queried[k] > 0:
            f = s.computed[k] / s.queried[k] / ref
            out[k] = f if f < 1.0 - CACHE_NOISE else 1.0
    return out


def capacity_estimate(s: Series, width: float) -> CapacityEstimate | None:
    """Ĉ from the bins in flow balance (module docstring): under a standing queue, else by
    the utilization law in calm bins; None when neither has the bins it needs."""
    if s.completions is None or s.queue is None:
        return None
    comp, queue = s.completions, s.queue
    scale = _work_scale(s)
    standing = [k for k in range(len(comp)) if queue[k] > 0 and _balanced(s, k)]
    weighed = {k: comp[k] * (scale.get(k, 1.0) if scale else 1.0) for k in standing}
    peak = max(weighed.values(), default=0.0)
    used = [k for k in standing if weighed[k] >= COLLAPSE * peak]
    if peak > 0 and len(used) >= SUSTAIN_BINS:
        rates = sorted(weighed[k] for k in used)
        rate = statistics.median(rates)
        factors = sorted(scale[k] for k in used if k in scale) if scale else []
        scaled = (factors[0], factors[-1]) if factors and factors[0] < 1.0 else None
        return CapacityEstimate(
            rate=rate,
            low=rates[0],
            high=rates[-1],
            start_s=s.start_s[used[0]],
            bins=len(used),
            method=_say(
                "standing_method",
                source=s.completions_source,
                bins=len(used),
                width=width,
                queue_source=s.queue_source,
                cut_share=CUT_SHARE,
                collapse=COLLAPSE,
                low=rates[0],
                high=rates[-1],
                scale=scaled,
            ),
            rule=_say(
                "standing_rule",
                source=s.completions_source,
                bins=len(used),
                width=width,
                queue_source=s.queue_source,
                weighed=scaled is not None,
            ),
        )
    if s.busy is None:
        return None
    calm = [
        k
        for k, u in enumerate(s.busy)
        if u is not None and u >= MIN_BUSY and queue[k] == 0 and comp[k] > 0 and _balanced(s, k)
    ]
    if not calm:
        return None
    # in flow balance: the bin completed what arrived in it (a bin after a pulse completes
    # the running backlog with nothing waiting, and is not)
    arr = s.arrivals
    flowing = [] if arr is None else [k for k in calm if abs(comp[k] - arr[k]) <= FLOW * arr[k]]
    per_bin = {k: comp[k] / (s.busy[k] or 1.0) for k in (flowing or calm)}
    lo, hi = min(per_bin.values()), max(per_bin.values())
    n = len(per_bin)
    if flowing:
        # batching grows with load, so the busiest-per-second balanced bin is the closest to
        # the engine's capacity (a ramp's highest level, read from the data)
        best = max(flowing, key=lambda k: per_bin[k])
        return CapacityEstimate(
            rate=hi,
            low=lo,
            high=hi,
            start_s=s.start_s[best],
            bins=len(per_bin),
            method=_say(
                "flow_method",
                source=s.completions_source,
                bins=n,
                width=width,
                flow=FLOW,
                min_busy=MIN_BUSY,
                low=lo,
                high=hi,
            ),
            rule=_say("flow_rule", source=s.completions_source, bins=n, width=width),
        )
    done = sum(comp[k] for k in calm)
    busy = sum(s.busy[k] or 0.0 for k in calm)
    return CapacityEstimate(
        rate=done / busy,
        low=lo,
        high=hi,
        start_s=s.start_s[calm[0]],
        bins=len(calm),
        method=_say(
            "calm_method",
            source=s.completions_source,
            bins=n,
            width=width,
            busy=busy / len(calm),
            low=lo,
            high=hi,
        ),
        rule=_say("calm_rule", source=s.completions_source, bins=n, width=width),
    )


def detect(
    con: duckdb.DuckDBPyConnection, t0: float, t_end: float, capacity: float | None
) -> Detection | None:
    s, width = series(con, t0, t_end)
    est = capacity_estimate(s, width)
    c_hat = None if est is None else est.rate
    cap = capacity if capacity is not None else c_hat
    cap_rule = None if capacity is not None or est is None else est.rule
    run = _first_run(s, cap)
    if run is None:
        # no overload found; Ĉ, when estimated, still stands (the verdict's figure shows it)
        if est is None:
            return None
        return Detection([], "", c_hat, cap_rule, s.arrivals_source, s.completions_source,
                         s.queue_source, width)  # fmt: skip
    i, j, rule = run
    end_s = max(t_end - t0, s.start_s[-1] + width)
    a, b = s.start_s[i], min(s.start_s[j] + width, end_s)
    phases = [("before", 0.0, a)] if a > 0 else []
    phases.append(("overload", a, b))
    if b < t_end - t0:
        phases.append(("after", b, t_end - t0))
    return Detection(
        phases=phases,
        rule=rule,
        capacity=c_hat,
        capacity_rule=cap_rule,
        arrivals_source=s.arrivals_source,
        completions_source=s.completions_source,
        queue_source=s.queue_source,
        bin_s=width,
    )


DEEP_SHARE = (
    0.25  # a run of hot bins is the overload once its queue reaches this share of the deepest
)


def _first_run(s: Series, cap: float | None) -> tuple[int, int, str] | None:
    if s.arrivals is not None and s.queue is not None and cap is not None:
        hot = [a > cap and q > 0 for a, q in zip(s.arrivals, s.queue, strict=True)]
        # the first run whose queue was deep, not merely the first: a ramp's closed-loop
        # levels can pass Ĉ with a request or two waiting long before the pulse
        # (fresh-retries-no-cancel: 90-120 s at 0-1 waiting was taken for the overload, and
        # the pulse's queue of 137 missed)
        queue = s.queue
        runs = [(r, max(queue[r[0] : r[1] + 1])) for r in _runs(hot)]
        deepest = max((d for _, d in runs), default=0.0)
        run = next((r for r, d in runs if d >= DEEP_SHARE * deepest), None)
        if run is not None:
            return (
                *run,
                _say("above_capacity", source=s.arrivals_source, capacity=cap),
            )
    if s.queue is not None:
        grew = [False] + [b > a for a, b in zip(s.queue, s.queue[1:], strict=False)]
        run = _run(grew, min_len=2)
        if run is not None:
            return *run, _say("queue_grew", source=s.queue_source)
    return None


def _run(flags: list[bool], min_len: int = 1) -> tuple[int, int] | None:
    return next(iter(_runs(flags, min_len)), None)


def _runs(flags: list[bool], min_len: int = 1) -> list[tuple[int, int]]:
    """Every run of consecutive true flags at least `min_len` long, as (first, last)."""
    out, i = [], 0
    while i < len(flags):
        if flags[i]:
            j = i
            while j + 1 < len(flags) and flags[j + 1]:
                j += 1
            if j - i + 1 >= min_len:
                out.append((i, j))
            i = j + 1
        else:
            i += 1
    return out


MIN_GONE_ATTEMPTS = 5
DEADLINE_SHARE = 0.5


def overload_phase(
    con: duckdb.DuckDBPyConnection,
    named: str | None,
    phases: list[tuple[str, float, float]],
    t0: float,
) -> tuple[str | None, str | None]:
    """Which of the given phases ((name, start_s, end_s) from t0) is the overload, and why:
    run.json's `overload_phase` (`named`), else the phase named `pulse`, else the one with
    the highest arrival rate (calls by t_planned; engine arrivals without a proxy log)."""
    if not phases:
        return None, None
    names = [name for name, _, _ in phases]
    if named and named in names:
        return named, OVERLOAD_FROM_MANIFEST
    if "pulse" in names:
        return "pulse", "the phase named pulse"
    windows = [Window(name, t0 + a, t0 + b, False) for name, a, b in phases]
    counts = {
        r["win_name"]: r
        for r in sql.rows(con, "analyses/phase_arrival_counts", window_params(windows))
    }
    use_calls = any(c["calls"] for c in counts.values())
    best: tuple[float, str] | None = None
    for name, a, b in phases:
        n = counts[name]["calls" if use_calls else "engine_arrivals"]
        rate = n / (b - a)
        if n and (best is None or rate > best[0]):
            best = (rate, name)
    if best is None:
        return None, None
    return best[1], _say("busiest_phase", rate=best[0], calls=use_calls)


STEADY = "steady"  # the window after the overload once all its attempts have timed out
OVERLOAD_FROM_MANIFEST = "run.json overload_phase"


def steady_window(
    phases: list[tuple[str, float, float]],
    overload: str | None,
    rule: str | None,
    deadline_s: float | None,
    notes: list[str],
) -> tuple[float, float] | None:
    """The `steady` window (start, end in seconds from t0): the overload's end + D to the last
    phase's end, when run.json names the overload phase and D is known (None otherwise, or
    when it would be empty)."""
    if rule != OVERLOAD_FROM_MANIFEST or deadline_s is None or not phases:
        return None
    if any(name == STEADY for name, _, _ in phases):
        notes.append(_say("steady_named", name=STEADY))
        return None
    end = next(b for name, _, b in phases if name == overload)
    start, last = end + deadline_s, max(b for _, _, b in phases)
    if last <= start:
        return None
    return start, last


def deadline_from_attempts(con: duckdb.DuckDBPyConnection) -> tuple[float | None, str | None]:
    """The client deadline where the gateway log shows it: most attempts the client left were
    cut at one duration (within 1 %)."""
    r = sql.one(con, "analyses/client_deadline_from_attempts")
    if r is None or r["mode_s"] is None or r["gone"] < MIN_GONE_ATTEMPTS:
        return None, None
    if r["at_mode"] < DEADLINE_SHARE * r["gone"]:
        return None, None
    mode = float(r["mode_s"])
    return mode, _say("deadline_from_attempts", at_mode=r["at_mode"], gone=r["gone"], mode=mode)


def deadline_from_retries(con: duckdb.DuckDBPyConnection) -> tuple[float | None, str | None]:
    """An upper bound of the client deadline where cancellation was off: most retries of a
    call started one gap after the previous attempt, which was still running (the client had
    left it at D and waited before retrying): D <= that gap."""
    r = sql.one(con, "analyses/client_deadline_from_retries")
    if r is None or r["mode_s"] is None or r["pairs"] < MIN_GONE_ATTEMPTS:
        return None, None
    if r["at_mode"] < DEADLINE_SHARE * r["pairs"]:
        return None, None
    gap = float(r["mode_s"])
    return gap, _say("deadline_from_retries", at_mode=r["at_mode"], pairs=r["pairs"], gap=gap)
