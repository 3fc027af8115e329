"""Open-loop clients: one call per planned arrival, attempts with a deadline, retries.

A call's first attempt is sent at its planned arrival. An attempt ends when its response is
complete (`delivered`), when its deadline passes (`client_gone`: the client leaves), or when
the proxy or engine refuses it (`shed` / `error`, ended at once). A failed attempt (timeout,
429, 503) uses up a retry: the client waits a uniform backoff and sends the next attempt,
up to `max_retries` retries, and never sends an attempt after the call's delivery window has
closed (`t_planned + delivery_window_s`). The end of the last phase only ends the planning of
new calls: retries go on by the client's policy after it, as a real client's would, and the
simulation stops once every call has resolved (delivered, out of attempts, or its delivery
window closed).

Hooks (what a control may change without touching private methods):
- `Clients.retry_policy`: a `RetryPolicy` deciding whether a failed attempt may be followed by
  another (default `RetryWhileAttemptsLeft`: while the call has retries left). The backoff,
  the delivery window and the bookkeeping stay the clients' own, so a policy only says no.
- `Clients.proxy`: any `Upstream` (receive an attempt; hear that its client left), so this
  module does not import the proxy (no import circle; relplan/sim/proxy.py imports it).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from relplan.sim.events import EventKind

if TYPE_CHECKING:
    from relplan.sim.execution import Execution


class Call:
    __slots__ = (
        "attempts",
        "call_id",
        "done",
        "ex",
        "idx",
        "max_tokens",
        "output_tokens",
        "prompt_tokens",
        "t_planned",
    )

    def __init__(
        self,
        idx: int,
        call_id: str,
        t_planned: float,
        prompt_tokens: int,
        output_tokens: int,
        max_tokens: int,
    ) -> None:
        self.idx = idx
        self.call_id = call_id
        self.t_planned = t_planned
        self.prompt_tokens = prompt_tokens
        self.output_tokens = output_tokens
        self.max_tokens = max_tokens
        self.attempts: list[Attempt] = []
        self.done = False
        self.ex: Execution | None = None


class Attempt:
    __slots__ = (
        "attached",
        "call",
        "ex",
        "number",
        "outcome",
        "queued",
        "status",
        "t_cancel",
        "t_end",
        "t_sent",
        "waiting",
    )

    def __init__(self, call: Call, number: int, t_sent: float) -> None:
        self.call = call
        self.number = number  # 0 for the first attempt, then 1, 2, ... for retries
        self.t_sent = t_sent
        self.t_end: float | None = None
        self.outcome: str | None = None
        self.ex: Execution | None = None
        self.attached = False
        self.t_cancel: float | None = None
        self.status: int | None = None
        self.waiting = True
        self.queued = False


class ClientConfig:
    __slots__ = ("backoff_max_s", "backoff_min_s", "deadline_s", "delivery_window_s", "max_retries")

    def __init__(
        self,
        *,
        deadline_s: float | None = 120.0,
        max_retries: int = 3,
        backoff_min_s: float = 0.25,
        backoff_max_s: float = 3.0,
        delivery_window_s: float = 840.0,
    ) -> None:
        self.deadline_s = deadline_s
        self.max_retries = max_retries
        self.backoff_min_s = backoff_min_s
        self.backoff_max_s = backoff_max_s
        self.delivery_window_s = delivery_window_s


class Upstream(Protocol):
    """What the clients send to: the proxy (relplan/sim/proxy.py)."""

    def receive(self, att: Attempt, t: float) -> None: ...

    def client_gone(self, att: Attempt, t: float) -> None: ...


class RetryPolicy(Protocol):
    """Whether a failed attempt (timeout, 429, 503) may be followed by another attempt of its
    call. Asked once per failed attempt, before any backoff is drawn; False ends the call."""

    def may_retry(self, att: Attempt, cfg: ClientConfig) -> bool: ...


class RetryWhileAttemptsLeft:
    """The scenario's client: retry while the call has retries left (`max_retries`)."""

    def may_retry(self, att: Attempt, cfg: ClientConfig) -> bool:
        return att.number < cfg.max_retries


class Clients:
    def __init__(
        self,
        cfg: ClientConfig,
        push: Callable[[float, int, object], None],
        backoff_rng: random.Random,
    ) -> None:
        self.cfg = cfg
        self.push = push
        self.rng = backoff_rng
        self.proxy: Upstream | None = None
        self.retry_policy: RetryPolicy = RetryWhileAttemptsLeft()
        self.attempts: list[Attempt] = []
        self.open_calls = 0

    def send(self, call: Call, t: float) -> None:
        number = len(call.attempts)
        if number == 0:
            self.open_calls += 1
        att = Attempt(call, number, t)
        call.attempts.append(att)
        self.attempts.append(att)
        if self.cfg.deadline_s is not None:
            self.push(t + self.cfg.deadline_s, EventKind.DEADLINE, att)
        assert self.proxy is not None
        self.proxy.receive(att, t)

    def delivered(self, att: Attempt, t: float) -> None:
        att.waiting = False
        att.outcome = "delivered"
        att.status = 200
        att.t_end = t
        call = att.call
        if not call.done:
            call.done = True
            self.open_calls -= 1

    def timeout(self, att: Attempt, t: float) -> None:
        if not att.waiting:
            return
        att.waiting = False
        att.outcome = "client_gone"
        att.t_end = t
        assert self.proxy is not None
        self.proxy.client_gone(att, t)
        self._failed(att, t)

    def refused(self, att: Attempt, t: float, status: int, outcome: str) -> None:
        att.waiting = False
        att.outcome = outcome
        att.status = status
        att.t_end = t
        self._failed(att, t)

    def _failed(self, att: Attempt, t: float) -> None:
        call = att.call
        cfg = self.cfg
        if self.retry_policy.may_retry(att, cfg):
            t_next = t + self.rng.uniform(cfg.backoff_min_s, cfg.backoff_max_s)
            if t_next <= call.t_planned + cfg.delivery_window_s:
                self.push(t_next, EventKind.RETRY, call)
                return
        call.done = True
        self.open_calls -= 1
