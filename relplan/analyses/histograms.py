"""Latency figures from vLLM's histograms (docs/analyses.md, "Figures from histograms").

For TTFT, queue time, end-to-end latency and prefill time: per window (the run, then each
phase) the requests counted (rise of `_count`), the mean (`_sum` ÷ `_count`) and the p50,
p90 and p99 estimated from the bucket rises between scrapes
(queries/analyses/histogram_rises_by_window.sql) by linear interpolation inside the bucket
the quantile falls in, as Prometheus's `histogram_quantile` does. Every percentile is an
estimate and carries its bucket's bounds (`low`, `high`; `high` is null in the `+Inf` bucket,
whose estimate is then the lower bound). The change over the incident compares the overload
and the window after it with the window before it.

The share of finished requests over D (end-to-end histogram) is bounded the same way: the
bucket bounds around D give its lowest and highest value. `late_share_bins` gives it per
series bin (pairs by their later scrape), the failure signal of a run without a gateway log.

Aborted requests appear in no per-request histogram in current vLLM (vLLM issues #31503 and
#55634): these are figures of requests that finished.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses.context import RunContext, Window, window_params
from relplan.analyses.wording import Words
from relplan.models import StrictModel

# The sentences of this analysis, worded by relplan/text/histograms.py (one function per code).
Said = Literal["one_scrape", "p90_change"]
_say: Words[Said] = Words("relplan.text.histograms")

BASES: dict[str, tuple[str, str]] = {
    "ttft": ("vllm:time_to_first_token_seconds", "time to first token"),
    "queue": ("vllm:request_queue_time_seconds", "queue time"),
    "e2e": ("vllm:e2e_request_latency_seconds", "end-to-end latency"),
    "prefill": ("vllm:request_prefill_time_seconds", "prefill time"),
}
QUANTILES = (0.5, 0.9, 0.99)


class Percentile(StrictModel):
    q: float
    value: float = Field(description="estimate, seconds (interpolated inside the bucket)")
    low: float = Field(description="the bucket's lower bound, seconds")
    high: float | None = Field(description="the bucket's upper bound; null in the +Inf bucket")


class HistogramWindow(StrictModel):
    window: str
    start_s: float
    end_s: float
    requests: float = Field(description="rise of the histogram's _count")
    mean_s: float | None
    percentiles: list[Percentile] = Field(description="p50, p90, p99 estimates")


class LatencyHistogram(StrictModel):
    key: str = Field(description="ttft | queue | e2e | prefill")
    metric: str
    label: str
    present: bool = Field(description="the workspace holds this histogram")
    scrapes: int = Field(description="distinct scrape times of its buckets")
    windows: list[HistogramWindow]
    change: str | None = Field(description="p90 during and after the overload against before")
    null_reason: str | None


def _pct(buckets: list[tuple[float, float]], q: float) -> Percentile | None:
    """histogram_quantile over cumulative (le, count) pairs sorted by le."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    total = buckets[-1][1]
    rank = q * total
    prev_le, prev_c = 0.0, 0.0
    for le, c in buckets:
        if c >= rank:
            if math.isinf(le):
                return Percentile(q=q, value=prev_le, low=prev_le, high=None)
            inside = c - prev_c
            frac = (rank - prev_c) / inside if inside > 0 else 1.0
            return Percentile(q=q, value=prev_le + (le - prev_le) * frac, low=prev_le, high=le)
        prev_le, prev_c = le, c
    return None


def _le(text: Any) -> float:
    return math.inf if str(text) in ("+Inf", "Inf", "inf") else float(text)


