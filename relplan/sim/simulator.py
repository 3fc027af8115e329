"""The discrete-event loop that wires clients, proxy, engine and the metrics scraper.

Time runs in seconds from t0 (0.0); the writer adds the run's epoch t0. Events are run in
(time, insertion number) order, so ties resolve in a fixed order and a seed gives the same
run byte for byte: they sit in one heap, but for the engine's steps' ends (most events),
which come in that order already and queue apart (`_push_done`). Event kinds: `EventKind`
(events.py).

The run ends after the last phase once every call has resolved (delivered, or out of retries
or delivery window), at the next metrics scrape, so the metrics end with a sample of the
final state. The last phase's end stops the planning of new calls only: retries of planned
calls are still sent after it (see clients.py).
"""

from __future__ import annotations

import itertools
import math
import random
from collections import deque
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush
from typing import NamedTuple

from relplan.sim.clients import Attempt, Call, ClientConfig, Clients
from relplan.sim.engine import Engine
from relplan.sim.events import EventKind
from relplan.sim.execution import EngineConfig, Execution
from relplan.sim.profiles import Profile
from relplan.sim.proxy import Proxy, ProxyConfig
from relplan.sim.scenario import Scenario
from relplan.sim.workloads import make_calls, phase_bounds


class Sample(NamedTuple):
    """One metrics scrape of the engine: its gauges and counters at `t`."""

    t: float
    running: int
    waiting: int
    kv_usage: float
    prompt_tokens: int
    generation_tokens: int
    prefix_cache_queries: int
    prefix_cache_hits: int
    preemptions: int
    success_stop: int
    success_length: int


