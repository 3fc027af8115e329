"""Drained after: when the engine's backlog first returns to its pre-pulse level
(docs/analyses.md, "Recovery, two ways").

Two figures answer "when was it over?", and they differ:
- *recovered after* (the delivery analysis): seconds from the end of the overload to the
  first 30 s planned-arrival bin from which every bin has >= 90 % of its calls on time — when
  a new call is served in time again;
- *drained after* (this module): seconds from the end of the overload to the first instant at
  which the engine's backlog (executions admitted and not ended: waiting + running) is at or
  below its pre-pulse level, the time-weighted mean backlog over the data before the overload
  began — when the work the pulse queued is gone.

A call can be on time while the backlog is still above its old level (the queue wait has
fallen under D), so drained after is the later of the two on a draining queue; the pulse
arithmetic (relplan.planning.pulse) gives both in closed form.

The backlog comes from, in order: the engine trace's lifecycle events (arrived until finished,
aborted or rejected; refused when the trace cannot see completions: no `finished` event while
some executions have no terminal event, as vLLM 0.32 logs without --enable-log-outputs); the
scraped gauges vllm:num_requests_waiting + vllm:num_requests_running (summed over series);
else the same gauges from vLLM's stats log line. One family per quantity (never the stats
line and the scrape added together; queries/analyses/backlog_gauge_samples.sql). Its
resolution is the source's: exact for a trace, the sample interval for gauges.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from typing import Any, Literal

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses.context import RunContext
from relplan.analyses.wording import Words
from relplan.models import StrictModel

# The sentences of this analysis, worded by relplan/text/drain.py (one function per code).
Said = Literal["no_terminal", "not_drained"]
_say: Words[Said] = Words("relplan.text.drain")

DEFINITION = (
    "drained after: seconds from the end of the overload to the first time the engine's"
    " backlog (waiting + running) is at or below its pre-pulse level (time-weighted mean"
    " before the overload)"
)
RECOVERED_DEFINITION = (
    "recovered after: seconds from the end of the overload to the first 30 s planned-arrival"
    " bin from which every bin with >= 5 calls has >= 90 % of them on time"
)


class Drain(StrictModel):
    source: str | None = Field(description="where the backlog came from")
    pre_level: float | None = Field(description="time-weighted mean backlog before the overload")
    peak: float | None = Field(description="largest backlog from the overload's start on")
    at_end: float | None = Field(description="backlog at the end of the data")
    drained_after_s: float | None = Field(
        description="seconds from the end of the overload to the first backlog <= pre_level"
    )
    resolution_s: float | None = Field(
        description="median time between backlog points (0: exact, from a trace)"
    )
    definition: str = DEFINITION
    null_reason: str | None = Field(description="why drained_after_s is null")
    after_load_ended: bool = Field(
        default=False, description="it drained only after the last phase ended (arrivals stopped)"
    )


def _from_trace(con: duckdb.DuckDBPyConnection) -> tuple[list[tuple[float, float]], str | None]:
    cols = sql.by_column(con, "analyses/backlog_trace_changes")
    if not cols["t"]:
        return [], "no engine lifecycle events"
    counts = sql.one(con, "analyses/lifecycle_event_counts")
    finished = int(counts["finished"]) if counts else 0
    if int(cols["no_terminal"][0]) and not finished:
        return [], _say(
            "no_terminal",
            missing=int(cols["no_terminal"][0]),
            executions=int(cols["executions"][0]),
        )
    # the level after each change: the running sum of the deltas (whole numbers: exact)
    levels = itertools.accumulate(map(float, cols["delta"]))
    return list(zip(map(float, cols["t"]), levels, strict=True)), None


def _from_gauges(rows: list[dict[str, Any]]) -> list[tuple[float, float]]:
    last: dict[tuple[str, str], float] = {}
    by_t: dict[float, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_t[float(r["t"])].append(r)
    out = []
    for t in sorted(by_t):
        for r in by_t[t]:
            last[(str(r["name"]), str(r["series"]))] = float(r["value"])
        out.append((t, sum(last.values())))
    return out


def backlog(
    con: duckdb.DuckDBPyConnection, ctx: RunContext
) -> tuple[list[tuple[float, float]], str | None, str | None]:
    """(points (epoch t, backlog), source, why none): the first source that has one."""
    why: list[str] = []
    if ctx.has_events:
        pts, no = _from_trace(con)
        if pts:
            return pts, "engine trace (arrived until finished, aborted or rejected)", None
        if no:
            why.append(no)
    gauges = sql.rows(con, "analyses/backlog_gauge_samples")
    if gauges:
        family = str(gauges[0]["family"])
        names = sorted({str(r["name"]) for r in gauges})
        src = (
            " + ".join(names)
            + f" ({'vLLM stats log line' if family == 'stats line' else 'scraped metrics'})"
        )
        return _from_gauges(gauges), src, None
    why.append("no vllm:num_requests_waiting or vllm:num_requests_running samples")
    return [], None, "; ".join(why)


def time_weighted_mean(points: list[tuple[float, float]], a: float, b: float) -> float | None:
    """Time-weighted mean of the step function over [a, b) (each value holds until the next)."""
    total, covered = 0.0, 0.0
    for (t, v), nxt in zip(points, [*points[1:], (b, 0.0)], strict=True):
        lo, hi = max(t, a), min(nxt[0], b)
        if hi > lo:
            total += v * (hi - lo)
            covered += hi - lo
    if covered > 0:
        return total / covered
    before = [v for t, v in points if t < b]
    return before[-1] if before else None


def _median_gap(points: list[tuple[float, float]]) -> float | None:
    """The resolution of a sampled backlog: the median time between points (the upper one of
    an even count). A trace's step function is exact and needs none (18,000 points on the
    pulse-retry-cancel sample: sorting their gaps was ~4 ms of measure()'s 33)."""
    gaps = sorted(t2 - t1 for (t1, _), (t2, _) in itertools.pairwise(points))
    return gaps[len(gaps) // 2] if gaps else None


NO_OVERLOAD = "no overload phase: nothing to drain"
FROM_FAILURE = (
    "drained after: seconds from the start of the failure window (no overload was found;"
    " recovered after is timed from there too) to the first time after the backlog's peak"
    " that the engine's backlog (waiting + running) is at or below its level before the"
    " failure (time-weighted mean)"
)


def measure(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> Drain:
    ov = next((p for p in ctx.phases if p.name == ctx.overload_phase), None)
    if ov is None:
        return _none(None, NO_OVERLOAD)
    return measure_window(con, ctx, ctx.t0 + ov.start_s, ctx.t0 + ov.end_s)


def pre_level(points: list[tuple[float, float]], window_start: float, a: float) -> float | None:
    """The backlog's level before an overload starting at `a`: its time-weighted mean from the
    first point (not before `window_start`) to `a`; None without data before `a`."""
    lo = max(window_start, min(t for t, _ in points))
    return time_weighted_mean(points, lo, a) if a > lo else None


def first_at_or_below(
    points: list[tuple[float, float]], since: float, level: float
) -> float | None:
    """The first time from `since` on at which the backlog is at or below `level`; None when
    it never is in the data."""
    return next((t for t, v in points if t >= since and v <= level + 1e-9), None)


def measure_window(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    a: float,
    b: float,
    definition: str = DEFINITION,
    from_peak: bool = False,
) -> Drain:
    """Drained after for an overload over [a, b] (epoch seconds): the pre-level over the data
    before `a`, the first backlog at or below it from `b` on (`from_peak`: from the backlog's
    peak after `a` on, timed from `b`: a failure window starts before its backlog built)."""
    pts, src, why = backlog(con, ctx)
    if not pts:
        return _none(None, f"no backlog series: {why}")
    res = 0.0 if src and src.startswith("engine trace") else _median_gap(pts)
    pre = pre_level(pts, ctx.window_start, a)
    later = [v for t, v in pts if t >= a]
    peak = max(later) if later else None
    end = pts[-1][1]
    base = {
        "source": src,
        "peak": peak,
        "at_end": end,
        "resolution_s": res,
        "definition": definition,
    }
    if pre is None:
        return Drain(
            pre_level=None,
            drained_after_s=None,
            null_reason="no backlog data before the overload: the pre-pulse level is unknown",
            **base,
        )
    since = b
    if from_peak and peak is not None:
        since = max(b, next(t for t, v in pts if t >= a and v == peak))
    hit = first_at_or_below(pts, since, pre)
    if hit is None:
        return Drain(
            pre_level=pre,
            drained_after_s=None,
            null_reason=_say("not_drained", end=end, pre=pre),
            **base,
        )
    last_phase = max((p.end_s for p in ctx.phases), default=None)
    stopped = last_phase is not None and hit > ctx.t0 + last_phase
    return Drain(
        pre_level=pre,
        drained_after_s=hit - b,
        null_reason=None,
        after_load_ended=stopped,
        **base,
    )


def _none(src: str | None, why: str) -> Drain:
    return Drain(
        source=src,
        pre_level=None,
        peak=None,
        at_end=None,
        drained_after_s=None,
        resolution_s=None,
        null_reason=why,
    )
