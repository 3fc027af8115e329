"""Ĉ by the utilization law over calm bins (relplan/analyses/overload.py, docs/analyses.md,
Verdict): only bins in flow balance count, and the most loaded one gives Ĉ."""

from __future__ import annotations

import pytest

from relplan.analyses.overload import Series, capacity_estimate


def calm_series(arrivals: list[float] | None, completions: list[float]) -> Series:
    """Bins in which nothing waited and the engine was busy 95 % of the time."""
    n = len(completions)
    return Series(
        start_s=[30.0 * k for k in range(n)],
        arrivals=arrivals,
        completions=completions,
        queue=[0.0] * n,
        arrivals_source="calls",
        completions_source="delivered attempts",
        queue_source="the waiting gauge",
        mean_prompt=None,
        busy=[0.95] * n,
    )


def test_the_most_loaded_balanced_bin_gives_the_capacity() -> None:
    # a ramp's levels (each completes what arrives), then a bin draining a pulse's running
    # backlog with nothing waiting: 3.0 completed against 1.5 arrived
    s = calm_series([1.1, 1.4, 1.8, 1.5], [1.1, 1.4, 1.8, 3.0])
    est = capacity_estimate(s, 30.0)
    assert est is not None
    assert est.rate == pytest.approx(1.8 / 0.95)
    assert (est.low, est.high, est.bins) == (pytest.approx(1.1 / 0.95), est.rate, 3)
    assert est.start_s == 60.0
    assert "flow balance" in est.method


def test_without_arrivals_the_pooled_rate_is_used_and_said_so() -> None:
    s = calm_series(None, [1.1, 1.4, 1.8])
    est = capacity_estimate(s, 30.0)
    assert est is not None
    assert est.rate == pytest.approx((1.1 + 1.4 + 1.8) / (3 * 0.95))
    assert est.bins == 3
    assert "no arrival series" in est.method
