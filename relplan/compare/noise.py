"""Noise bands: each side's value gets an interval, and a difference is beyond noise only
when the two intervals do not overlap.

- Several runs on a side (seeds, repeated drills): the interval is the runs' range
  (min..max), method "spread of N runs".
- One run: a bootstrap of the figure from the unit its analysis counts (calls, executions,
  or time bins for the series a metrics-only workspace has): `RESAMPLES` resamples, the
  central 95 % of them. The generator is seeded, so the same inputs give the same bands.
- Neither (a figure with nothing to resample): no band, and the difference is never said to
  be beyond noise.

Non-overlap of two 95 % intervals is stricter than a 95 % test of the difference: compare
rather misses a small change than calls noise a regression.
"""

from __future__ import annotations

from dataclasses import dataclass

from relplan.compare.figures import Measured

RESAMPLES = 400
LEVEL = 0.95
SEED = 20261203


@dataclass(frozen=True)
class Band:
    value: float | None
    low: float | None
    high: float | None
    method: str
    runs: list[float | None]


def side_band(measured: list[Measured | None]) -> Band:
    values = [m.value if m is not None else None for m in measured]
    have = [v for v in values if v is not None]
    if not have:
        return Band(None, None, None, "none: no run has it", values)
    mean = sum(have) / len(have)
    if len(have) > 1:
        return Band(mean, min(have), max(have), f"spread of {len(have)} runs", values)
    m = next(m for m in measured if m is not None)
    if m.sampler is None:
        return Band(mean, None, None, m.method, values)
    import numpy as np

    draws = m.sampler(np.random.default_rng(SEED), RESAMPLES)
    draws = draws[np.isfinite(draws)]
    if len(draws) == 0:
        return Band(mean, None, None, "none: every resample was empty", values)
    tail = (1 - LEVEL) / 2 * 100
    low, high = (float(x) for x in np.percentile(draws, [tail, 100 - tail]))
    return Band(mean, min(low, mean), max(high, mean), f"{m.method}, {RESAMPLES} resamples", values)


def difference_band(base: Band, other: Band) -> tuple[float | None, float | None, bool | None]:
    """(low, high, beyond noise) of other - base."""
    if None in (base.low, base.high, other.low, other.high):
        return None, None, None
    assert base.low is not None
    assert base.high is not None
    assert other.low is not None
    assert other.high is not None
    low, high = other.low - base.high, other.high - base.low
    return low, high, not (low <= 0 <= high)
