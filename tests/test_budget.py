"""relplan budget: hand-computed cases (docs/planning.md, budget) and invariants."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from relplan.planning.budget import BudgetInputs, plan_budget

THIRTY_DAYS = 30 * 86400.0


def inputs(**kw: object) -> BudgetInputs:
    base: dict[str, object] = {
        "crashes": 10.0,
        "concurrency": 40.0,
        "replicas": 8,
        "slo": 0.999,
        "window_s": THIRTY_DAYS,
        "stream_seconds": [60.0, 600.0],
        "restart_minutes": 6.0,
        "planned_restarts": 0.0,
        "drain": False,
    }
    base.update(kw)
    return BudgetInputs.model_validate(base)


def test_ten_crashes_forty_streams_hand_computed() -> None:
    """C=10, K=40, N=8, SLO 99.9 %, T=30 d = 2,592,000 s.

    streams killed = 10 * 8 * 40 = 3,200 (the same for every duration).
    d = 60 s:  requests = 8*40/60 * 2,592,000 = 13,824,000; allowed = 0.001 * that = 13,824;
               burn = 3,200 / 13,824 = 0.23148; fraction killed = 10*60/2,592,000 = 2.3148e-4.
    d = 600 s: requests = 1,382,400; allowed = 1,382.4; burn = 2.3148 (blows the budget 2.3x).
    break-even = 0.001 * 2,592,000 / 10 = 259.2 s.
    capacity lost = (10 + 0) * 6 min * 8 = 480 replica-minutes; share = 480 / (8 * 43,200) = 0.13889 %.
    """
    res = plan_budget(inputs())
    r60, r600 = res.baseline.rows
    assert r60.streams_killed == 3200
    assert r60.requests == pytest.approx(13_824_000)
    assert r60.allowed_failures == pytest.approx(13_824)
    assert r60.burn == pytest.approx(0.231481, rel=1e-5)
    assert r60.fraction_killed == pytest.approx(2.3148e-4, rel=1e-4)
    assert r600.burn == pytest.approx(2.31481, rel=1e-5)
    assert r600.verdict == "blows the budget 2.3× on crashes alone"
    assert r60.verdict == "uses 23 % of the budget on crashes alone"
    assert res.baseline.break_even_stream_seconds == pytest.approx(259.2)
    assert res.baseline.capacity_lost_replica_minutes == pytest.approx(480)
    assert res.baseline.capacity_lost_share == pytest.approx(0.0013889, rel=1e-4)


def test_undrained_planned_restarts_kill_streams_and_the_drain_what_if_removes_them() -> None:
    """C=10, P=2 undrained, d=300 s: killed = (10+2)*8*40 = 3,840; requests = 320/300*2,592,000
    = 2,764,800; allowed = 2,764.8; burn = 1.38889. Drained: killed 3,200, burn 1.15741.
    Capacity lost counts every restart: (10+2)*6*8 = 576 replica-minutes either way.
    Halving crashes: killed (5+2)*320 = 2,240, burn 0.81019.
    """
    res = plan_budget(inputs(planned_restarts=2.0, stream_seconds=[300.0]))
    assert res.baseline.rows[0].streams_killed == 3840
    assert res.baseline.rows[0].burn == pytest.approx(1.388889, rel=1e-5)
    assert "undrained restarts" in res.baseline.rows[0].verdict
    halve, drained = res.what_if
    assert halve.name == "halve crashes"
    assert halve.rows[0].burn == pytest.approx(0.810185, rel=1e-5)
    assert drained.rows[0].streams_killed == 3200
    assert drained.rows[0].burn == pytest.approx(1.157407, rel=1e-5)
    assert drained.capacity_lost_replica_minutes == pytest.approx(576)
    assert res.baseline.capacity_lost_replica_minutes == pytest.approx(576)


@given(
    crashes=st.floats(0.1, 1e3),
    k=st.floats(0.1, 1e3),
    d=st.floats(0.5, 1e4),
    factor=st.floats(1.1, 50),
)
def test_burn_grows_linearly_with_crashes_and_with_stream_duration(
    crashes: float, k: float, d: float, factor: float
) -> None:
    one = plan_budget(inputs(crashes=crashes, concurrency=k, stream_seconds=[d])).baseline
    more_crashes = plan_budget(
        inputs(crashes=crashes * factor, concurrency=k, stream_seconds=[d])
    ).baseline
    longer = plan_budget(
        inputs(crashes=crashes, concurrency=k, stream_seconds=[d * factor])
    ).baseline
    assert more_crashes.rows[0].burn == pytest.approx(one.rows[0].burn * factor, rel=1e-9)
    assert longer.rows[0].burn == pytest.approx(one.rows[0].burn * factor, rel=1e-9)
    # Capacity lost depends on restarts, not on how long streams are.
    assert longer.capacity_lost_replica_minutes == one.capacity_lost_replica_minutes


@given(crashes=st.floats(0.01, 1e4), k=st.floats(0.1, 1e3), slo=st.floats(0.5, 0.99999))
def test_break_even_duration_is_where_burn_equals_one(crashes: float, k: float, slo: float) -> None:
    be = plan_budget(inputs(crashes=crashes, concurrency=k, slo=slo)).baseline
    at = plan_budget(
        inputs(
            crashes=crashes, concurrency=k, slo=slo, stream_seconds=[be.break_even_stream_seconds]
        )
    )
    assert math.isclose(at.baseline.rows[0].burn, 1.0, rel_tol=1e-9)
