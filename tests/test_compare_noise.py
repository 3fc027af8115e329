"""Noise bands: spread of runs, bootstrap of one run, none; a difference is beyond noise
only when the sides' bands do not overlap."""

from __future__ import annotations

from relplan.compare.figures import Measured, _binomial, _bins
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
    assert _bins([1.0, 2.0], [1.0, 1.0], 30)[0] is None
    draw, method = _bins([2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0], 30)
    assert draw is not None
    assert method == "bootstrap over 30 s time bins (4)"
    b = side_band([run_band(Measured(2.0, draw, method))])
    assert (b.low, b.high) == (2.0, 2.0)


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
