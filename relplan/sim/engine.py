"""A vLLM-V1-like engine: continuous batching with chunked prefill, a prefix cache, a paged KV
cache with preemption by recomputation, and asynchronous scheduling (simulator.md).

Per step (issued by `_issue`):
1. running executions are served first, in admission order: every decoding execution gets one
   token; when one needs a new KV block and none is free, the most recently admitted running
   execution is preempted (blocks freed, put back at the front of the waiting queue, recomputed
   later from scratch, prompt plus the output it had) until the block is free or the needer is
   itself the victim;
2. executions still in prefill get their next chunk within the remaining token budget
   (`max_num_batched_tokens`), with the same preemption rule for their chunk's blocks;
3. if nothing was preempted in this step, waiting executions are admitted first-come-first-
   served while the token budget, `max_num_seqs` and the free blocks for their first chunk
   allow. The shared prefix (full blocks only) is pinned in the cache and counts as a hit: it
   is never computed.
Decode tokens come first: `max_num_seqs <= max_num_batched_tokens` (checked by the scenario
model, as vLLM does), so every running decode always fits in the budget.

Asynchronous scheduling: at most `async_depth` (2) steps are issued and not yet done; the GPU
runs them back to back (a step starts when it is issued or when the previous one is done,
whichever is later). Scheduling state advances when a step is issued; results (first token,
finished) are observed when it is done. An abort removes the execution from scheduling and
frees its blocks at once; steps issued before it still compute its tokens, so they stay in the
trace ("in flight at the abort"), but their outputs are discarded (no `first_token`, no
`finished`, no generation tokens counted).

Choices where vLLM's behaviour is not pinned by the spec:
- output lengths are known to the model, so the scheduler never schedules a token past the
  last one (vLLM may compute one extra token past a stop token under async scheduling);
- an execution whose last token is scheduled stops counting for scheduling but keeps its
  blocks and its `max_num_seqs` slot until that step is done;
- the prefill step that completes a prompt produces the first output token (decode_tokens = 1
  in that step record); a recomputation after a preemption likewise produces the next token;
- `kv_usage` counts the pinned prefix blocks as used.

Speed: decoding executions are not touched per step. They are kept as aggregates (count and
context sum), their block needs are grouped by the step residue at which they cross a block
boundary, and their finishing step is known in advance; an execution decoding over
consecutive steps is recorded as one span (first step, end step) and expanded at write time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Protocol

from relplan.sim.costmodel import CostModel

# Execution states
NEW, WAITING, PREFILL, DECODING, FINISHING, FINISHED, ABORTED, REJECTED = range(8)

# Event codes (index into EVENT_NAMES)
EV_ARRIVED, EV_SCHEDULED, EV_FIRST_TOKEN, EV_PREEMPTED, EV_ABORTED, EV_FINISHED, EV_REJECTED = (
    range(7)
)
EVENT_NAMES = (
    "arrived",
    "scheduled",
    "first_token",
    "preempted",
    "aborted",
    "finished",
    "rejected",
)


class Execution:
    """One request the engine runs. `idx` indexes the run's execution table."""

    __slots__ = (
        "adm",
        "attached",
        "blocks_held",
        "cached",
        "call",
        "cancel_sent",
        "cb",
        "creator",
        "eid",
        "first_done",
        "g0",
        "gen",
        "idx",
        "k0",
        "k_fin",
        "max_tokens",
        "n0",
        "num_computed",
        "out",
        "prompt",
        "scheduled_once",
        "state",
        "target",
    )

    def __init__(
        self, idx: int, eid: str, prompt: int, out: int, max_tokens: int, call: object = None
    ) -> None:
        self.idx = idx
        self.eid = eid
        self.prompt = prompt
        self.out = out
        self.max_tokens = max_tokens
        self.call = call
        self.creator: object = None
        self.attached: list[object] = []
        self.cancel_sent = False
        self.state = NEW
        self.adm = 0
        self.cached = 0
        self.cb = 0
        self.target = prompt
        self.num_computed = 0
        self.gen = 0
        self.g0 = 0
        self.n0 = 0
        self.k0 = 0
        self.k_fin = -1
        self.blocks_held = 0
        self.first_done = False
        self.scheduled_once = False


class EngineListener(Protocol):
    def on_finished(self, ex: Execution, t: float) -> None: ...
    def on_aborted(self, ex: Execution, t: float) -> None: ...
    def on_rejected(self, ex: Execution, t: float) -> None: ...