@dataclass
class Simulation:
    scenario: Scenario
    profile: Profile
    capacity: float | None
    seed: int
    heap: list[tuple[float, int, int, object]] = field(default_factory=list)
    # the engine's steps' ends, (time, number), apart from the heap (`_push_done`)
    done: deque[tuple[float, int]] = field(default_factory=deque)
    calls: list[Call] = field(default_factory=list)
    executions: list[Execution] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)
    now: float = 0.0
    finished: bool = False
    # False: the engine keeps no per-step records (Engine's record_steps): the engine
    # trace's step and stats rows cannot be written; its events, the proxy log and the
    # metrics are the same. The what-if replay, which measures no step, runs without them.
    record_steps: bool = True

    def __post_init__(self) -> None:
        scn = self.scenario
        self._seq = itertools.count()
        self._stopping = False
        self.phases = phase_bounds(scn.workload)
        self.t_end = self.phases[-1][2]
        (times, prompts, outs), maxt = make_calls(scn, self.capacity, self.seed)
        deadline = scn.client.deadline_s
        self.clients = Clients(
            ClientConfig(
                deadline_s=None if math.isinf(deadline) else deadline,
                max_retries=scn.client.max_retries,
                backoff_min_s=scn.client.backoff_min_s,
                backoff_max_s=scn.client.backoff_max_s,
                delivery_window_s=scn.client.delivery_window_s,
            ),
            self.push,
            random.Random(f"relplan/backoff/{self.seed}"),
        )
        mode, delay = scn.proxy.cancel_mode()
        rb = scn.proxy.retry_budget
        self.proxy = Proxy(
            ProxyConfig(
                cancellation=mode,
                cancel_delay_s=delay,
                budget_ratio=None if rb is None else rb.ratio,
                budget_window_s=60.0 if rb is None else rb.window_s,
                coalesce=scn.proxy.coalesce,
                max_outstanding=scn.proxy.max_outstanding,
                queue_limit=scn.proxy.queue_limit,
                queue_newest_first=scn.proxy.queue_order == "newest_first",
                abort_delay_s=scn.proxy.abort_delay_s,
                stable_call_id=scn.client.stable_call_id,
            ),
            self.push,
            self._new_execution,
        )
        e = scn.engine
        self.engine = Engine(
            EngineConfig(
                max_num_batched_tokens=e.max_num_batched_tokens,
                max_num_seqs=e.max_num_seqs,
                block_size=e.block_size,
                num_blocks=e.num_blocks,
                prefix_tokens=scn.workload.prefix_tokens,
                waiting_cap=e.waiting_cap,
                max_num_queued_reqs=e.max_num_queued_reqs,
                max_num_queued_tokens=e.max_num_queued_tokens,
                async_depth=e.async_depth,
                retry_prompt_cached=e.retry_prompt_cached,
            ),
            self.profile.cost_model(),
            self._push_done,
            self.proxy,
            record_steps=self.record_steps,
        )
        self.proxy.engine = self.engine
        self.proxy.clients = self.clients
        self.clients.proxy = self.proxy
        width = max(5, len(str(len(times))))
        seq, arrival, heap = self._seq, EventKind.ARRIVAL, self.heap
        for i, (t, prompt, output, max_tokens) in enumerate(
            zip(times, prompts, outs, maxt, strict=False)
        ):
            call = Call(i, f"call-{i:0{width}d}", t, prompt, output, max_tokens)
            self.calls.append(call)
            heap.append((t, next(seq), arrival, call))
        self.scrape_s = scn.metrics.scrape_interval_s
        heap.append((0.0, next(seq), EventKind.SCRAPE, None))
        # one heapify instead of a push per call: the (time, number) keys are unique, so the
        # events come off in the same order
        heapify(heap)

    def add_call(
        self, t: float, prompt_tokens: int, output_tokens: int, max_tokens: int = 2048
    ) -> Call:
        """Plan one more call (tests and hand-built timelines); ids continue the sequence."""
        n = len(self.calls)
        call = Call(n, f"call-{n:05d}", t, prompt_tokens, output_tokens, max_tokens)
        self.calls.append(call)
        self.push(t, EventKind.ARRIVAL, call)
        return call

    def push(self, t: float, kind: int, obj: object) -> None:
        heappush(self.heap, (t, next(self._seq), kind, obj))

    def _push_done(self, t: float) -> None:
        # A step is done after the one issued before it (the GPU runs them back to back), so
        # the steps' ends queue apart from the heap, already in (time, number) order; the loop
        # takes from whichever is first. One that would end earlier goes to the heap instead.
        done = self.done
        if done and t < done[-1][0]:
            heappush(self.heap, (t, next(self._seq), EventKind.STEP_DONE, None))
        else:
            done.append((t, next(self._seq)))

    def _new_execution(self, att: Attempt) -> Execution:
        call = att.call
        ex = Execution(
            len(self.executions),
            f"{call.call_id}-{att.number}",
            call.prompt_tokens,
            call.output_tokens,
            call.max_tokens,
            call,
        )
        ex.creator = att
        self.executions.append(ex)
        return ex

    def _scrape(self, t: float) -> None:
        e = self.engine
        self.samples.append(
            Sample(
                t,
                len(e.running) + e.n_finishing,
                e.n_waiting,
                (e.num_blocks - e.free) / e.num_blocks,
                e.prompt_tokens_total,
                e.generation_tokens_total,
                e.prefix_queries_total,
                e.prefix_hits_total,
                e.preemptions_total,
                e.success_stop_total,
                e.success_length_total,
            )
        )

    def advance(self, until: float = math.inf) -> bool:
        """Run events up to `until` (exclusive); True when the run has ended."""
        heap = self.heap
        engine = self.engine
        clients = self.clients
        proxy = self.proxy
        step_done = engine.step_done
        decode_run = engine.decode_run
        seq = self._seq
        send = clients.send
        t_end = self.t_end
        scrape_s = self.scrape_s
        # the kinds as locals: the loop compares them once per event
        step_done_kind = EventKind.STEP_DONE
        sends = (EventKind.ARRIVAL, EventKind.RETRY)
        deadline = EventKind.DEADLINE
        cancel = EventKind.CANCEL
        abort = EventKind.ABORT
        done = self.done
        while heap or done:
            if done and (not heap or done[0] < heap[0]):
                t = done[0][0]
                if t >= until:
                    self.now = until
                    return False
                done.popleft()
                kind = step_done_kind
            else:
                if heap[0][0] >= until:
                    self.now = until
                    return False
                t, _, kind, obj = heappop(heap)
            if kind == step_done_kind:
                step_done(t)
                if done:  # the plain decode steps that follow, in the engine's own loop
                    last = decode_run(done, seq, heap[0] if heap else None, until)
                    if last is not None:
                        t = last
            elif kind in sends:
                send(obj, t)  # type: ignore[arg-type]
            elif kind == deadline:
                clients.timeout(obj, t)  # type: ignore[arg-type]
            elif kind == cancel:
                proxy.cancel(obj, t)  # type: ignore[arg-type]
            elif kind == abort:
                engine.abort(obj, t)  # type: ignore[arg-type]
            else:  # EventKind.SCRAPE
                self._scrape(t)
                if self._stopping:
                    self.now = t
                    break
                heappush(heap, (t + scrape_s, next(self._seq), EventKind.SCRAPE, None))
            if not self._stopping and t >= t_end and clients.open_calls == 0:
                # every call has resolved: run on to the next scrape, so the metrics end
                # with a sample of the final state, and stop there
                self._stopping = True
        self.finished = True
        return True

    def run(self) -> Simulation:
        self.advance()
        return self
