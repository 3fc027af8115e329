"""PromQL's range-vector functions over one series, vectorised over the evaluation times
(Prometheus 2.42's promql/functions.go; the rules are listed in promql_eval.py).

Each takes a series and, per evaluation time, the half-open index range [lo, hi) of its
samples inside the window, and returns (values, present) arrays over the evaluation times.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from relplan.alerts.promql_series import BoolArray, FloatArray, IntArray, Series


def extrapolated_rate(
    s: Series,
    lo: IntArray,
    hi: IntArray,
    ts: IntArray,
    range_ms: int,
    *,
    is_counter: bool,
    is_rate: bool,
) -> tuple[FloatArray, BoolArray]:
    n = hi - lo
    present = n >= 2
    out = np.zeros(len(ts), dtype=np.float64)
    if not present.any():
        return out, present
    first_i = np.where(present, lo, 0)
    last_i = np.where(present, hi - 1, 0)
    first_v = s.v[first_i]
    result = s.v[last_i] - first_v
    if is_counter and len(s.v) > 1:
        drops = np.concatenate(([False], s.v[1:] < s.v[:-1]))
        count = np.cumsum(drops)
        # Drops at sample positions lo+1 .. hi-1 fall inside the window.
        inside = np.where(present, count[last_i] - count[first_i], 0)
        for k in np.nonzero(inside > 0)[0]:
            acc = result[k]
            for i in range(int(lo[k]) + 1, int(hi[k])):
                if s.v[i] < s.v[i - 1]:
                    acc += s.v[i - 1]
            result[k] = acc
    range_start = ts - range_ms
    duration_to_start = (s.t[first_i] - range_start).astype(np.float64) / 1000
    duration_to_end = (ts - s.t[last_i]).astype(np.float64) / 1000
    sampled = (s.t[last_i] - s.t[first_i]).astype(np.float64) / 1000
    with np.errstate(divide="ignore", invalid="ignore"):
        avg = sampled / np.maximum(n - 1, 1).astype(np.float64)
        if is_counter:
            to_zero = sampled * (first_v / result)
            use_zero = (result > 0) & (first_v >= 0) & (to_zero < duration_to_start)
            duration_to_start = np.where(use_zero, to_zero, duration_to_start)
        threshold = avg * 1.1
        interval = sampled.copy()
        interval += np.where(duration_to_start < threshold, duration_to_start, avg / 2)
        interval += np.where(duration_to_end < threshold, duration_to_end, avg / 2)
        factor = interval / sampled
        if is_rate:
            factor /= go_seconds(range_ms)
        result = result * factor
    return np.where(present, result, 0.0), present


def go_seconds(ms: int) -> float:
    """time.Duration.Seconds() for a whole number of milliseconds."""
    ns = ms * 1_000_000
    return float(ns // 1_000_000_000) + float(ns % 1_000_000_000) / 1e9


def window_blocks(lo: IntArray, hi: IntArray, block: int = 2048) -> Iterable[slice]:
    for start in range(0, len(lo), block):
        yield slice(start, min(start + block, len(lo)))


def kahan_inc(inc: FloatArray, total: FloatArray, c: FloatArray) -> tuple[FloatArray, FloatArray]:
    t = total + inc
    c = c + np.where(np.abs(total) >= np.abs(inc), (total - t) + inc, (inc - t) + total)
    return t, c


def deriv(s: Series, lo: IntArray, hi: IntArray) -> tuple[FloatArray, BoolArray]:
    n_eval = len(lo)
    n = hi - lo
    present = n >= 2
    out = np.zeros(n_eval, dtype=np.float64)
    for blk in window_blocks(lo, hi):
        b_lo, b_n, b_present = lo[blk], n[blk], present[blk]
        if not b_present.any():
            continue
        width = int(b_n.max())
        size = len(b_lo)
        first = np.where(b_present, b_lo, 0)
        t0 = s.t[first]
        y0 = s.v[first]
        sx = np.zeros(size)
        cx = np.zeros(size)
        sy = np.zeros(size)
        cy = np.zeros(size)
        sxy = np.zeros(size)
        cxy = np.zeros(size)
        sx2 = np.zeros(size)
        cx2 = np.zeros(size)
        const = np.ones(size, dtype=bool)
        for j in range(width):
            m = b_present & (j < b_n)
            idx = np.where(m, b_lo + j, 0)
            y = s.v[idx]
            x = (s.t[idx] - t0).astype(np.float64) / 1e3
            const &= ~m | (y == y0)
            zero = np.zeros(size)
            xm, ym = np.where(m, x, zero), np.where(m, y, zero)
            nsx, ncx = kahan_inc(xm, sx, cx)
            nsy, ncy = kahan_inc(ym, sy, cy)
            nsxy, ncxy = kahan_inc(xm * ym, sxy, cxy)
            nsx2, ncx2 = kahan_inc(xm * xm, sx2, cx2)
            sx, cx = np.where(m, nsx, sx), np.where(m, ncx, cx)
            sy, cy = np.where(m, nsy, sy), np.where(m, ncy, cy)
            sxy, cxy = np.where(m, nsxy, sxy), np.where(m, ncxy, cxy)
            sx2, cx2 = np.where(m, nsx2, sx2), np.where(m, ncx2, cx2)
        cnt = b_n.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            sx, sy, sxy, sx2 = sx + cx, sy + cy, sxy + cxy, sx2 + cx2
            cov = sxy - sx * sy / cnt
            var = sx2 - sx * sx / cnt
            slope = cov / var
        slope = np.where(const, np.where(np.isinf(y0), np.nan, 0.0), slope)
        out[blk] = np.where(b_present, slope, 0.0)
    return out, present


def extreme_over_time(
    s: Series, lo: IntArray, hi: IntArray, want_max: bool
) -> tuple[FloatArray, BoolArray]:
    n = hi - lo
    present = n >= 1
    out = np.zeros(len(lo), dtype=np.float64)
    pick = np.fmax if want_max else np.fmin
    for blk in window_blocks(lo, hi):
        b_lo, b_n, b_present = lo[blk], n[blk], present[blk]
        if not b_present.any():
            continue
        acc = s.v[np.where(b_present, b_lo, 0)].copy()
        for j in range(1, int(b_n.max())):
            m = b_present & (j < b_n)
            y = s.v[np.where(m, b_lo + j, 0)]
            acc = np.where(m, pick(acc, y), acc)
        out[blk] = np.where(b_present, acc, 0.0)
    return out, present