class EngineConfig:
    __slots__ = (
        "async_depth",
        "block_size",
        "max_num_batched_tokens",
        "max_num_seqs",
        "num_blocks",
        "prefix_tokens",
        "waiting_cap",
    )

    def __init__(
        self,
        *,
        max_num_batched_tokens: int = 8192,
        max_num_seqs: int = 256,
        block_size: int = 16,
        num_blocks: int = 62_500,
        prefix_tokens: int = 2000,
        waiting_cap: int | None = None,
        async_depth: int = 2,
    ) -> None:
        self.max_num_batched_tokens = max_num_batched_tokens
        self.max_num_seqs = max_num_seqs
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.prefix_tokens = prefix_tokens
        self.waiting_cap = waiting_cap
        self.async_depth = async_depth


class Engine:
    def __init__(
        self,
        cfg: EngineConfig,
        cost: CostModel,
        push_done: Callable[[float], None],
        listener: EngineListener,
    ) -> None:
        self.cfg = cfg
        self.bs = cfg.block_size
        self.budget = cfg.max_num_batched_tokens
        self.max_seqs = cfg.max_num_seqs
        self.depth = cfg.async_depth
        self.waiting_cap = cfg.waiting_cap
        self.pinned_blocks = cfg.prefix_tokens // cfg.block_size
        self.free = cfg.num_blocks - self.pinned_blocks
        self.num_blocks = cfg.num_blocks
        # cost coefficients, pre-multiplied by speed and converted to seconds
        s = cost.speed / 1000.0
        self.ca = cost.a_ms * s
        self.cb_ = cost.b_ms_per_token * s
        self.cc = cost.c_ms_per_pair * s
        self.cf = cost.f_ms_per_context_token * s
        self.push_done = push_done
        self.listener = listener

        self.waiting: deque[Execution] = deque()
        self.n_waiting = 0
        self.running: dict[Execution, None] = {}  # admission order; prefill + decoding
        self.prefilling: list[Execution] = []
        self.n_finishing = 0
        self.n_dec = 0
        self.dec_s = 0  # sum over decoders of (n0 - k0 + 1); context sum = dec_s + n_dec * K
        self.buckets: list[dict[Execution, None]] = [{} for _ in range(self.bs)]
        self.fin_cal: dict[int, list[Execution]] = {}
        self.adm_seq = 0
        self.k_next = 0  # next step number to issue
        self.gpu_free = 0.0
        self.inflight: deque[list[object]] = deque()

        # counters (vLLM metrics)
        self.c_prompt = 0
        self.c_gen = 0
        self.c_queries = 0
        self.c_hits = 0
        self.c_preempt = 0
        self.c_stop = 0
        self.c_length = 0

        # records
        self.ev_t: list[float] = []
        self.ev_x: list[int] = []
        self.ev_code: list[int] = []
        self.ev_prompt: list[int | None] = []
        self.pf_step: list[int] = []
        self.pf_x: list[int] = []
        self.pf_comp: list[int] = []
        self.pf_cached: list[int] = []
        self.pf_dec: list[int] = []
        self.sp_x: list[int] = []
        self.sp_k0: list[int] = []
        self.sp_k1: list[int] = []
        self.st_issue: list[float] = []
        self.st_done: list[float] = []
        self.st_running: list[int] = []
        self.st_waiting: list[int] = []
        self.st_batched: list[int] = []
        self.st_kv: list[float] = []

    # ---- helpers -------------------------------------------------------------------------

    def _event(self, t: float, ex: Execution, code: int, prompt: int | None = None) -> None:
        self.ev_t.append(t)
        self.ev_x.append(ex.idx)
        self.ev_code.append(code)
        self.ev_prompt.append(prompt)

    def kv_usage(self) -> float:
        used = self.num_blocks - self.free
        return used / self.num_blocks

    def num_running(self) -> int:
        return len(self.running) + self.n_finishing

    def _leave_decode(self, ex: Execution, k_end: int) -> int:
        """Remove a decoder from the aggregates; record its span; return KV tokens at k_end."""
        self.n_dec -= 1
        self.dec_s -= ex.n0 - ex.k0 + 1
        del self.buckets[(ex.k0 - ex.n0) % self.bs][ex]
        if k_end > ex.k0:
            self.sp_x.append(ex.idx)
            self.sp_k0.append(ex.k0)
            self.sp_k1.append(k_end)
        ex.gen = ex.g0 + (k_end - ex.k0)
        return ex.n0 + (k_end - ex.k0)

    def _join_decode(self, ex: Execution, k0: int) -> None:
        ex.state = DECODING
        ex.k0 = k0
        ex.g0 = ex.gen
        n0 = ex.num_computed
        ex.n0 = n0
        self.n_dec += 1
        self.dec_s += n0 - k0 + 1
        self.buckets[(k0 - n0) % self.bs][ex] = None
        k_fin = k0 + ex.out - ex.gen - 1
        ex.k_fin = k_fin
        cal = self.fin_cal.get(k_fin)
        if cal is None:
            self.fin_cal[k_fin] = [ex]
        else:
            cal.append(ex)

    def _prefill_chunk(
        self,
        k: int,
        ex: Execution,
        nc: int,
        chunk: int,
        cached: int,
        completers: list[Execution],
    ) -> None:
        """Record that `ex` (with `nc` prompt tokens computed) computes `chunk` more in step k,
        `cached` of its tokens found in the prefix cache; a prefill that completes its target
        in this step produces its first decode token and joins `completers`."""
        self.pf_step.append(k)
        self.pf_x.append(ex.idx)
        self.pf_comp.append(chunk)
        self.pf_cached.append(cached)
        nc += chunk
        ex.num_computed = nc
        if nc == ex.target:
            self.pf_dec.append(1)
            completers.append(ex)
        else:
            self.pf_dec.append(0)

    def _preempt(self, ex: Execution, k: int, now: float) -> None:
        bs = self.bs
        if ex.state == DECODING:
            n = self._leave_decode(ex, k)
            self.free += -(-n // bs) - ex.cb
        else:  # PREFILL
            self.free += -(-ex.num_computed // bs) - ex.cb
            self.prefilling.remove(ex)
        del self.running[ex]
        ex.state = WAITING
        ex.target = ex.prompt + ex.gen
        ex.num_computed = 0
        self.waiting.appendleft(ex)
        self.n_waiting += 1
        self.c_preempt += 1
        self._event(now, ex, EV_PREEMPTED)

    def _last_running(self) -> Execution:
        return next(reversed(self.running))

    # ---- inputs --------------------------------------------------------------------------

    def arrive(self, ex: Execution, now: float) -> bool:
        """A request reaches the engine. Returns False when refused (waiting-queue cap)."""
        self._event(now, ex, EV_ARRIVED, ex.prompt)
        if self.waiting_cap is not None and self.n_waiting >= self.waiting_cap:
            ex.state = REJECTED
            self._event(now, ex, EV_REJECTED)
            self.listener.on_rejected(ex, now)
            return False
        bs = self.bs
        ex.cached = min(self.pinned_blocks * bs, ((ex.prompt - 1) // bs) * bs)
        ex.cb = ex.cached // bs
        ex.state = WAITING
        self.waiting.append(ex)
        self.n_waiting += 1
        if len(self.inflight) < self.depth:
            self.try_issue(now)
        return True

    def abort(self, ex: Execution, now: float) -> bool:
        """The engine receives an abort. Returns False when the execution had already ended."""
        st = ex.state
        if st >= FINISHED or st == NEW:
            return False
        bs = self.bs
        if st == WAITING:
            self.n_waiting -= 1  # lazily skipped in the deque
        elif st == PREFILL:
            self.free += -(-ex.num_computed // bs) - ex.cb
            self.prefilling.remove(ex)
            del self.running[ex]
        elif st == DECODING:
            k = self.k_next
            n = self._leave_decode(ex, k)
            self.free += -(-n // bs) - ex.cb
            del self.running[ex]
            for entry in self.inflight:
                if entry[0] >= ex.k0:  # type: ignore[operator]
                    entry[4] -= 1  # type: ignore[operator]
        else:  # FINISHING: last token scheduled, step not done yet
            self.free += ex.blocks_held
            self.n_finishing -= 1
            for entry in self.inflight:
                if ex.k0 <= entry[0] <= ex.k_fin:  # type: ignore[operator]
                    entry[4] -= 1  # type: ignore[operator]
        ex.state = ABORTED
        self._event(now, ex, EV_ABORTED)
        self.listener.on_aborted(ex, now)
        if len(self.inflight) < self.depth:
            self.try_issue(now)
        return True

    # ---- the step loop -------------------------------------------------------------------

    def try_issue(self, now: float) -> None:
        while len(self.inflight) < self.depth:
            if not (self.n_dec or self.prefilling or self.n_waiting):
                return
            if not self._issue(now):
                return

    def _issue(self, now: float) -> bool:
        k = self.k_next
        bs = self.bs
        preempted = False
        running = self.running

        # 1. decoders crossing a block boundary need one block each
        bucket = self.buckets[k % bs]
        need = len(bucket)
        if need:
            if need <= self.free:
                self.free -= need
            else:
                for ex in sorted(bucket, key=_adm_key):
                    if ex.state != DECODING:
                        continue
                    while self.free < 1:
                        victim = next(reversed(running))
                        self._preempt(victim, k, now)
                        preempted = True
                        if victim is ex:
                            break
                    if ex.state == DECODING:
                        self.free -= 1

        n_dec = self.n_dec
        ctx = self.dec_s + n_dec * k
        tokens_left = self.budget - n_dec

        # 2. running prefills, in admission order
        pf_tokens = 0
        attn = 0.0
        completers: list[Execution] = []
        if self.prefilling and tokens_left > 0:
            for ex in list(self.prefilling):
                if tokens_left <= 0:
                    break
                if ex.state != PREFILL:
                    continue
                nc = ex.num_computed
                chunk = ex.target - nc
                if chunk > tokens_left:
                    chunk = tokens_left
                need = -(-(nc + chunk) // bs) - -(-nc // bs)
                while need > self.free:
                    victim = next(reversed(running))
                    self._preempt(victim, k, now)
                    preempted = True
                    if victim is ex:
                        break
                if ex.state != PREFILL:
                    continue
                self.free -= need
                self._prefill_chunk(k, ex, nc, chunk, 0, completers)
                pf_tokens += chunk
                tokens_left -= chunk
                attn += chunk * (nc + chunk * 0.5)

        # 3. admit waiting executions, FCFS, unless something was preempted in this step
        if not preempted and tokens_left > 0 and self.n_waiting:
            waiting = self.waiting
            max_seqs = self.max_seqs
            while waiting and tokens_left > 0:
                ex = waiting[0]
                if ex.state != WAITING:
                    waiting.popleft()
                    continue
                if len(running) + self.n_finishing >= max_seqs:
                    break
                nc = ex.cached
                chunk = ex.target - nc
                if chunk > tokens_left:
                    chunk = tokens_left
                need = -(-(nc + chunk) // bs) - ex.cb
                if need > self.free:
                    break
                waiting.popleft()
                self.n_waiting -= 1
                self.free -= need
                if not ex.scheduled_once:
                    ex.scheduled_once = True
                    self._event(now, ex, EV_SCHEDULED)
                if ex.adm == 0:
                    # first admission from the waiting queue (preempted re-admissions are
                    # kept apart by vLLM and not exported)
                    self.c_queries += ex.prompt
                    self.c_hits += nc
                self.adm_seq += 1
                ex.adm = self.adm_seq
                ex.state = PREFILL
                running[ex] = None
                self.prefilling.append(ex)
                self._prefill_chunk(k, ex, nc, chunk, nc, completers)
                pf_tokens += chunk
                tokens_left -= chunk
                attn += chunk * (nc + chunk * 0.5)

        if n_dec == 0 and pf_tokens == 0:
            return False

        # 4. decoders whose last token is in this step stop being scheduled
        finishers: list[Execution] = []
        cal = self.fin_cal.pop(k, None)
        if cal is not None:
            for ex in cal:
                if ex.state == DECODING and ex.k_fin == k:
                    n = self._leave_decode(ex, k + 1)
                    ex.blocks_held = -(-n // bs) - ex.cb
                    del running[ex]
                    ex.state = FINISHING
                    self.n_finishing += 1
                    finishers.append(ex)

        # 5. prefills completed in this step produce a token; they decode from the next step
        for ex in completers:
            self.prefilling.remove(ex)
            ex.gen += 1
            if ex.gen >= ex.out:
                ex.blocks_held = -(-ex.num_computed // bs) - ex.cb
                del running[ex]
                ex.state = FINISHING
                ex.k0 = k + 1  # its token is counted as a completer, not as a decode
                ex.k_fin = k
                self.n_finishing += 1
                finishers.append(ex)
            else:
                self._join_decode(ex, k + 1)

        cost = self.ca + self.cb_ * (pf_tokens + n_dec) + self.cc * attn + self.cf * ctx
        start = now if now > self.gpu_free else self.gpu_free
        t_done = start + cost
        self.gpu_free = t_done
        self.k_next = k + 1
        self.inflight.append([k, t_done, completers, finishers, n_dec])
        self.push_done(t_done)
        self.st_issue.append(now)
        self.st_done.append(t_done)
        self.st_running.append(len(running) + self.n_finishing)
        self.st_waiting.append(self.n_waiting)
        self.st_batched.append(pf_tokens + n_dec)
        self.st_kv.append((self.num_blocks - self.free) / self.num_blocks)
        return True

    def step_done(self, now: float) -> None:
        entry = self.inflight.popleft()
        completers: list[Execution] = entry[2]  # type: ignore[assignment]
        finishers: list[Execution] = entry[3]  # type: ignore[assignment]
        gen: int = entry[4]  # type: ignore[assignment]
        for ex in completers:
            if ex.state != ABORTED:
                gen += 1
                if not ex.first_done:
                    ex.first_done = True
                    self.c_prompt += ex.prompt
                    self._event(now, ex, EV_FIRST_TOKEN)
        self.c_gen += gen
        listener = self.listener
        for ex in finishers:
            if ex.state == FINISHING:
                ex.state = FINISHED
                self.free += ex.blocks_held
                self.n_finishing -= 1
                self._event(now, ex, EV_FINISHED)
                if ex.out >= ex.max_tokens:
                    self.c_length += 1
                else:
                    self.c_stop += 1
                listener.on_finished(ex, now)
        self.try_issue(now)


def _adm_key(ex: Execution) -> int:
    return ex.adm
