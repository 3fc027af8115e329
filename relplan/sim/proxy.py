"""The proxy between clients and the engine, with the overload controls of docs/simulate.md, The model.

For each attempt that reaches it, in this order:
1. retry budget (retries only): refused with 429 unless the retries admitted in the last
   `window_s` seconds, this one included, stay within `ratio` x the first attempts seen in
   the same window (no minimum rate). A refused retry is a failed attempt for the client.
2. coalescing (retries only, when attempts carry a stable call id): key = call id +
   generation parameters (identical for every attempt of a call in the simulator). The retry
   attaches to its call's latest execution while that execution is waiting or running at the
   engine and no abort has been sent for it. The response goes to whichever attempt is still
   waiting when it completes; a response that completes with no attempt waiting is dropped.
3. concurrency cap: at most `max_outstanding` executions outstanding at the engine (sent and
   not yet finished, aborted or refused); the excess waits at the proxy in a queue of at most
   `queue_limit` (unlimited when not set), served `fifo` or `newest_first` as slots free up;
   an attempt that finds the queue full is refused (503, outcome `shed`).
4. forward: a new execution is created and sent to the engine, which may refuse it at its
   own waiting-queue cap (`arrived` then `rejected`; the attempt fails with 503, outcome
   `error`, and keeps the execution id).

When an attempt's client leaves (its deadline passes), cancellation decides:
- `off`: nothing; the execution keeps running (and a queued attempt is still forwarded later);
- `immediate`: abort now;
- `deferred(s)`: after s seconds, abort only if no other attempt of the call is attached to the
  execution and still waiting.
An attempt still queued at the proxy when cancellation acts is dropped from the queue instead.
The abort reaches the engine `abort_delay_s` after the proxy sends it (default 0).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from relplan.sim.engine import Engine
from relplan.sim.events import EventKind
from relplan.sim.execution import FINISHED, NEW, Execution

if TYPE_CHECKING:
    from relplan.sim.clients import Attempt, Clients


class ProxyConfig:
    __slots__ = (
        "abort_delay_s",
        "budget_ratio",
        "budget_window_s",
        "cancel_delay_s",
        "cancellation",
        "coalesce",
        "max_outstanding",
        "queue_limit",
        "queue_newest_first",
        "stable_call_id",
    )

    def __init__(
        self,
        *,
        cancellation: str = "off",
        cancel_delay_s: float = 0.0,
        budget_ratio: float | None = None,
        budget_window_s: float = 60.0,
        coalesce: bool = False,
        max_outstanding: int | None = None,
        queue_limit: int | None = None,
        queue_newest_first: bool = False,
        abort_delay_s: float = 0.0,
        stable_call_id: bool = True,
    ) -> None:
        self.cancellation = cancellation  # off | immediate | deferred
        self.cancel_delay_s = cancel_delay_s
        self.budget_ratio = budget_ratio
        self.budget_window_s = budget_window_s
        self.coalesce = coalesce
        self.max_outstanding = max_outstanding
        self.queue_limit = queue_limit
        self.queue_newest_first = queue_newest_first
        self.abort_delay_s = abort_delay_s
        self.stable_call_id = stable_call_id


class Proxy:
    def __init__(
        self,
        cfg: ProxyConfig,
        push: Callable[[float, int, object], None],
        new_execution: Callable[[Attempt], Execution],
    ) -> None:
        self.cfg = cfg
        self.push = push
        self.new_execution = new_execution
        self.engine: Engine | None = None
        self.clients: Clients | None = None
        self.firsts: deque[float] = deque()
        self.retries: deque[float] = deque()
        self.outstanding = 0
        self.queue: deque[Attempt] = deque()
        self.n_queued = 0
        self.coalesce = cfg.coalesce and cfg.stable_call_id

    # ---- attempts in ---------------------------------------------------------------------

    def receive(self, att: Attempt, t: float) -> None:
        cfg = self.cfg
        assert self.clients is not None
        if cfg.budget_ratio is not None:
            lo = t - cfg.budget_window_s
            firsts, retries = self.firsts, self.retries
            while firsts and firsts[0] <= lo:
                firsts.popleft()
            while retries and retries[0] <= lo:
                retries.popleft()
            if att.number == 0:
                firsts.append(t)
            elif len(retries) + 1 > cfg.budget_ratio * len(firsts):
                self.clients.refused(att, t, 429, "shed")
                return
            else:
                retries.append(t)
        if self.coalesce and att.number > 0:
            ex = att.call.ex
            if ex is not None and NEW < ex.state < FINISHED and not ex.cancel_sent:
                att.ex = ex
                att.attached = True
                ex.attached.append(att)
                return
        cap = cfg.max_outstanding
        if cap is not None and self.outstanding >= cap:
            if cfg.queue_limit is not None and self.n_queued >= cfg.queue_limit:
                self.clients.refused(att, t, 503, "shed")
                return
            att.queued = True
            self.queue.append(att)
            self.n_queued += 1
            return
        self._forward(att, t)

    def _forward(self, att: Attempt, t: float) -> None:
        ex = self.new_execution(att)
        att.ex = ex
        ex.attached.append(att)
        att.call.ex = ex
        self.outstanding += 1
        assert self.engine is not None
        self.engine.arrive(ex, t)

    def _release(self, t: float) -> None:
        self.outstanding -= 1
        cap = self.cfg.max_outstanding
        if cap is None:
            return
        queue = self.queue
        newest = self.cfg.queue_newest_first
        while queue and self.outstanding < cap:
            att = queue.pop() if newest else queue.popleft()
            if not att.queued:
                continue
            att.queued = False
            self.n_queued -= 1
            self._forward(att, t)

    # ---- engine results (EngineListener) -------------------------------------------------

    def on_finished(self, ex: Execution, t: float) -> None:
        assert self.clients is not None
        for att in ex.attached:
            if att.waiting:  # type: ignore[attr-defined]
                self.clients.delivered(att, t)  # type: ignore[arg-type]
                break
        self._release(t)

    def on_aborted(self, ex: Execution, t: float) -> None:
        self._release(t)

    def on_rejected(self, ex: Execution, t: float) -> None:
        assert self.clients is not None
        att = ex.creator
        self.clients.refused(att, t, 503, "error")  # type: ignore[arg-type]
        self._release(t)

    # ---- clients leaving -----------------------------------------------------------------

    def client_gone(self, att: Attempt, t: float) -> None:
        mode = self.cfg.cancellation
        if mode == "off":
            return
        if mode == "immediate":
            self.cancel(att, t)
        else:
            self.push(t + self.cfg.cancel_delay_s, EventKind.CANCEL, att)

    def cancel(self, att: Attempt, t: float) -> None:
        """Cancellation acts for an attempt whose client left (now, or after the delay)."""
        if att.queued:
            att.queued = False
            self.n_queued -= 1
            return
        ex = att.ex
        if ex is None or ex.state >= FINISHED or ex.cancel_sent:
            return
        for other in ex.attached:
            if other.waiting:  # type: ignore[attr-defined]
                return
        ex.cancel_sent = True
        att.t_cancel = t
        if self.cfg.abort_delay_s > 0:
            self.push(t + self.cfg.abort_delay_s, EventKind.ABORT, ex)
        else:
            assert self.engine is not None
            self.engine.abort(ex, t)
