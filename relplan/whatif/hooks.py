"""Client behaviours the simulator's scenario has no setting for, applied to a built simulation
through the hooks the simulator exposes (relplan/sim/clients.py: `Clients.retry_policy`).

`retry-before-first-token`: a failed attempt whose execution had already produced its first
token is not retried (the call ends there); one that failed before is retried as usual (while
the call has retries left, after the client's own backoff).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from relplan.sim.clients import Attempt, ClientConfig, RetryWhileAttemptsLeft

if TYPE_CHECKING:
    from relplan.sim.simulator import Simulation


class RetryBeforeFirstToken(RetryWhileAttemptsLeft):
    """Retry only an attempt whose execution produced no token (or that never reached one)."""

    def may_retry(self, att: Attempt, cfg: ClientConfig) -> bool:
        ex = att.ex
        if ex is not None and ex.first_token_seen:
            return False
        return super().may_retry(att, cfg)


def retry_before_first_token(sim: Simulation) -> None:
    sim.clients.retry_policy = RetryBeforeFirstToken()


HOOKS: dict[str, Callable[[Simulation], None]] = {
    "retry-before-first-token": retry_before_first_token,
}


def apply(sim: Simulation, hooks: tuple[str, ...]) -> None:
    for name in hooks:
        hook = HOOKS.get(name)
        if hook is None:  # pragma: no cover - a Task carries only names from HOOKS
            raise ValueError(f"unknown simulation hook {name!r}")
        hook(sim)
