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

Ĉ (when `--capacity` and run.json give none) is estimated as the highest completion rate
sustained over SUSTAIN_BINS consecutive bins while work was waiting in each. The overload is
the first run of consecutive bins whose arrivals exceed Ĉ while work was waiting; without an
arrival series, the first run of bins in which the waiting queue grew.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from relplan import sql
from relplan.analyses.windows import Window, window_params

SUSTAIN_BINS = 3
MIN_BIN_S = 30.0
MAX_DETECT_BINS = 400


@dataclass(frozen=True)
class Detection:
    phases: list[tuple[str, float, float]]  # (name, start_s, end_s) from t0
    rule: str
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
            a_src = (
                "admissions estimated from prefix_cache_queries ÷ mean prompt length"
                f" ({mean_prompt:,.0f} tokens) plus the waiting gauge's growth"
            )
    return Series(start, arr, comp, queue, a_src, c_src, q_src, mean_prompt), width


def _mean_prompt(rows: list[dict[str, float]]) -> float | None:
    """Prompt tokens per completed request in the bins where nothing waited (no abort skews
    the prompt counter there)."""
    calm = [r for r in rows if r["m_samples"] and not r["m_waiting_last"] and r["m_success"]]
    tokens, done = sum(r["m_prompt"] for r in calm), sum(r["m_success"] for r in calm)
    return tokens / done if done and tokens else None


def estimate_capacity(s: Series) -> float | None:
    est = capacity_estimate(s)
    return None if est is None else est[0]


def capacity_estimate(s: Series) -> tuple[float, float, float, float] | None:
    """Ĉ as the highest completion rate sustained over SUSTAIN_BINS consecutive bins while
    work waited in each: (rate, lowest bin rate, highest bin rate of that run, its start in
    seconds from t0) — the spread of the bins is the estimate's uncertainty."""
    if s.completions is None or s.queue is None:
        return None
    best: tuple[float, float, float, float] | None = None
    k = SUSTAIN_BINS
    for i in range(len(s.completions) - k + 1):
        if all(q > 0 for q in s.queue[i : i + k]):
            run = s.completions[i : i + k]
            rate = sum(run) / k
            if rate > 0 and (best is None or rate > best[0]):
                best = (rate, min(run), max(run), s.start_s[i])
    return best


def detect(
    con: duckdb.DuckDBPyConnection, t0: float, t_end: float, capacity: float | None
) -> Detection | None:
    s, width = series(con, t0, t_end)
    c_hat = estimate_capacity(s)
    cap = capacity if capacity is not None else c_hat
    cap_rule = (
        None
        if capacity is not None or c_hat is None
        else f"highest {s.completions_source} rate sustained over {SUSTAIN_BINS} bins of"
        f" {width:g} s while work was waiting ({s.queue_source})"
    )
    run = _first_run(s, cap)
    if run is None:
        return None
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


def _first_run(s: Series, cap: float | None) -> tuple[int, int, str] | None:
    if s.arrivals is not None and s.queue is not None and cap is not None:
        hot = [a > cap and q > 0 for a, q in zip(s.arrivals, s.queue, strict=True)]
        run = _run(hot)
        if run is not None:
            return (
                *run,
                f"detected: {s.arrivals_source} above Ĉ ({cap:.3g}/s) while work was waiting",
            )
    if s.queue is not None:
        grew = [False] + [b > a for a, b in zip(s.queue, s.queue[1:], strict=False)]
        run = _run(grew, min_len=2)
        if run is not None:
            return *run, f"detected: the waiting queue ({s.queue_source}) grew"
    return None


def _run(flags: list[bool], min_len: int = 1) -> tuple[int, int] | None:
    i = 0
    while i < len(flags):
        if flags[i]:
            j = i
            while j + 1 < len(flags) and flags[j + 1]:
                j += 1
            if j - i + 1 >= min_len:
                return i, j
            i = j + 1
        else:
            i += 1
    return None


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
    src = "calls" if use_calls else "engine arrivals"
    return best[1], f"the phase with the highest arrival rate ({best[0]:.3g} {src}/s)"


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
        notes.append(f"a phase is named {STEADY!r}: no steady-state window is added")
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
    return mode, (
        f"from the data: {r['at_mode']:,} of {r['gone']:,} attempts the client left"
        f" lasted {mode:g} s"
    )
