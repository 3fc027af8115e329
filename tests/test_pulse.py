"""relplan pulse: hand-computed backlog arithmetic (docs/planning.md, pulse)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from relplan.planning.pulse import PulseInputs, plan_pulse


def inputs(**kw: object) -> PulseInputs:
    base: dict[str, object] = {
        "capacity_calls_per_s": 2.78,
        "base": 0.6,
        "pulse": 2.7,
        "pulse_seconds": 107.0,
        "hold": 0.6,
        "deadline_s": 120.0,
        "retries": 3,
    }
    base.update(kw)
    return PulseInputs.model_validate(base)


def test_published_pulse_is_a_collapse_risk() -> None:
    """C=2.78/s, pulse 2.7x for 107 s, hold 0.6x, D=120 s, R=3.

    backlog = (2.7 - 1) * 107 = 181.9 s of engine time = 181.9 * 2.78 = 505.68 calls;
    181.9 / 120 = 1.5158x the deadline. Drain = 181.9 / (1 - 0.6) = 454.75 s.
    Retried hold = 0.6 * (1 + 3) = 2.4x capacity = 6.672 calls/s > capacity.
    Largest pulse for 107 s: 1 + 120/107 = 2.1215x; longest at 2.7x: 120 / 1.7 = 70.588 s.
    Retry ratio the hold absorbs: 1/0.6 - 1 = 0.6667. Backlog > D and 2.4 > 1: collapse risk.
    """
    r = plan_pulse(inputs())
    assert r.backlog_seconds == pytest.approx(181.9)
    assert r.backlog_calls == pytest.approx(505.682)
    assert r.backlog_x_deadline == pytest.approx(1.515833, rel=1e-6)
    assert r.drain_seconds == pytest.approx(454.75)
    assert r.retried_hold_x_capacity == pytest.approx(2.4)
    assert r.retried_hold_calls_per_s == pytest.approx(6.672)
    assert r.max_pulse_x_capacity == pytest.approx(2.121495, rel=1e-6)
    assert r.max_pulse_seconds == pytest.approx(70.588235, rel=1e-6)
    assert r.max_retry_ratio == pytest.approx(0.666667, rel=1e-5)
    assert r.verdict == "collapse risk"


def test_short_pulse_drains() -> None:
    """1.5x for 107 s: backlog 53.5 s < 120 s deadline; drains in 53.5/0.4 = 133.75 s."""
    r = plan_pulse(inputs(pulse=1.5))
    assert r.backlog_seconds == pytest.approx(53.5)
    assert r.verdict == "drains"
    assert r.drain_seconds == pytest.approx(133.75)


def test_hold_at_capacity_never_drains_and_says_so() -> None:
    r = plan_pulse(inputs(hold=1.0))
    assert r.drain_seconds is None
    assert r.max_retry_ratio is None
    assert r.verdict == "never drains"
    assert any("never drains" in reason for reason in r.reasons)


def test_backlog_over_deadline_without_retries_drains() -> None:
    """R=0: retried hold = 0.6x < 1, so even a backlog over D drains (181.9/0.4 = 454.75 s)."""
    r = plan_pulse(inputs(retries=0))
    assert r.verdict == "drains"


def test_pulse_within_capacity_leaves_no_backlog() -> None:
    r = plan_pulse(inputs(pulse=0.9))
    assert r.backlog_seconds == 0
    assert r.max_pulse_seconds is None
    assert r.verdict == "no backlog"


@given(p=st.floats(1.01, 10), s=st.floats(1, 1000), d=st.floats(1, 1000))
def test_largest_safe_pulse_leaves_exactly_one_deadline_of_backlog(
    p: float, s: float, d: float
) -> None:
    r = plan_pulse(inputs(pulse=p, pulse_seconds=s, deadline_s=d))
    at_max = plan_pulse(inputs(pulse=r.max_pulse_x_capacity, pulse_seconds=s, deadline_s=d))
    assert at_max.backlog_seconds == pytest.approx(d, rel=1e-9)
    assert r.max_pulse_seconds is not None
    longest = plan_pulse(inputs(pulse=p, pulse_seconds=r.max_pulse_seconds, deadline_s=d))
    assert longest.backlog_seconds == pytest.approx(d, rel=1e-9)
