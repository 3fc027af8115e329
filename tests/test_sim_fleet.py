"""relplan/sim/fleet.py: N replicas behind a balancer with crashes and drains; the streams
crashes kill match the budget's Little's-law estimate C·N·K.

The bound (stated in the module docstring): the number killed is compound Poisson, so its
standard deviation is sqrt(E[crashes]·(K + K²)); a crash empties its replica, which refills
over about one stream duration, so the simulation runs below the estimate by a fraction of
order crash_rate · mean_stream_s. The test allows 4 standard deviations plus that bias
(two-sided; a correct model fails it with probability about 6e-5 per seed).
"""

from __future__ import annotations

import math

import pytest

from relplan.sim.fleet import FleetConfig, killed_sd, littles_estimate, simulate_fleet

# K = 4 streams/s x 5 s / 4 replicas = 5; C = 0.002/s x 25,000 s = 50 crashes per replica;
# estimate C·N·K = 50 x 4 x 5 = 1000 killed; sd = sqrt(200 x (5 + 25)) = 77.5.
LITTLE = FleetConfig(
    replicas=4, arrival_rate=4.0, mean_stream_s=5.0, crash_rate=0.002, duration_s=25_000.0
)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_streams_killed_match_littles_law_within_sampling_error(seed: int) -> None:
    cfg = FleetConfig(**{**LITTLE.__dict__, "seed": seed})
    res = simulate_fleet(cfg)
    est = littles_estimate(cfg)
    assert est == pytest.approx(1000.0)
    assert killed_sd(cfg) == pytest.approx(math.sqrt(200 * 30))
    bias = est * cfg.crash_rate * cfg.mean_stream_s
    assert abs(res.killed_by_crash - est) <= 4 * killed_sd(cfg) + bias
    assert abs(res.crashes - 200) <= 4 * math.sqrt(200)
    assert res.concurrency_per_replica(cfg) == pytest.approx(5.0, rel=0.05)
    assert sum(res.per_crash) == res.killed_by_crash
    assert res.killed_by_drain == 0


def test_a_drain_lets_every_stream_finish() -> None:
    cfg = FleetConfig(
        replicas=3,
        arrival_rate=3.0,
        mean_stream_s=4.0,
        crash_rate=0.0,
        drain_rate=0.005,
        restart_s=10.0,
        duration_s=4_000.0,
        seed=3,
    )
    res = simulate_fleet(cfg)
    assert res.drains > 10
    assert res.killed_by_crash == res.killed_by_drain == 0
    assert res.streams - res.completed < 3 * 4 * 3  # only those still running at the end


def test_a_drain_cut_short_by_its_grace_kills_the_long_streams() -> None:
    cfg = FleetConfig(
        replicas=3,
        arrival_rate=3.0,
        mean_stream_s=4.0,
        crash_rate=0.0,
        drain_rate=0.005,
        drain_timeout_s=1.0,
        duration_s=4_000.0,
        seed=3,
    )
    res = simulate_fleet(cfg)
    assert res.killed_by_drain > 0
    assert res.killed_by_crash == 0


def test_with_every_replica_down_streams_are_refused() -> None:
    cfg = FleetConfig(
        replicas=1,
        arrival_rate=2.0,
        mean_stream_s=1.0,
        crash_rate=0.01,
        restart_s=50.0,
        duration_s=2_000.0,
        seed=4,
    )
    res = simulate_fleet(cfg)
    assert res.crashes > 0
    assert res.refused > 0
    assert res.streams + res.refused > 3000


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"replicas": 0}, "replicas"),
        ({"mean_stream_s": 0.0}, "mean_stream_s"),
        ({"crash_rate": -1.0}, "crash_rate"),
    ],
)
def test_bad_configs_are_refused(change: dict[str, float], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        FleetConfig(**{**LITTLE.__dict__, **change})