def _group(rows: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        g = out.setdefault((r["win_name"], r["base"]), {"buckets": {}, "count": 0.0, "sum": 0.0})
        if r["part"] == "bucket" and r["le"] is not None:
            le = _le(r["le"])
            g["buckets"][le] = g["buckets"].get(le, 0.0) + float(r["rise"])
        elif r["part"] in ("count", "sum"):
            g[r["part"]] += float(r["rise"])
    return out


def _rows(
    con: duckdb.DuckDBPyConnection, windows: list[Window], by_end: bool
) -> dict[tuple[str, str], dict[str, Any]]:
    params = window_params(windows) | {
        "bases": [m for m, _ in BASES.values()],
        "by_end": by_end,
    }
    return _group(sql.rows(con, "analyses/histogram_rises_by_window", params))


def scrapes(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """The latency histograms the workspace holds, each with its number of scrapes."""
    return {
        str(r["name"]): int(r["scrapes"])
        for r in sql.rows(
            con, "analyses/histogram_scrapes", {"bases": [m for m, _ in BASES.values()]}
        )
    }


def latency(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, present: dict[str, int] | None = None
) -> list[LatencyHistogram]:
    """The latency histograms per phase; `present`: scrapes(con) when the caller has it."""
    present = scrapes(con) if present is None else present
    if not present:
        return []
    windows = ctx.phase_windows()
    grouped = _rows(con, windows, False)
    out = []
    for key, (metric, label) in BASES.items():
        if metric not in present:
            continue
        rows = []
        for w in windows:
            g = grouped.get((w.name, metric))
            if g is None:
                continue
            b = sorted(g["buckets"].items())
            rows.append(
                HistogramWindow(
                    window=w.name,
                    start_s=ctx.s(w.a),
                    end_s=ctx.s(w.b),
                    requests=g["count"],
                    mean_s=g["sum"] / g["count"] if g["count"] else None,
                    percentiles=[p for q in QUANTILES if (p := _pct(b, q)) is not None],
                )
            )
        why = None
        if present[metric] < 2:
            why = _say("one_scrape", metric=metric)
        elif not any(r.requests for r in rows):
            why = "no request finished in the window (the histogram did not rise)"
        out.append(
            LatencyHistogram(
                key=key,
                metric=metric,
                label=label,
                present=True,
                scrapes=present[metric],
                windows=rows,
                change=_change(ctx, rows),
                null_reason=why,
            )
        )
    return out


def _p90(w: HistogramWindow | None) -> float | None:
    p = next((p for p in w.percentiles if p.q == 0.9), None) if w is not None else None
    return None if p is None else p.value


def _change(ctx: RunContext, rows: list[HistogramWindow]) -> str | None:
    ov = ctx.overload_phase
    if ov is None:
        return None
    by = {r.window: r for r in rows}
    names = [p.name for p in ctx.phases]
    if ov not in names:
        return None
    i = names.index(ov)
    before = by.get(names[i - 1]) if i > 0 else None
    during = by.get(ov)
    after = by.get(names[i + 1]) if i + 1 < len(names) else None
    b, d, a = _p90(before), _p90(during), _p90(after)
    if b is None or (d is None and a is None):
        return None
    return _say("p90_change", before=b, during=d, after=a, phase=ov)


def over_deadline(
    buckets: list[tuple[float, float]], d: float
) -> tuple[float, float, float, float, float] | None:
    """(share estimate, low, high, bound below D, bound above D) of requests over D."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    total = buckets[-1][1]
    below = max(((le, c) for le, c in buckets if le <= d), default=(0.0, 0.0))
    above = min(((le, c) for le, c in buckets if le >= d), default=buckets[-1])
    high, low = 1 - below[1] / total, 1 - above[1] / total
    return (high + low) / 2, low, high, below[0], above[0]


def late_share_bins(
    con: duckdb.DuckDBPyConnection, bins: list[Window], d: float
) -> list[tuple[float, float | None, float]]:
    """Per bin: (bin start epoch, share of requests finishing in it whose end-to-end latency
    exceeded D (midpoint of the bucket bounds; None without finished requests), requests)."""
    metric = BASES["e2e"][0]
    grouped = _rows(con, bins, True)
    out: list[tuple[float, float | None, float]] = []
    for w in bins:
        g = grouped.get((w.name, metric))
        if g is None:
            out.append((w.a, None, 0.0))
            continue
        od = over_deadline(sorted(g["buckets"].items()), d)
        total = max(g["buckets"].values()) if g["buckets"] else 0.0
        out.append((w.a, None if od is None else od[0], total))
    return out
