"""A vLLM-V1-like engine: continuous batching with chunked prefill, a prefix cache, a paged KV
cache with preemption by recomputation, and asynchronous scheduling (docs/simulate.md, The model).

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

Prefix cache (vLLM V1's default, `enable_prefix_caching`): free blocks form one queue,
evicted from its head (least recently freed first) when a block is allocated; a freed
execution's blocks join its tail, its last block first, so eviction eats an execution's
blocks from the end of its token chain. The full blocks a preempted execution frees keep
their content until evicted: re-admitted, it finds the blocks of its chain still cached
(the shared prefix, then its own, up to one token short of its target, as vLLM's lookup
stops) and computes only the rest. Other freed blocks are never hit (a retry is a new
request and is not matched to its predecessor's blocks: docs/simulate.md, The model), unless
`retry_prompt_cached` is set: then a retry resends its call's prompt, and vLLM's cache, which
is addressed by content, finds the call's full prompt blocks wherever an earlier execution of
the call left them: held by one still running (counted again as the retry's own blocks: the
sharing of blocks is not modelled) or freed by the call's last execution and not yet evicted
(taken back out of the free queue, as a preempted execution's are).

Admission control (vLLM's `--max-num-queued-reqs` / `--max-num-queued-tokens`, checked
when a request arrives): refused when the requests in the engine (waiting, preempted
included, and running) have reached `max_num_queued_reqs`, or when the prompt tokens of the
requests still before their first token plus its own would pass `max_num_queued_tokens`.
`waiting_cap` is the older, non-vLLM rule: refused while that many wait.
Decode tokens come first: `max_num_seqs <= max_num_batched_tokens` (checked by the scenario
model, as vLLM does), so every running decode always fits in the budget.

Asynchronous scheduling: at most `async_depth` (2) steps are issued and not yet done; the GPU
runs them back to back (a step starts when it is issued or when the previous one is done,
whichever is later). Scheduling state advances when a step is issued; results (first token,
finished) are observed when it is done. An abort removes the execution from scheduling and
frees its blocks at once; steps issued before it still compute its tokens, so they stay in the
trace ("in flight at the abort"), but their outputs are discarded (no `first_token`, no
`finished`, no generation tokens counted).

Choices where vLLM's behaviour leaves one (docs/simulate.md, The model):
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
from collections.abc import Callable, Iterator
from typing import Any

from relplan.sim.costmodel import CostModel
from relplan.sim.execution import (
    ABORTED,
    DECODING,
    FINISHED,
    FINISHING,
    NEW,
    PREFILL,
    REJECTED,
    WAITING,
    EngineConfig,
    EngineEvent,
    EngineListener,
    Execution,
)

# An issued step whose results are not observed yet: a list (built once per step, where a
# class instance costs 3 % of a run) [step, t_done, completers, finishers, decode_tokens]:
# completers are the prefills completed in it (each produced a token), finishers the
# executions whose last token it computes, decode_tokens the tokens of running decoders (an
# abort takes its execution's tokens out of the steps still in flight).
InFlightStep = list[Any]
# the completers and finishers of a step that has none (`decode_run`): read, never added to
_NONE: tuple[Execution, ...] = ()


class _Chain:
    """The freed prompt blocks of a call (retry_prompt_cached): its segment of the free queue,
    None once evicted or found again."""

    __slots__ = ("cache_seg",)

    def __init__(self) -> None:
        self.cache_seg: list[Any] | None = None


_STEP = 0
_DECODE_TOKENS = 4


class Engine:
    def __init__(
        self,
        cfg: EngineConfig,
        cost: CostModel,
        push_done: Callable[[float], None],
        listener: EngineListener,
        *,
        record_steps: bool = True,
    ) -> None:
        self.cfg = cfg
        # False: the per-step records below (prefill rows, decode spans, step rows) are not
        # kept; what only the engine trace's step and stats rows read (the what-if replay
        # measures the events alone). Scheduling, events and counters are the same.
        self.record_steps = record_steps
        self.block_size = cfg.block_size
        self.token_budget = cfg.max_num_batched_tokens
        self.max_seqs = cfg.max_num_seqs
        self.async_depth = cfg.async_depth
        self.waiting_cap = cfg.waiting_cap
        self.max_queued_reqs = cfg.max_num_queued_reqs
        self.max_queued_tokens = cfg.max_num_queued_tokens
        self.prefill_prompt_tokens = 0  # prompts of accepted requests before their first token
        self.pinned_blocks = cfg.prefix_tokens // cfg.block_size
        self.free = cfg.num_blocks - self.pinned_blocks
        # the free-block queue, as runs [owner, blocks]: owner None for blocks whose content
        # nobody will look up, else the preempted execution whose chain they hold
        self.free_queue: deque[list[Any]] = deque([[None, self.free]]) if self.free else deque()
        self.num_blocks = cfg.num_blocks
        # cost coefficients, pre-multiplied by speed and converted to seconds
        s = cost.speed / 1000.0
        self.cost_per_step_s = cost.a_ms * s
        self.cost_per_token_s = cost.b_ms_per_token * s
        self.cost_per_decode_s = cost.decode_seq_ms * s
        self.cost_per_pair_s = cost.c_ms_per_pair * s
        self.cost_per_context_token_s = cost.f_ms_per_context_token * s
        self.wave_seqs = cost.wave_seqs
        self.floor_s = cost.floor_ms * s
        self.floor_per_seq_s = cost.floor_ms_per_seq * s
        self.floor_per_context_token_s = cost.floor_ms_per_context_token * s
        self.push_done = push_done
        self.listener = listener

        self.waiting: deque[Execution] = deque()
        self.n_waiting = 0
        self.running: dict[Execution, None] = {}  # admission order; prefill + decoding
        self.prefilling: list[Execution] = []
        self.n_finishing = 0
        self.n_decoding = 0
        # sum over decoders of (tokens_at_join - decode_from_step + 1): their context at
        # step k is this sum + n_decoding * k
        self.decode_offset_sum = 0
        # decoders by the step residue (mod block_size) at which they need a new block
        self.block_boundary: list[dict[Execution, None]] = [{} for _ in range(self.block_size)]
        self.last_step_due: dict[int, list[Execution]] = {}  # step -> decoders ending there
        self.admissions = 0
        self.next_step = 0  # number of the next step to issue
        self.gpu_free_at = 0.0
        self.in_flight: deque[InFlightStep] = deque()
        # retry_prompt_cached: per call, its executions holding blocks, and its freed chain
        self.retry_cache = cfg.retry_prompt_cached
        self.call_live: dict[object, int] = {}
        self.call_chain: dict[object, _Chain] = {}

        # counters (vLLM metrics)
        self.prompt_tokens_total = 0
        self.generation_tokens_total = 0
        self.prefix_queries_total = 0
        self.prefix_hits_total = 0
        self.preemptions_total = 0
        self.success_stop_total = 0
        self.success_length_total = 0
        # not exported: prefill of re-admitted (preempted) executions, and its cache hits
        self.recomputed_tokens_total = 0
        self.prefill_tokens_total = 0
        self.preempted_hits_total = 0

        # records: lifecycle events
        self.event_t: list[float] = []
        self.event_execution: list[int] = []
        self.event_kind: list[int] = []
        self.event_prompt_tokens: list[int | None] = []
        # records: prefill (step, execution) rows
        self.prefill_step: list[int] = []
        self.prefill_execution: list[int] = []
        self.prefill_computed: list[int] = []
        self.prefill_cached: list[int] = []
        self.prefill_decode_tokens: list[int] = []
        # records: decode spans, one decode token per step in [first_step, end_step)
        self.span_execution: list[int] = []
        self.span_first_step: list[int] = []
        self.span_end_step: list[int] = []
        # records: one row per step
        self.step_t_issue: list[float] = []
        self.step_t_done: list[float] = []
        self.step_running: list[int] = []
        self.step_waiting: list[int] = []
        self.step_batched_tokens: list[int] = []
        self.step_kv_usage: list[float] = []
        # ... its own split and cost, and the counters' totals after it (the engine trace's
        # stats records take each step's share: schema version 3, docs/formats.md)
        self.step_prefill_tokens: list[int] = []
        self.step_decodes: list[int] = []
        self.step_cost_s: list[float] = []
        self.step_preemptions_total: list[int] = []
        self.step_prefix_queries_total: list[int] = []
        self.step_prefix_hits_total: list[int] = []

    # ---- helpers -------------------------------------------------------------------------

    def _take(self, n: int) -> None:
        """Allocate `n` free blocks from the head of the free queue (evicting cached ones)."""
        self.free -= n
        q = self.free_queue
        while n > 0:
            seg = q[0]
            c = seg[1]
            if c <= n:
                q.popleft()
                n -= c
                if seg[0] is not None:
                    seg[0].cache_seg = None
            else:
                seg[1] = c - n
                return

    def _release(self, n: int) -> None:
        """Return `n` blocks nobody will look up to the tail of the free queue."""
        if n <= 0:
            return
        self.free += n
        q = self.free_queue
        if q and q[-1][0] is None:
            q[-1][1] += n
        else:
            q.append([None, n])

    def _drop(self, ex: Execution) -> bool:
        """`ex` stops holding blocks; True when it was the last of its call's executions."""
        c = ex.call
        n = self.call_live[c] - 1
        if n:
            self.call_live[c] = n
            return False
        del self.call_live[c]
        return True

    def _release_ended(self, ex: Execution, n: int, tokens: int) -> None:
        """Free the `n` blocks of an execution that ended with `tokens` KV tokens. With
        `retry_prompt_cached`, the last of its call's executions to end leaves the full blocks
        of the call's prompt it computed findable at the free queue's tail (its other blocks,
        the chain's end, join first, so they are evicted first)."""
        if not self.retry_cache or ex.call is None or not self._drop(ex):
            self._release(n)
            return
        chain = min(min(tokens, ex.prompt_tokens) // self.block_size - ex.cached_blocks, n)
        if chain <= 0:
            self._release(n)
            return
        self._release(n - chain)
        holder = self.call_chain.get(ex.call)
        if holder is None:
            holder = self.call_chain[ex.call] = _Chain()
        elif holder.cache_seg is not None:  # an older copy of the chain: nobody looks it up
            holder.cache_seg[0] = None
        seg: list[Any] = [holder, chain]
        self.free_queue.append(seg)
        self.free += chain
        holder.cache_seg = seg

    def _event(self, t: float, ex: Execution, kind: int, prompt_tokens: int | None = None) -> None:
        self.event_t.append(t)
        self.event_execution.append(ex.idx)
        self.event_kind.append(kind)
        self.event_prompt_tokens.append(prompt_tokens)

    def _leave_decode(self, ex: Execution, end_step: int) -> int:
        """Remove a decoder from the aggregates; record its span; return its KV tokens at
        `end_step`."""
        self.n_decoding -= 1
        self.decode_offset_sum -= ex.tokens_at_join - ex.decode_from_step + 1
        del self.block_boundary[(ex.decode_from_step - ex.tokens_at_join) % self.block_size][ex]
        if end_step > ex.decode_from_step and self.record_steps:
            self.span_execution.append(ex.idx)
            self.span_first_step.append(ex.decode_from_step)
            self.span_end_step.append(end_step)
        ex.generated = ex.generated_at_join + (end_step - ex.decode_from_step)
        return ex.tokens_at_join + (end_step - ex.decode_from_step)

    def _join_decode(self, ex: Execution, first_step: int) -> None:
        ex.state = DECODING
        ex.decode_from_step = first_step
        ex.generated_at_join = ex.generated
        tokens = ex.num_computed
        ex.tokens_at_join = tokens
        self.n_decoding += 1
        self.decode_offset_sum += tokens - first_step + 1
        self.block_boundary[(first_step - tokens) % self.block_size][ex] = None
        last_step = first_step + ex.output_tokens - ex.generated - 1
        ex.last_step = last_step
        due = self.last_step_due.get(last_step)
        if due is None:
            self.last_step_due[last_step] = [ex]
        else:
            due.append(ex)

    def _prefill_chunk(
        self,
        step: int,
        ex: Execution,
        computed: int,
        chunk: int,
        cached: int,
        completers: list[Execution],
    ) -> None:
        """Record that `ex` (with `computed` prompt tokens computed) computes `chunk` more in
        `step`, `cached` of its tokens found in the prefix cache; a prefill that completes its
        target in this step produces its first decode token and joins `completers`."""
        self.prefill_tokens_total += chunk
        if ex.preemptions:
            self.recomputed_tokens_total += chunk
        computed += chunk
        ex.num_computed = computed
        done = computed == ex.target
        if done:
            completers.append(ex)
        if self.record_steps:
            self.prefill_step.append(step)
            self.prefill_execution.append(ex.idx)
            self.prefill_computed.append(chunk)
            self.prefill_cached.append(cached)
            self.prefill_decode_tokens.append(1 if done else 0)

    def _preempt(self, ex: Execution, step: int, now: float) -> None:
        block_size = self.block_size
        if ex.state == DECODING:
            tokens = self._leave_decode(ex, step)
        else:  # PREFILL
            tokens = ex.num_computed
            self.prefilling.remove(ex)
        # its full blocks stay cached until evicted; the partial last one is evicted first
        full = tokens // block_size - ex.cached_blocks
        self._release(-(-tokens // block_size) - ex.cached_blocks - full)  # -(-a // b): ceil
        if full > 0:
            seg: list[Any] = [ex, full]
            self.free_queue.append(seg)
            self.free += full
            ex.cache_seg = seg
        del self.running[ex]
        if self.retry_cache and ex.call is not None:
            self._drop(ex)
        ex.state = WAITING
        ex.target = ex.prompt_tokens + ex.generated
        ex.num_computed = 0
        ex.preemptions += 1
        self.waiting.appendleft(ex)
        self.n_waiting += 1
        self.preemptions_total += 1
        self._event(now, ex, EngineEvent.PREEMPTED)

    # ---- inputs --------------------------------------------------------------------------

    def arrive(self, ex: Execution, now: float) -> bool:
        """A request reaches the engine. Returns False when refused (admission control)."""
        self._event(now, ex, EngineEvent.ARRIVED, ex.prompt_tokens)
        if (
            (self.waiting_cap is not None and self.n_waiting >= self.waiting_cap)
            or (
                self.max_queued_reqs is not None
                and self.n_waiting + len(self.running) + self.n_finishing >= self.max_queued_reqs
            )
            or (
                self.max_queued_tokens is not None
                and self.prefill_prompt_tokens + ex.prompt_tokens > self.max_queued_tokens
            )
        ):
            ex.state = REJECTED
            self._event(now, ex, EngineEvent.REJECTED)
            self.listener.on_rejected(ex, now)
            return False
        block_size = self.block_size
        ex.cached = min(
            self.pinned_blocks * block_size, ((ex.prompt_tokens - 1) // block_size) * block_size
        )
        ex.cached_blocks = ex.cached // block_size
        ex.state = WAITING
        self.prefill_prompt_tokens += ex.prompt_tokens
        self.waiting.append(ex)
        self.n_waiting += 1
        if len(self.in_flight) < self.async_depth:
            self.try_issue(now)
        return True

    def abort(self, ex: Execution, now: float) -> bool:
        """The engine receives an abort. Returns False when the execution had already ended."""
        state = ex.state
        if state >= FINISHED or state == NEW:
            return False
        block_size = self.block_size
        if not ex.first_token_seen:
            self.prefill_prompt_tokens -= ex.prompt_tokens
        if state == WAITING:
            self.n_waiting -= 1  # lazily skipped in the deque
            if ex.cache_seg is not None:  # its cached blocks stay, but nobody looks them up
                ex.cache_seg[0] = None
                ex.cache_seg = None
        elif state == PREFILL:
            n = -(-ex.num_computed // block_size) - ex.cached_blocks
            self._release_ended(ex, n, ex.num_computed)
            self.prefilling.remove(ex)
            del self.running[ex]
        elif state == DECODING:
            tokens = self._leave_decode(ex, self.next_step)
            self._release_ended(ex, -(-tokens // block_size) - ex.cached_blocks, tokens)
            del self.running[ex]
            for entry in self.in_flight:
                if entry[_STEP] >= ex.decode_from_step:
                    entry[_DECODE_TOKENS] -= 1
        else:  # FINISHING: last token scheduled, step not done yet
            self._release_ended(ex, ex.blocks_held, ex.prompt_tokens)
            self.n_finishing -= 1
            for entry in self.in_flight:
                if ex.decode_from_step <= entry[_STEP] <= ex.last_step:
                    entry[_DECODE_TOKENS] -= 1
        ex.state = ABORTED
        self._event(now, ex, EngineEvent.ABORTED)
        self.listener.on_aborted(ex, now)
        if len(self.in_flight) < self.async_depth:
            self.try_issue(now)
        return True

    # ---- the step loop -------------------------------------------------------------------

    def try_issue(self, now: float) -> None:
        while len(self.in_flight) < self.async_depth:
            if not (self.n_decoding or self.prefilling or self.n_waiting):
                return
            if not self._issue(now):
                return

    def _issue(self, now: float) -> bool:
        step = self.next_step
        block_size = self.block_size
        preempted = False
        running = self.running

        # 1. decoders crossing a block boundary need one block each
        crossing = self.block_boundary[step % block_size]
        blocks_needed = len(crossing)
        if blocks_needed:
            if blocks_needed <= self.free:
                self._take(blocks_needed)
            else:
                for ex in sorted(crossing, key=_admission_order):
                    if ex.state != DECODING:
                        continue
                    while self.free < 1:
                        victim = next(reversed(running))
                        self._preempt(victim, step, now)
                        preempted = True
                        if victim is ex:
                            break
                    if ex.state == DECODING:
                        self._take(1)

        n_decoding = self.n_decoding
        context_tokens = self.decode_offset_sum + n_decoding * step
        tokens_left = self.token_budget - n_decoding

        # 2. running prefills, in admission order
        prefill_tokens = 0
        attention_pairs = 0.0
        completers: list[Execution] = []
        if self.prefilling and tokens_left > 0:
            for ex in list(self.prefilling):
                if tokens_left <= 0:
                    break
                if ex.state != PREFILL:
                    continue
                computed = ex.num_computed
                chunk = ex.target - computed
                if chunk > tokens_left:
                    chunk = tokens_left
                # blocks for the chunk: ceil((computed + chunk) / bs) - ceil(computed / bs)
                blocks_needed = -(-(computed + chunk) // block_size) - -(-computed // block_size)
                while blocks_needed > self.free:
                    victim = next(reversed(running))
                    self._preempt(victim, step, now)
                    preempted = True
                    if victim is ex:
                        break
                if ex.state != PREFILL:
                    continue
                self._take(blocks_needed)
                self._prefill_chunk(step, ex, computed, chunk, 0, completers)
                prefill_tokens += chunk
                tokens_left -= chunk
                attention_pairs += chunk * (computed + chunk * 0.5)

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
                computed = ex.cached
                seg = ex.cache_seg
                hit = 0
                if seg is not None:  # a preempted execution: its own blocks still cached
                    hit = min(seg[1], (ex.target - 1) // block_size - ex.cached_blocks)
                    if hit < 0:
                        hit = 0
                    computed += hit * block_size
                elif self.retry_cache and ex.admission == 0 and ex.call is not None:
                    # its call's prompt blocks, as far as an earlier execution computed them
                    full = (ex.target - 1) // block_size - ex.cached_blocks
                    if full > 0:
                        if ex.call in self.call_live:
                            computed += full * block_size
                        else:
                            holder = self.call_chain.get(ex.call)
                            if holder is not None and holder.cache_seg is not None:
                                seg = holder.cache_seg
                                hit = min(seg[1], full)
                                computed += hit * block_size
                chunk = ex.target - computed
                if chunk > tokens_left:
                    chunk = tokens_left
                blocks_needed = -(-(computed + chunk) // block_size) - ex.cached_blocks
                if blocks_needed > self.free:
                    break
                waiting.popleft()
                self.n_waiting -= 1
                if seg is not None:
                    # its hit blocks leave the free queue; the rest of its run stays there
                    seg[0].cache_seg = None
                    seg[0] = None
                    seg[1] -= hit
                    self.free -= hit
                    if ex.admission:
                        self.preempted_hits_total += computed
                    self._take(blocks_needed - hit)
                else:
                    self._take(blocks_needed)
                if not ex.scheduled_once:
                    ex.scheduled_once = True
                    self._event(now, ex, EngineEvent.SCHEDULED)
                if ex.admission == 0:
                    # first admission from the waiting queue (preempted re-admissions are
                    # kept apart by vLLM and not exported)
                    self.prefix_queries_total += ex.prompt_tokens
                    self.prefix_hits_total += computed
                self.admissions += 1
                ex.admission = self.admissions
                ex.state = PREFILL
                running[ex] = None
                if self.retry_cache and ex.call is not None:
                    self.call_live[ex.call] = self.call_live.get(ex.call, 0) + 1
                self.prefilling.append(ex)
                self._prefill_chunk(step, ex, computed, chunk, computed, completers)
                prefill_tokens += chunk
                tokens_left -= chunk
                attention_pairs += chunk * (computed + chunk * 0.5)

        if n_decoding == 0 and prefill_tokens == 0:
            return False

        # 4. decoders whose last token is in this step stop being scheduled
        finishers: list[Execution] = []
        due = self.last_step_due.pop(step, None)
        if due is not None:
            for ex in due:
                if ex.state == DECODING and ex.last_step == step:
                    tokens = self._leave_decode(ex, step + 1)
                    ex.blocks_held = -(-tokens // block_size) - ex.cached_blocks
                    del running[ex]
                    ex.state = FINISHING
                    self.n_finishing += 1
                    finishers.append(ex)

        # 5. prefills completed in this step produce a token; they decode from the next step
        for ex in completers:
            self.prefilling.remove(ex)
            ex.generated += 1
            if ex.generated >= ex.output_tokens:
                ex.blocks_held = -(-ex.num_computed // block_size) - ex.cached_blocks
                del running[ex]
                ex.state = FINISHING
                ex.decode_from_step = step + 1  # its token is counted as a completer's
                ex.last_step = step
                self.n_finishing += 1
                finishers.append(ex)
            else:
                self._join_decode(ex, step + 1)

        cost = (
            self.cost_per_step_s
            + self.cost_per_token_s * prefill_tokens
            + self.cost_per_decode_s * n_decoding
            + self.cost_per_pair_s * attention_pairs
        )
        if n_decoding > self.wave_seqs:
            cost += self.cost_per_context_token_s * context_tokens
        floor = (
            self.floor_s
            + self.floor_per_seq_s * n_decoding
            + self.floor_per_context_token_s * context_tokens
        )
        if floor > cost:
            cost = floor
        start = now if now > self.gpu_free_at else self.gpu_free_at
        t_done = start + cost
        self.gpu_free_at = t_done
        self.next_step = step + 1
        self.in_flight.append([step, t_done, completers, finishers, n_decoding])
        self.push_done(t_done)
        if not self.record_steps:
            return True
        self.step_t_issue.append(now)
        self.step_t_done.append(t_done)
        self.step_running.append(len(running) + self.n_finishing)
        self.step_waiting.append(self.n_waiting)
        self.step_batched_tokens.append(prefill_tokens + n_decoding)
        self.step_kv_usage.append((self.num_blocks - self.free) / self.num_blocks)
        self.step_prefill_tokens.append(prefill_tokens)
        self.step_decodes.append(n_decoding)
        self.step_cost_s.append(cost)
        self.step_preemptions_total.append(self.preemptions_total)
        self.step_prefix_queries_total.append(self.prefix_queries_total)
        self.step_prefix_hits_total.append(self.prefix_hits_total)
        return True

    def decode_run(
        self,
        done: deque[tuple[float, int]],
        seq: Iterator[int],
        stop: tuple[Any, ...] | None,
        until: float,
    ) -> float | None:
        """Run the step ends at the head of `done` (the simulator's queue of them, each
        `(t, number)`) that are plain decode steps, in a loop of their own instead of one
        `step_done` call each; return the time of the last one run (None: none).

        A step end is run here while it comes before `stop` (the simulator's next other
        event) and `until`, observes nothing (no completer, no finisher) and lets exactly one
        step be issued that only decodes: nothing in prefill or waiting, no decoder's last
        token due, and the blocks of the decoders crossing a block boundary free. That is
        what `step_done` then `_issue` do for such a step, in the same order and with the same
        arithmetic, so the run is the same to the last bit; any other step end is left to
        them. Most steps of an overloaded run are such steps (the engine decoding its running
        executions between two arrivals), and this loop does their work without the five calls
        and the branches of the general path."""
        in_flight = self.in_flight
        if len(in_flight) != self.async_depth or self.prefilling or self.n_waiting:
            return None
        n_decoding = self.n_decoding
        if n_decoding == 0:
            return None
        last: float | None = None
        boundary = self.block_boundary
        block_size = self.block_size
        due = self.last_step_due
        record = self.record_steps
        # the cost's terms that do not change while the same executions decode, summed in
        # `_issue`'s order (so each sum is the same float)
        cost_base = (
            self.cost_per_step_s
            + self.cost_per_token_s * 0
            + self.cost_per_decode_s * n_decoding
            + self.cost_per_pair_s * 0.0
        )
        per_context = self.cost_per_context_token_s if n_decoding > self.wave_seqs else None
        floor_base = self.floor_s + self.floor_per_seq_s * n_decoding
        floor_per_context = self.floor_per_context_token_s
        offset_sum = self.decode_offset_sum
        free_queue = self.free_queue
        # the engine's fields this loop changes, as locals: stored back when it stops, and
        # before anything else reads them
        step = self.next_step
        gpu_free_at = self.gpu_free_at
        generated = self.generation_tokens_total
        while done:
            head = done[0]
            t = head[0]
            if t >= until or (stop is not None and not head < stop):
                break
            entry = in_flight[0]
            if entry[2] or entry[3]:  # completers or finishers to observe
                break
            blocks_needed = len(boundary[step % block_size])
            if blocks_needed > self.free or step in due:
                break
            # step_done: the step's tokens, then the next step issued
            done.popleft()
            in_flight.popleft()
            generated += entry[4]
            last = t
            if blocks_needed:
                seg = free_queue[0]
                if seg[1] > blocks_needed:  # `_take`'s common case: the head run is larger
                    seg[1] -= blocks_needed
                    self.free -= blocks_needed
                else:
                    self._take(blocks_needed)
            context_tokens = offset_sum + n_decoding * step
            cost = cost_base
            if per_context is not None:
                cost += per_context * context_tokens
            floor = floor_base + floor_per_context * context_tokens
            if floor > cost:
                cost = floor
            t_done = (t if t > gpu_free_at else gpu_free_at) + cost
            gpu_free_at = t_done
            in_flight.append([step, t_done, _NONE, _NONE, n_decoding])
            step += 1
            if record:
                self._record_decode_step(t, t_done, n_decoding, cost)
            if done and t_done < done[-1][0]:
                # ends before a step issued earlier: the simulator's heap takes it, and the
                # general loop goes on from here
                self.next_step, self.gpu_free_at = step, gpu_free_at
                self.generation_tokens_total = generated
                self.push_done(t_done)
                return last
            done.append((t_done, next(seq)))
        self.next_step, self.gpu_free_at = step, gpu_free_at
        self.generation_tokens_total = generated
        return last

    def _record_decode_step(self, now: float, t_done: float, n_decoding: int, cost: float) -> None:
        """The step rows `_issue` records, for a step that only decodes (`decode_run`)."""
        self.step_t_issue.append(now)
        self.step_t_done.append(t_done)
        self.step_running.append(len(self.running) + self.n_finishing)
        self.step_waiting.append(self.n_waiting)
        self.step_batched_tokens.append(0 + n_decoding)
        self.step_kv_usage.append((self.num_blocks - self.free) / self.num_blocks)
        self.step_prefill_tokens.append(0)
        self.step_decodes.append(n_decoding)
        self.step_cost_s.append(cost)
        self.step_preemptions_total.append(self.preemptions_total)
        self.step_prefix_queries_total.append(self.prefix_queries_total)
        self.step_prefix_hits_total.append(self.prefix_hits_total)

    def step_done(self, now: float) -> None:
        _, _, completers, finishers, generated = self.in_flight.popleft()
        for ex in completers:
            if ex.state != ABORTED:
                generated += 1
                if not ex.first_token_seen:
                    ex.first_token_seen = True
                    self.prefill_prompt_tokens -= ex.prompt_tokens
                    self.prompt_tokens_total += ex.prompt_tokens
                    self._event(now, ex, EngineEvent.FIRST_TOKEN)
        self.generation_tokens_total += generated
        listener = self.listener
        for ex in finishers:
            if ex.state == FINISHING:
                ex.state = FINISHED
                self._release_ended(ex, ex.blocks_held, ex.prompt_tokens)
                self.n_finishing -= 1
                self._event(now, ex, EngineEvent.FINISHED)
                if ex.output_tokens >= ex.max_tokens:
                    self.success_length_total += 1
                else:
                    self.success_stop_total += 1
                listener.on_finished(ex, now)
        self.try_issue(now)


def _admission_order(ex: Execution) -> int:
    return ex.admission
