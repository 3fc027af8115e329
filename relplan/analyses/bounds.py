"""Bounds on the work an analysis does: series bins, rolling evaluations and the analysed
window are sized by the data's real span, so that one outlier timestamp cannot make a run of
millions of bins (docs/analyses.md, Conventions)."""

from __future__ import annotations

import math
from typing import Literal

from relplan.analyses.wording import Words
from relplan.errors import UsageError
from relplan.values import clock_span, short

# The sentences of this analysis, worded by relplan/text/bounds.py (one function per code).
Said = Literal["bins_widened", "step_widened", "window_clipped"]
_say: Words[Said] = Words("relplan.text.bounds")

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
INSTANT_S = 1e-6  # the window given to data that all lie at one instant


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
        _say(
            "bins_widened",
            given=given,
            bins=math.ceil(span_s / given),
            span=span_s,
            most=MAX_SERIES_BINS,
            wide=wide,
        )
    )
    return wide


def bounded_step(step: float, span_s: float, notes: list[str]) -> float:
    """The rolling evaluation step: `step` unless the span needs more than
    MAX_ROLLING_EVALUATIONS evaluations; then a whole multiple of it that fits."""
    if span_s / step <= MAX_ROLLING_EVALUATIONS:
        return step
    wide = step * math.ceil(span_s / step / MAX_ROLLING_EVALUATIONS)
    notes.append(
        _say(
            "step_widened",
            evaluations=math.ceil(span_s / step),
            step=step,
            span=span_s,
            most=MAX_ROLLING_EVALUATIONS,
            wide=wide,
        )
    )
    return wide


def window_in_data(
    a: float,
    b: float,
    data: tuple[float, float],
    t0: float,
    notes: list[str],
    *,
    given: tuple[bool, bool] = (True, True),
) -> tuple[float, float]:
    """The analysed window [a, b] (epoch seconds) checked against the data's span `data`:
    a window wholly outside it is a usage error naming that span; a window that is empty is
    a usage error when --from/--to made it (`given`), else the data all lie at one instant
    and the window is that instant (with a note); a window reaching far beyond the data
    (more than its span, at least WINDOW_SLACK_S) is clipped to it, with a note."""
    lo, hi = data
    given_from, given_to = given
    if a > hi or b < lo:
        flag = "--from" if given_from and a > hi else "--to"
        raise UsageError(
            flag,
            f"the window {short(a - t0)}..{short(b - t0)} s lies outside the data, which spans"
            f" {short(lo - t0)}..{short(hi - t0)} s after t0 ({clock_span(lo, hi)})",
        )
    if b <= a:
        if given_from or given_to:
            raise UsageError(
                "--to",
                f"the window must end after it starts (from {short(a - t0)} s to {short(b - t0)} s after t0)",
            )
        notes.append("every record is at one instant: the window is that instant")
        return a, a + INSTANT_S
    slack = max(hi - lo, WINDOW_SLACK_S)
    ca = lo if a < lo - slack else a
    cb = hi if b > hi + slack else b
    if (ca, cb) != (a, b):
        notes.append(
            _say(
                "window_clipped",
                start=a - t0,
                end=b - t0,
                low=lo - t0,
                high=hi - t0,
                clip_start=ca - t0,
                clip_end=cb - t0,
            )
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
