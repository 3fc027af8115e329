"""Bounds on the work an analysis does: series bins, rolling evaluations and the analysed
window are sized by the data's real span, so that one outlier timestamp cannot make a run of
millions of bins (docs/analyses.md, Conventions)."""

from __future__ import annotations

import math
from typing import Any

from relplan.errors import UsageError

# Default series bin: 30 s, widened to the next of these widths when a window would need more
# than MAX_BINS bins (a chart of a day in 30 s bars is unreadable, and each bin costs a
# window in the windowed queries).
BIN_WIDTHS = (30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 21600.0, 86400.0)
MAX_BINS = 200
# A given --bin is widened past this many bins; the rolling --step past this many evaluations.
MAX_SERIES_BINS = 2_000
MAX_ROLLING_EVALUATIONS = 20_000
# --from/--to reaching beyond the data by more than max(its span, this) are clipped to it.
WINDOW_SLACK_S = 3600.0
DAY_S = 86400.0


def auto_bin(span_s: float) -> float:
    """30 s, widened for long windows; past a day, whole days (at most MAX_BINS bins)."""
    fit = next((w for w in BIN_WIDTHS if span_s / w <= MAX_BINS), None)
    if fit is not None:
        return fit
    return DAY_S * math.ceil(span_s / MAX_BINS / DAY_S)


def bounded_bin(given: float | None, span_s: float, notes: list[str]) -> float:
    """The series bin: `given` (--bin) unless it would make more than MAX_SERIES_BINS bins."""
    if given is None:
        return auto_bin(span_s)
    if span_s / given <= MAX_SERIES_BINS:
        return given
    wide = auto_bin(span_s)
    notes.append(
        f"--bin {given:g} s would make {math.ceil(span_s / given):,} bins over the"
        f" {span_s:,.0f} s window (at most {MAX_SERIES_BINS:,}); bins widened to {wide:g} s"
    )
    return wide


def bounded_step(step: float, span_s: float, notes: list[str]) -> float:
    """The rolling evaluation step: `step` unless the span needs more than
    MAX_ROLLING_EVALUATIONS evaluations; then a whole multiple of it that fits."""
    if span_s / step <= MAX_ROLLING_EVALUATIONS:
        return step
    wide = step * math.ceil(span_s / step / MAX_ROLLING_EVALUATIONS)
    notes.append(
        f"the rolling series would need {math.ceil(span_s / step):,} evaluations every"
        f" {step:g} s over {span_s:,.0f} s (at most {MAX_ROLLING_EVALUATIONS:,}); evaluated"
        f" every {wide:g} s instead"
    )
    return wide


def bounded_window(
    a: float, b: float, data_lo: float, data_hi: float, t0: float, notes: list[str]
) -> tuple[float, float]:
    """Refuse a window wholly outside the data; clip one reaching far beyond it."""
    if a > data_hi or b < data_lo:
        flag = "--from" if a > data_hi else "--to"
        raise UsageError(
            flag,
            f"the window {a - t0:g}..{b - t0:g} s lies outside the data"
            f" ({data_lo - t0:g}..{data_hi - t0:g} s after t0)",
        )
    slack = max(data_hi - data_lo, WINDOW_SLACK_S)
    ca = data_lo if a < data_lo - slack else a
    cb = data_hi if b > data_hi + slack else b
    if (ca, cb) != (a, b):
        notes.append(
            f"the window {a - t0:g}..{b - t0:g} s reaches far beyond the data"
            f" ({data_lo - t0:g}..{data_hi - t0:g} s); clipped to {ca - t0:g}..{cb - t0:g} s"
        )
    return ca, cb


def rolling_bounds(
    a: float, b: float, metrics: tuple[float, float] | None, width: float
) -> tuple[float, float]:
    """Where a rolling series over the metrics is evaluated: the window [a, b], less what
    lies further than max(an hour, `width`) from any metric sample (nothing rises there)."""
    if metrics is None:
        return a, b
    slack = max(WINDOW_SLACK_S, width)
    return max(a, metrics[0] - slack), min(b, metrics[1] + slack)


def check_window_in_data(opts: Any, start: float, end: float, t0: float, t_end: float) -> None:
    """A --from/--to entirely outside the data is a usage error naming the data's span."""
    if opts.t_from is None and opts.t_to is None:
        return
    if start > t_end or end < t0:
        flag = "--from" if opts.t_from is not None and start > t_end else "--to"
        raise UsageError(
            flag,
            f"the window {start - t0:g}..{end - t0:g} s lies outside the data, which spans"
            f" 0..{t_end - t0:g} s after t0 ({t0:.3f}..{t_end:.3f} epoch seconds)",
        )
