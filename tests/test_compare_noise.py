"""Noise bands: spread of runs, bootstrap of one run, none; a difference is beyond noise
only when the sides' bands do not overlap."""

from __future__ import annotations

import math

import numpy as np
import pytest

from relplan.compare.figures import (
    Measured,
    _binomial,
    _bins,
    _histogram_bins,
    _per_call,
    _quantiles,
)
from relplan.compare.model import RunValue
from relplan.compare.noise import difference_band, run_band, side_band


def _runs(*values: float) -> list[RunValue | None]:
    return [RunValue(value=v, low=None, high=None, method="x") for v in values]


def test_several_runs_use_their_spread() -> None:
    b = side_band(_runs(0.5, 0.7, 0.6))
    assert b.method == "spread of 3 runs"
    assert (b.low, b.high) == (0.5, 0.7)
    assert b.value is not None
    assert abs(b.value - 0.6) < 1e-12


def test_one_run_is_bootstrapped_and_the_method_named() -> None:
    draw, method = _binomial(1000, 0.3, "calls")
    b = side_band([run_band(Measured(0.3, draw, method))])
    assert b.method.startswith("bootstrap over calls (1,000)")
    assert b.low is not None
    assert b.high is not None
    assert 0.25 < b.low < 0.3 < b.high < 0.35
    assert side_band([run_band(Measured(0.3, draw, method))]) == b  # seeded: the same again


def test_time_bins_need_three_bins() -> None:
    assert _bins([1.0, 2.0], [1.0, 1.0], 30, 1.5) == (
        None,
        "none: 2 time bins with data (3 needed to resample)",
    )
    assert _bins([1.0], [1.0], 30, 1.0)[1] == "none: 1 time bin with data (3 needed to resample)"
    draw, method = _bins([2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0], 30, 2.0)
    assert draw is not None
    assert method == "bootstrap over 30 s time bins (4)"
    b = side_band([run_band(Measured(2.0, draw, method))])
    assert (b.low, b.high) == (2.0, 2.0)


def test_a_time_bin_band_is_centred_on_the_figure_not_on_the_bins_ratio() -> None:
    """The bins approximate the window (pulse-retry-coalesce's steady queue wait: 33.0 s from
    the analysis, 50.8 s from its bins' ratio): the band is the bins' spread around 33.0."""
    num, den = [10.0, 30.0, 20.0, 40.0, 25.0], [1.0, 1.0, 1.0, 1.0, 1.0]  # ratio 25
    draw, method = _bins(num, den, 30, 15.0)
    assert draw is not None
    b = run_band(Measured(15.0, draw, method))
    unshifted = run_band(Measured(25.0, _bins(num, den, 30, 25.0)[0], method))
    assert b.low is not None
    assert b.high is not None
    assert unshifted.low is not None
    assert unshifted.high is not None
    assert b.low < 15.0 < b.high
    assert (b.low, b.high) == pytest.approx((unshifted.low - 10, unshifted.high - 10))


def test_executions_per_call_is_bootstrapped_over_calls() -> None:
    # 90 calls made 1 execution, 10 made 4: 1.3 per call
    draw, method = _per_call([(1, 90), (4, 10)], 1.3)
    assert method == "bootstrap over calls (100)"
    b = run_band(Measured(1.3, draw, method))
    assert b.low is not None
    assert b.high is not None
    # binomial share of 4-execution calls: sd sqrt(.1 * .9 / 100) = 0.03, times 3 executions
    assert 1.1 < b.low < 1.3 < b.high < 1.5
    every = run_band(Measured(4.0, *_per_call([(4, 50)], 4.0)))
    assert (every.low, every.high) == (4.0, 4.0)  # every call made 4: nothing varies


def test_histogram_quantiles_match_the_analyses_estimate() -> None:
    """The vectorised estimate of each resample is relplan/analyses/histograms.py's."""
    from relplan.analyses.histograms import _pct

    les = [0.1, 0.5, 1.0, 5.0, math.inf]
    rng = np.random.default_rng(1)
    rises = rng.integers(0, 5, (50, len(les))).cumsum(axis=1).astype(float)
    for q in (0.5, 0.9, 0.99):
        got = _quantiles(rises, np.array(les), q)
        for row, value in zip(rises, got, strict=True):
            p = _pct(list(zip(les, row, strict=True)), q)
            if p is None:
                assert math.isnan(value)
            else:
                assert value == pytest.approx(p.value)


def test_a_histogram_band_needs_three_bins_with_requests() -> None:
    les = [0.5, 1.0, math.inf]
    few = ([*les], [[1.0, 2.0, 2.0], [0.0, 0.0, 0.0], [0.0, 1.0, 3.0]])
    assert _histogram_bins(few, 10.0, 0.5, 0.75)[0] is None
    many = ([*les], [[1.0, 2.0, 2.0], [0.0, 3.0, 3.0], [0.0, 1.0, 3.0], [2.0, 2.0, 2.0]])
    draw, method = _histogram_bins(many, 10.0, 0.5, 0.75)
    assert method == "bootstrap over 10 s time bins (4)"
    b = run_band(Measured(0.75, draw, method))
    assert b.low is not None
    assert b.high is not None
    assert 0 <= b.low <= 0.75 <= b.high <= 1.0 + 0.75


def test_beyond_noise_only_when_bands_do_not_overlap() -> None:
    a = side_band(_runs(0.5, 0.6))
    near = side_band(_runs(0.55, 0.65))
    far = side_band(_runs(0.7, 0.8))
    assert difference_band(a, near)[2] is False
    low, high, beyond = difference_band(a, far)
    assert beyond is True
    assert low is not None
    assert high is not None
    assert 0 < low <= high
    bare = side_band([run_band(Measured(0.9, None, "none: nothing to resample"))])
    assert difference_band(a, bare) == (None, None, None)  # never called beyond noise
