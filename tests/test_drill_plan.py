"""The drill's plan (relplan/drill/plan.py) and its prompts (relplan/drill/prompts.py)."""

from __future__ import annotations

import math
import random

import pytest

from relplan.drill.plan import PhaseSpec, build_plan, call_id, default_phases, parse_phases
from relplan.drill.prompts import Lengths, make_prompt, parse_lengths, prefix_words
from relplan.errors import UsageError


def test_default_phases_are_the_papers_shape() -> None:
    got = [(p.name, p.seconds, p.rate_x) for p in default_phases()]
    assert got == [
        ("base", 60.0, 0.6),
        ("pulse", 9.0, 2.7),
        ("hold", 180.0, 0.6),
        ("drain", 60.0, None),
    ]


def test_phases_flag_reads_multiples_absolute_rates_and_drains() -> None:
    got = parse_phases("base=60s@0.6,pulse=9@2.7,hold=30s@0.45/s,drain=20s")
    assert got == [
        PhaseSpec("base", 60, rate_x=0.6),
        PhaseSpec("pulse", 9, rate_x=2.7),
        PhaseSpec("hold", 30, rate_per_s=0.45),
        PhaseSpec("drain", 20),
    ]


@pytest.mark.parametrize("bad", ["base", "base=0s@1", "x=1s@a", "a=1s,a=2s"])
def test_a_bad_phase_is_refused_naming_the_flag(bad: str) -> None:
    with pytest.raises(UsageError, match="--phases"):
        parse_phases(bad)


def test_arrival_counts_per_phase_are_within_poisson_bounds() -> None:
    """Ĉ 2/s: base 0.6 Ĉ for 500 s (600 expected), pulse 2.7 Ĉ for 100 s (540), hold for
    500 s (600), drain none; each count within 4 standard deviations of its mean."""
    phases = parse_phases("base=500s@0.6,pulse=100s@2.7,hold=500s@0.6,drain=50s")
    plan = build_plan(phases, capacity=2.0, seed=7)
    for name, mean in (("base", 600), ("pulse", 540), ("hold", 600)):
        n = plan.calls_in(name)
        assert abs(n - mean) < 4 * math.sqrt(mean), (name, n)
    assert plan.calls_in("drain") == 0
    assert plan.duration == 1150
    assert plan.peak_rate == pytest.approx(5.4)
    assert plan.overload_phase == "pulse"
    spans = {s.name: s for s in plan.spans}
    assert all(spans[p].start <= t < spans[p].end for t, p in plan.arrivals)
    assert [t for t, _ in plan.arrivals] == sorted(t for t, _ in plan.arrivals)


def test_a_seed_gives_the_same_plan_and_another_seed_another() -> None:
    phases = default_phases()
    a, b, c = (build_plan(phases, 0.75, s) for s in (3, 3, 4))
    assert a.arrivals == b.arrivals
    assert a.arrivals != c.arrivals


def test_without_a_pulse_the_busiest_phase_is_the_overload() -> None:
    plan = build_plan(parse_phases("a=10s@0.5,b=5s@2,c=10s@0.5"), 1.0, 1)
    assert plan.overload_phase == "b"


def test_a_multiple_of_capacity_needs_capacity() -> None:
    with pytest.raises(UsageError, match="--capacity"):
        build_plan(default_phases(), None, 1)


def test_call_ids_are_numbered_with_six_digits() -> None:
    assert [call_id(i) for i in (0, 1, 123456)] == ["c000000", "c000001", "c123456"]


def test_prompts_share_the_prefix_and_differ_after_it() -> None:
    prefix = prefix_words(8)
    rng = random.Random(1)
    a, b = make_prompt(prefix, 50, rng).split(), make_prompt(prefix, 50, rng).split()
    assert len(a) == len(b) == 50
    assert a[:8] == b[:8] == prefix
    assert a[8:] != b[8:]


def test_length_distributions() -> None:
    rng = random.Random(2)
    assert parse_lengths("64", "--x").draw(rng) == 64
    u = parse_lengths("uniform:10-12", "--x")
    assert {u.draw(rng) for _ in range(200)} == {10, 11, 12}
    n = parse_lengths("normal:100:0", "--x")
    assert n.draw(rng) == 100
    assert Lengths("normal", 1, 50).draw(random.Random(0)) >= 1
    with pytest.raises(UsageError, match="--prompt-tokens"):
        parse_lengths("uniform:5-2", "--prompt-tokens")
