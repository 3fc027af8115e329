"""Client retry policies and the retry budget (relplan/drill/policies.py)."""

from __future__ import annotations

import random

import pytest

from relplan.drill.policies import RetryBudget, parse_policy
from relplan.errors import UsageError


class HalfRng(random.Random):
    """random() is always 0.5, so uniform(a, b) is the midpoint: waits are exact."""

    def random(self) -> float:
        return 0.5


def waits(spec: str, n: int, retry_after: float | None = None) -> list[float]:
    pol = parse_policy(spec)
    return [pol.wait_s(k, HalfRng(), retry_after) for k in range(n)]


def test_fixed_waits_are_the_wait() -> None:
    assert parse_policy("fixed:3:0.25").retries == 3
    assert waits("fixed:3:0.25", 3) == [0.25, 0.25, 0.25]


def test_uniform_waits_lie_in_the_range() -> None:
    assert waits("uniform:2:1:3", 2) == [2.0, 2.0]
    pol = parse_policy("uniform:2:1:3")
    rng = random.Random(1)
    assert all(1 <= pol.wait_s(0, rng) <= 3 for _ in range(100))


def test_exponential_waits_are_full_jitter_of_the_capped_doubling() -> None:
    # uniform(0, min(4, 1 * 2^k)) at the midpoint: 0.5, 1, 2, 2
    assert waits("exp:4:1:4", 4) == [0.5, 1.0, 2.0, 2.0]


@pytest.mark.parametrize("sdk", ["openai", "anthropic"])
def test_sdk_defaults_are_two_retries_of_half_a_second_doubling_to_eight(sdk: str) -> None:
    pol = parse_policy(sdk)
    assert pol.retries == 2
    # min(0.5 * 2^k, 8) * (1 - 0.25 * 0.5)
    assert waits(sdk, 6) == [0.4375, 0.875, 1.75, 3.5, 7.0, 7.0]
    assert waits(sdk, 1, retry_after=3.0) == [3.0]
    assert waits(sdk, 1, retry_after=61.0) == [0.4375]  # over 60 s: ignored


def test_a_seed_gives_the_same_waits() -> None:
    pol = parse_policy("openai")
    a = [pol.wait_s(k, random.Random(9)) for k in range(2)]
    b = [pol.wait_s(k, random.Random(9)) for k in range(2)]
    assert a == b
    assert 0.375 <= a[0] <= 0.5


def test_which_failures_are_retried() -> None:
    pol = parse_policy("fixed:1:0")
    assert pol.retryable(None, got_token=False)  # deadline or connection
    assert all(pol.retryable(s, got_token=False) for s in (408, 409, 429, 500, 503))
    assert not any(pol.retryable(s, got_token=False) for s in (400, 401, 404, 422))
    assert pol.retryable(None, got_token=True)
    bft = parse_policy("fixed:1:0", before_first_token=True)
    assert bft.retryable(None, got_token=False)
    assert not bft.retryable(None, got_token=True)


@pytest.mark.parametrize("bad", ["always", "fixed:3", "uniform:1:3:1", "exp:2:0:1", "exp:1:4:2"])
def test_a_bad_policy_is_refused_naming_the_flag(bad: str) -> None:
    with pytest.raises(UsageError, match="--retry"):
        parse_policy(bad)


def test_the_budget_allows_ratio_times_recent_first_attempts() -> None:
    """ratio 0.2, ttl 10 s, no minimum: 10 first attempts at t = 0..9 allow 2 retries."""
    b = RetryBudget(0.2, ttl=10.0)
    for t in range(10):
        b.first_attempt(float(t))
    assert [b.try_retry(9.5) for _ in range(3)] == [True, True, False]
    # at t = 15 the first attempts at 0..5 have left the window (4 remain: 0.8 retries) and
    # the two retries at 9.5 are still in it
    assert not b.try_retry(15.0)
    # at t = 19.6 no first attempt and no retry is in the window: nothing is allowed
    assert not b.try_retry(19.6)


def test_the_budget_minimum_allows_retries_without_traffic() -> None:
    b = RetryBudget(0.0, ttl=10.0, min_per_s=0.2)  # 2 retries per 10 s
    assert [b.try_retry(1.0) for _ in range(3)] == [True, True, False]
    assert b.try_retry(11.5)
