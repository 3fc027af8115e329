"""The retry-before-first-token hook: a call is retried only after attempts that failed
before their execution produced a token."""

from __future__ import annotations

from relplan.sim.clients import RetryWhileAttemptsLeft
from relplan.sim.run import prepare
from relplan.sim.simulator import Simulation
from relplan.whatif.hooks import RetryBeforeFirstToken, apply

# A short pulse with a 5 s deadline: attempts time out both before and after their first token.
SETS = [
    "workload.phases.0.seconds=20",
    "workload.phases.1.seconds=20",
    "workload.phases.2.seconds=30",
    "client.deadline_s=5",
    'proxy.cancellation="immediate"',
]


def _retries_after_a_first_token(hooks: tuple[str, ...]) -> tuple[int, int]:
    p = prepare("pulse-retry", SETS, 1)
    sim = Simulation(p.scenario, p.profile, p.capacity, p.scenario.seed)
    apply(sim, hooks)
    sim.run()
    after_token = retries = 0
    for call in sim.calls:
        for prev, nxt in zip(call.attempts, call.attempts[1:], strict=False):
            retries += 1
            if prev.ex is not None and prev.ex.first_token_seen and not nxt.attached:
                after_token += 1
    return after_token, retries


def test_the_hook_sets_the_clients_public_retry_policy_and_nothing_else() -> None:
    p = prepare("pulse-retry", SETS, 1)
    sim = Simulation(p.scenario, p.profile, p.capacity, p.scenario.seed)
    before = {k: v for k, v in vars(sim.clients).items() if k != "retry_policy"}
    assert type(sim.clients.retry_policy) is RetryWhileAttemptsLeft
    apply(sim, ("retry-before-first-token",))
    assert isinstance(sim.clients.retry_policy, RetryBeforeFirstToken)
    assert {k: v for k, v in vars(sim.clients).items() if k != "retry_policy"} == before


def test_without_the_hook_calls_are_retried_after_their_first_token() -> None:
    after, retries = _retries_after_a_first_token(())
    assert retries > 0
    assert after > 0


def test_with_the_hook_no_call_is_retried_after_its_first_token() -> None:
    after, retries = _retries_after_a_first_token(("retry-before-first-token",))
    assert after == 0
    assert retries > 0  # attempts that failed before their first token still retry
