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
from typing import TYPE_CHECKING

from relplan.compare.model import RunValue

if TYPE_CHECKING:
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


def run_band(m: Measured) -> RunValue:
    """One run's band: the bootstrap of its sampler, or none when it has none."""
    if m.sampler is None:
        return RunValue(value=m.value, low=None, high=None, method=m.method)
    import numpy as np

    draws = m.sampler(np.random.default_rng(SEED), RESAMPLES)
    draws = draws[np.isfinite(draws)]
    if len(draws) == 0:
        return RunValue(value=m.value, low=None, high=None, method="none: every resample was empty")
    tail = (1 - LEVEL) / 2 * 100
    low, high = (float(x) for x in np.percentile(draws, [tail, 100 - tail]))
    return RunValue(
        value=m.value,
        low=min(low, m.value),
        high=max(high, m.value),
        method=f"{m.method}, {RESAMPLES} resamples",
    )


def side_band(per_run: list[RunValue | None]) -> Band:
    """A side's band: the spread of its runs when it has several, else its one run's band."""
    values = [r.value if r is not None else None for r in per_run]
    have = [r for r in per_run if r is not None]
    if not have:
        return Band(None, None, None, "none: no run has it", values)
    mean = sum(r.value for r in have) / len(have)
    if len(have) > 1:
        return Band(
            mean,
            min(r.value for r in have),
            max(r.value for r in have),
            f"spread of {len(have)} runs",
            values,
        )
    one = have[0]
    return Band(one.value, one.low, one.high, one.method, values)


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
