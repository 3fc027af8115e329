"""Client behaviours the simulator has no scenario setting for, applied to a built simulation.

`retry-before-first-token`: a failed attempt whose execution had already produced its first
token is not retried (the call ends there); one that failed before is retried as usual. It
wraps the clients' failure handler of one `Simulation` (relplan.sim.clients.Clients._failed):
while the wrapped handler runs, such an attempt counts as the call's last allowed one, so the
simulator's own bookkeeping ends the call. When the simulator's clients change shape, the
hook says so (`available()` is False) and the control is listed as not replayed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

HOOKS = ("retry-before-first-token",)


def available() -> bool:
    from relplan.sim.clients import Attempt, Clients

    return hasattr(Clients, "_failed") and "number" in Attempt.__slots__


def retry_before_first_token(sim: Any) -> None:
    clients = sim.clients
    original: Callable[[Any, float], None] = clients._failed

    def failed(att: Any, t: float) -> None:
        ex = att.ex
        if ex is None or not getattr(ex, "first_token_seen", False):
            original(att, t)
            return
        number = att.number
        att.number = clients.cfg.max_retries  # no retry left: the call ends
        try:
            original(att, t)
        finally:
            att.number = number

    clients._failed = failed


def apply(sim: Any, hooks: tuple[str, ...]) -> None:
    for name in hooks:
        if name == "retry-before-first-token":
            retry_before_first_token(sim)
        else:  # pragma: no cover - HOOKS lists every name a Task may carry
            raise ValueError(f"unknown simulation hook {name!r}")
