"""relplan/whatif/fit_lengths.py: lengths drawn from vLLM's per-request histograms."""

from __future__ import annotations

import random

from relplan.whatif.fit_lengths import Histogram, _masses, draw


def test_the_fullest_bucket_takes_the_value_that_makes_the_total_exact() -> None:
    # vllm:request_generation_tokens over tests/data/lab/retries-no-cancel: one 1-token probe,
    # 810 outputs of 32 (sum 25,921)
    buckets = [(1.0, 1.0), (2.0, 0.0), (5.0, 0.0), (10.0, 0.0), (20.0, 0.0), (50.0, 810.0)]
    masses = _masses(buckets, 25_921.0)
    assert masses == [(1, 1.0), (32, 810.0)]


def test_other_buckets_take_their_middle_and_the_total_stays_close() -> None:
    buckets = [(100.0, 30.0), (200.0, 50.0), (500.0, 20.0)]
    total = 30 * 60.0 + 50 * 170.0 + 20 * 300.0
    masses = _masses(buckets, total)
    assert masses[0] == (50, 30.0)
    assert masses[2] == (350, 20.0)
    got = sum(v * n for v, n in masses)
    assert abs(got - total) <= 50  # one rounding per bucket
    assert 100 < masses[1][0] <= 200  # clipped into its own bucket


def test_a_draw_respects_what_was_generated_and_the_cap() -> None:
    h = Histogram(
        "generation", [(50.0, 10.0), (100.0, 10.0)], 1000.0, 20.0, [(25, 10.0), (75, 10.0)]
    )
    rng = random.Random(1)
    assert {draw(rng, h, above=30) for _ in range(50)} == {75}
    assert {draw(rng, h, cap=50) for _ in range(50)} == {25}
    assert draw(rng, h, above=80) == 81  # nothing above what it had generated: one more token
