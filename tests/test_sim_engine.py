"""The engine in isolation, on hand-checked timelines.

Every test uses a cost model where a step costs exactly 10 ms (a = 10, b = c = f = 0), so a
step issued at t on an idle GPU is done at t + 0.010, and steps run back to back.
"""

from __future__ import annotations

from heapq import heappop, heappush
from typing import Any

import pytest

from relplan.sim.costmodel import CostModel, step_cost_ms
from relplan.sim.engine import Engine
from relplan.sim.execution import ABORTED, EVENT_NAMES, FINISHED, EngineConfig, Execution

TEN_MS = CostModel(
    a_ms=10.0,
    b_ms_per_token=0.0,
    c_ms_per_pair=0.0,
    f_ms_per_context_token=0.0,
    b_ms_per_decode_seq=0.0,
    floor_ms=0.0,
    floor_ms_per_seq=0.0,
    floor_ms_per_context_token=0.0,
)


class Harness:
    """A minimal event loop: step completions plus timed actions."""

    def __init__(self, cfg: EngineConfig, cost: CostModel = TEN_MS) -> None:
        self.heap: list[tuple[float, int, object]] = []
        self.n = 0
        self.engine = Engine(cfg, cost, self._done, self)
        self.finished: list[tuple[str, float]] = []
        self.aborted: list[tuple[str, float]] = []
        self.rejected: list[tuple[str, float]] = []
        self.execs: list[Execution] = []

    def _done(self, t: float) -> None:
        self.n += 1
        heappush(self.heap, (t, self.n, None))

    def at(self, t: float, action: object) -> None:
        self.n += 1
        heappush(self.heap, (t, self.n, action))

    def new(self, prompt: int, out: int, max_tokens: int = 2048, call: object = None) -> Execution:
        ex = Execution(len(self.execs), f"x{len(self.execs)}", prompt, out, max_tokens, call)
        self.execs.append(ex)
        return ex

    def run(self) -> None:
        while self.heap:
            t, _, action = heappop(self.heap)
            if action is None:
                self.engine.step_done(t)
            else:
                action(t)  # type: ignore[operator]

    # EngineListener
    def on_finished(self, ex: Execution, t: float) -> None:
        self.finished.append((ex.execution_id, t))

    def on_aborted(self, ex: Execution, t: float) -> None:
        self.aborted.append((ex.execution_id, t))

    def on_rejected(self, ex: Execution, t: float) -> None:
        self.rejected.append((ex.execution_id, t))

    # views of the engine's records
    def events(self, eid: str) -> list[tuple[str, float]]:
        e = self.engine
        idx = next(x.idx for x in self.execs if x.execution_id == eid)
        return [
            (EVENT_NAMES[c], round(t, 6))
            for t, x, c in zip(e.event_t, e.event_execution, e.event_kind, strict=False)
            if x == idx
        ]

    def steps(self, eid: str) -> list[tuple[int, float, float, int, int, int]]:
        """(step, t_issue, t_done, prompt_computed, prompt_cached, decode_tokens)."""
        e = self.engine
        idx = next(x.idx for x in self.execs if x.execution_id == eid)
        rows = [
            (k, c, ca, d)
            for k, x, c, ca, d in zip(
                e.prefill_step,
                e.prefill_execution,
                e.prefill_computed,
                e.prefill_cached,
                e.prefill_decode_tokens,
                strict=False,
            )
            if x == idx
        ]
        for x, k0, k1 in zip(e.span_execution, e.span_first_step, e.span_end_step, strict=False):
            if x == idx:
                rows += [(k, 0, 0, 1) for k in range(k0, k1)]
        rows.sort()
        return [
            (k, round(e.step_t_issue[k], 6), round(e.step_t_done[k], 6), c, ca, d)
            for k, c, ca, d in rows
        ]


def test_abort_with_two_steps_in_flight_keeps_their_tokens_in_the_trace() -> None:
    """Budget 8 tokens/step, no prefix; A has a 24-token prompt (three chunks of 8).

    t=0      A arrives: step 0 issued (chunk 8, done 0.010) and, async, step 1 (chunk 8,
             done 0.020: it starts when step 0 is done).
    t=0.010  step 0 done; step 2 issued (last chunk 8, done 0.030).
    t=0.015  abort: steps 1 and 2 are in flight (issued before, done after) and still compute
             A's 16 tokens; nothing is issued after the abort.
    t=0.030  step 2 completes A's prefill, but A was aborted: no first_token, and the prompt
             token counter never counts A (vLLM's rule for prefills aborted before output).
    """
    h = Harness(EngineConfig(max_num_batched_tokens=8, max_num_seqs=8, prefix_tokens=0))
    a = h.new(24, 5)
    h.at(0.0, lambda t: h.engine.arrive(a, t))
    h.at(0.015, lambda t: h.engine.abort(a, t))
    h.run()
    assert h.steps("x0") == [
        (0, 0.0, 0.01, 8, 0, 0),
        (1, 0.0, 0.02, 8, 0, 0),
        (2, 0.01, 0.03, 8, 0, 1),
    ]
    assert h.events("x0") == [("arrived", 0.0), ("scheduled", 0.0), ("aborted", 0.015)]
    in_flight = [s for s in h.steps("x0") if s[1] < 0.015 <= s[2]]
    assert [s[0] for s in in_flight] == [1, 2]
    assert h.engine.prompt_tokens_total == 0
    assert h.engine.generation_tokens_total == 0
    assert h.engine.prefix_queries_total == 24
    assert a.state == ABORTED
    assert h.engine.next_step == 3
    assert h.engine.free == h.engine.num_blocks  # blocks freed at the abort


def test_abort_while_decoding_discards_in_flight_tokens_from_the_counter() -> None:
    """A: prompt 8 (one chunk), 10 output tokens. Step k is done at 0.010 (k + 1).

    Step 0 (prefill, first token) done 0.010; steps 1, 2, ... decode one token each. The abort
    at 0.025 finds steps 2 (issued 0.010) and 3 (issued 0.020) in flight: their decode records
    stay, but only the tokens of steps 0 and 1 reach the generation counter.
    """
    h = Harness(EngineConfig(max_num_batched_tokens=16, max_num_seqs=8, prefix_tokens=0))
    a = h.new(8, 10)
    h.at(0.0, lambda t: h.engine.arrive(a, t))
    h.at(0.025, lambda t: h.engine.abort(a, t))
    h.run()
    assert [s[0] for s in h.steps("x0")] == [0, 1, 2, 3]
    assert [s[5] for s in h.steps("x0")] == [1, 1, 1, 1]
    assert h.engine.generation_tokens_total == 2
    assert h.engine.prompt_tokens_total == 8
    assert ("first_token", 0.01) in h.events("x0")
    assert "finished" not in [e for e, _ in h.events("x0")]


def test_preemption_frees_blocks_and_recomputes_from_the_front_of_the_queue() -> None:
    """Blocks of 4 tokens, 5 blocks in all, no prefix; A and B: prompt 8, 10 output tokens.

    t=0     A arrives: step 0 (A's prefill, 2 blocks, 3 free) and step 1 (A's first decode:
            its 9th token opens block 3, 2 free) are issued at once (async, 2 in flight).
            B arrives and waits: two steps are in flight.
    t=0.010 step 0 done (A's first token); step 2: A decodes, B admitted (prefill 8, the last
            2 blocks), first token at step 2's end (0.030).
    t=0.020 step 3: B's first decode needs a block and none is free: the most recently admitted
            running execution, B itself, is preempted (2 blocks freed), nothing is admitted.
    B now needs 3 blocks (8 prompt tokens + 1 output token, recomputed); A takes one more at
    step 5 and its last at step 9, so B waits at the front of the queue until A finishes
    (step 9, done 0.100, 5 blocks freed): step 10 re-admits B with prompt_computed 9 after the
    `preempted` event, producing its 2nd token; steps 11-18 decode the other 8. B's 2 full
    blocks went to the tail of the free queue at the preemption, and A's allocations at steps
    5 and 9 evicted both (the queue holds nothing else), so B recomputes all 9 tokens.
    Counters: one preemption; prompt tokens counted once per execution (8 + 8); prefix-cache
    queries counted at first admission only (8 + 8); 20 generation tokens.
    """
    h = Harness(
        EngineConfig(
            max_num_batched_tokens=16, max_num_seqs=8, block_size=4, num_blocks=5, prefix_tokens=0
        )
    )
    a = h.new(8, 10)
    b = h.new(8, 10)
    h.at(0.0, lambda t: h.engine.arrive(a, t))
    h.at(0.0, lambda t: h.engine.arrive(b, t))
    h.run()
    ev_b = h.events("x1")
    assert ev_b[:4] == [
        ("arrived", 0.0),
        ("scheduled", 0.01),
        ("preempted", 0.02),
        ("first_token", 0.03),
    ]
    st_b = h.steps("x1")
    assert st_b[0] == (2, 0.01, 0.03, 8, 0, 1)
    assert st_b[1] == (10, 0.1, 0.11, 9, 0, 1)
    assert [s[0] for s in st_b[2:]] == list(range(11, 19))
    assert ("finished", 0.1) in h.events("x0")
    assert ("finished", 0.19) in ev_b
    assert sum(s[5] for s in st_b) == 1 + 1 + 8  # first token, recompute token, 8 decodes
    assert h.engine.preemptions_total == 1
    assert h.engine.prompt_tokens_total == 16
    assert h.engine.prefix_queries_total == 16
    assert h.engine.generation_tokens_total == 20
    assert a.state == FINISHED
    assert b.state == FINISHED
    assert h.engine.free == 5


def test_a_preempted_execution_readmitted_before_eviction_computes_only_what_it_lost() -> None:
    """As above, but A has 4 output tokens: it takes one block at step 1 (its 9th token) and
    none after, and finishes at step 3 (done 0.040) with 3 blocks freed. B was preempted at
    step 3's issue (0.020) holding 8 prompt tokens in 2 full blocks, which stay cached in the
    free queue; nothing evicts them before step 4 re-admits B: its target is 9 (8 prompt + 1
    output), the lookup stops one token short of it ((9 - 1) // 4 = 2 blocks), so it finds
    8 tokens cached and computes 1. Prefix-cache counters stay at first admissions (vLLM
    keeps preempted re-admissions apart); the 8 hit tokens count as preempted hits."""
    h = Harness(
        EngineConfig(
            max_num_batched_tokens=16, max_num_seqs=8, block_size=4, num_blocks=5, prefix_tokens=0
        )
    )
    a = h.new(8, 4)
    b = h.new(8, 10)
    h.at(0.0, lambda t: h.engine.arrive(a, t))
    h.at(0.0, lambda t: h.engine.arrive(b, t))
    h.run()
    assert ("preempted", 0.02) in h.events("x1")
    assert ("finished", 0.04) in h.events("x0")
    st_b = h.steps("x1")
    assert st_b[0] == (2, 0.01, 0.03, 8, 0, 1)
    assert st_b[1] == (4, 0.04, 0.05, 1, 8, 1)  # 1 computed, 8 found in the cache
    assert h.engine.recomputed_tokens_total == 1
    assert h.engine.preempted_hits_total == 8
    assert h.engine.prefix_queries_total == 16
    assert h.engine.prefix_hits_total == 0
    assert h.engine.free == 5


def test_eviction_takes_the_least_recently_freed_blocks_first() -> None:
    """The free queue in isolation: 10 blocks, all allocated; 2 freed (nobody's), then a
    preempted execution's 3 cached blocks, then 1 more freed. Allocating 3 evicts the 2 freed
    first and then one of the execution's (its chain's last): 2 stay cached; allocating 2
    more evicts those, and the execution has nothing cached left."""
    h = Harness(EngineConfig(block_size=4, num_blocks=10, prefix_tokens=0))
    e = h.engine
    ex = h.new(16, 1)
    e._take(10)
    e._release(2)
    seg: list[Any] = [ex, 3]
    e.free_queue.append(seg)
    e.free += 3
    ex.cache_seg = seg
    e._release(1)
    assert [s[1] for s in e.free_queue] == [2, 3, 1]
    e._take(3)
    assert ex.cache_seg is seg
    assert seg[1] == 2
    e._take(2)
    assert ex.cache_seg is None
    assert e.free == 1
    assert [s[1] for s in e.free_queue] == [1]


def test_shared_prefix_is_a_cache_hit_and_never_computed() -> None:
    """Prefix 32 tokens pinned (2 blocks of 16); a 40-token prompt computes only 8 tokens; the
    prefix-cache counters see the query (40) and the hit (32) at admission."""
    h = Harness(EngineConfig(max_num_batched_tokens=64, max_num_seqs=8, prefix_tokens=32))
    a = h.new(40, 3)
    h.at(0.0, lambda t: h.engine.arrive(a, t))
    h.run()
    assert h.steps("x0")[0] == (0, 0.0, 0.01, 8, 32, 1)
    assert (
        h.engine.prefix_queries_total,
        h.engine.prefix_hits_total,
        h.engine.prompt_tokens_total,
    ) == (40, 32, 40)
    assert h.finished == [("x0", 0.03)]


def test_fcfs_admission_stops_at_the_token_budget_and_max_num_seqs() -> None:
    """Budget 16 tokens, at most 3 sequences. X (prompt 8, 3 tokens) arrives first and fills
    the pipeline (steps 0 and 1 issued at t=0); A, B, C (prompt 10, 2 tokens) then wait.

    step 2 (t=0.010): X decodes (1 token), A admitted (10), B admitted with the 5 tokens left
                      (chunked prefill): 16 tokens, 3 sequences; C waits.
    step 3 (t=0.020): A decodes, B's last 5 tokens; 10 tokens of budget are left but X (its
                      last token in flight), A and B hold the 3 sequence slots: C waits.
    step 4 (t=0.030): X is done; C admitted.
    """
    h = Harness(EngineConfig(max_num_batched_tokens=16, max_num_seqs=3, prefix_tokens=0))
    x = h.new(8, 3)
    a, b, c = h.new(10, 2), h.new(10, 2), h.new(10, 2)
    h.at(0.0, lambda t: [h.engine.arrive(e, t) for e in (x, a, b, c)])
    h.run()
    assert h.engine.step_batched_tokens[2] == 16
    assert h.steps("x1")[0][:4] == (2, 0.01, 0.03, 10)
    assert [s[:4] for s in h.steps("x2")[:2]] == [(2, 0.01, 0.03, 5), (3, 0.02, 0.04, 5)]
    assert h.engine.step_batched_tokens[3] == 1 + 5
    assert h.steps("x3")[0][:4] == (4, 0.03, 0.05, 10)


def test_engine_step_duration_is_the_cost_model() -> None:
    """A real-coefficient step: prefill chunk N=100 after C=32 cached, no decodes."""
    cost = CostModel(speed=0.75)
    h = Harness(EngineConfig(max_num_batched_tokens=8192, prefix_tokens=32), cost)
    a = h.new(132, 1)
    h.at(0.0, lambda t: h.engine.arrive(a, t))
    h.run()
    expected = step_cost_ms(cost, [(100, 32)], []) / 1000
    assert h.engine.step_t_done[0] == pytest.approx(expected)
    assert expected == pytest.approx(
        # compute 3.46 + 0.02143 * 100 + 1.521e-6 * 100 * (32 + 50) = 5.62 ms is below the
        # memory floor (the weights read once: 5.844 ms), so the floor is the step's cost
        0.75 * max(5.844, 3.46 + 0.02143 * 100 + 1.521e-6 * 100 * (32 + 50)) / 1000
    )


def test_waiting_queue_cap_refuses_arrivals_after_arrived() -> None:
    """max_num_seqs 1, waiting cap 1: A runs, B waits, C is refused (arrived, rejected)."""
    h = Harness(
        EngineConfig(max_num_batched_tokens=16, max_num_seqs=1, prefix_tokens=0, waiting_cap=1)
    )
    xs = [h.new(8, 3) for _ in range(3)]
    h.at(0.0, lambda t: [h.engine.arrive(x, t) for x in xs])
    h.run()
    assert h.events("x2") == [("arrived", 0.0), ("rejected", 0.0)]
    assert h.rejected == [("x2", 0.0)]
    assert [e for e, _ in h.finished] == ["x0", "x1"]


def test_max_num_queued_reqs_counts_running_and_waiting_requests() -> None:
    """vLLM's --max-num-queued-reqs 2 with room for 8 running: A and B arrive at 0 (B is
    admitted with step 2, issued at 0.010); C at 0.015 is refused although nothing waits,
    since 2 requests run; D, arriving after A finished (3 tokens, done 0.030), is accepted."""
    h = Harness(
        EngineConfig(
            max_num_batched_tokens=64, max_num_seqs=8, prefix_tokens=0, max_num_queued_reqs=2
        )
    )
    xs = [h.new(8, 3), h.new(8, 10), h.new(8, 3), h.new(8, 3)]
    h.at(0.0, lambda t: [h.engine.arrive(x, t) for x in xs[:2]])
    h.at(0.015, lambda t: h.engine.arrive(xs[2], t))
    h.at(0.035, lambda t: h.engine.arrive(xs[3], t))
    h.run()
    assert h.engine.step_waiting[2] == 0  # the step issued at 0.010 left nobody waiting
    assert h.rejected == [("x2", 0.015)]
    assert h.events("x2") == [("arrived", 0.015), ("rejected", 0.015)]
    assert [e for e, _ in h.finished] == ["x0", "x3", "x1"]


def test_max_num_queued_reqs_refuses_exactly_at_the_cap() -> None:
    """One running (max_num_seqs 1) and cap 3: the second and third wait, the fourth is the
    first refused (1 running + 2 waiting = 3)."""
    h = Harness(
        EngineConfig(
            max_num_batched_tokens=16, max_num_seqs=1, prefix_tokens=0, max_num_queued_reqs=3
        )
    )
    xs = [h.new(8, 3) for _ in range(5)]
    h.at(0.0, lambda t: [h.engine.arrive(x, t) for x in xs])
    h.run()
    assert [e for e, _ in h.rejected] == ["x3", "x4"]


def test_max_num_queued_tokens_counts_prompts_before_their_first_token() -> None:
    """--max-num-queued-tokens 16 with 8-token prompts: A and B are accepted (16), C at the
    same instant is refused (24 > 16); A's and B's first tokens come with step 0 (done 0.010),
    so D at 0.015 is accepted although A and B still run."""
    h = Harness(
        EngineConfig(
            max_num_batched_tokens=64, max_num_seqs=8, prefix_tokens=0, max_num_queued_tokens=16
        )
    )
    xs = [h.new(8, 5) for _ in range(4)]
    h.at(0.0, lambda t: [h.engine.arrive(x, t) for x in xs[:3]])
    h.at(0.015, lambda t: h.engine.arrive(xs[3], t))
    h.run()
    assert h.rejected == [("x2", 0.0)]
    assert sorted(e for e, _ in h.finished) == ["x0", "x1", "x3"]
    assert h.engine.prefill_prompt_tokens == 0


def _retry_cfg(on: bool, num_blocks: int = 20) -> EngineConfig:
    return EngineConfig(
        max_num_batched_tokens=64,
        max_num_seqs=8,
        block_size=4,
        num_blocks=num_blocks,
        prefix_tokens=0,
        retry_prompt_cached=on,
    )


@pytest.mark.parametrize("on", [True, False])
def test_a_retry_finds_its_calls_prompt_after_the_first_attempt_finished(on: bool) -> None:
    """One call, prompt 10 tokens (blocks of 4): attempt 1 runs steps 0-1 and frees its 3
    blocks at 0.02; its 2 full prompt blocks stay findable at the free queue's tail. The retry
    arrives at 0.05: the lookup stops one token short ((10 - 1) // 4 = 2 blocks), so it finds
    8 tokens and computes 2; the counters see the hit. Without `retry_prompt_cached` (the
    default, the published experiment's setting) it computes all 10."""
    h = Harness(_retry_cfg(on))
    call = object()
    a, b = h.new(10, 2, call=call), h.new(10, 2, call=call)
    h.at(0.0, lambda t: h.engine.arrive(a, t))
    h.at(0.05, lambda t: h.engine.arrive(b, t))
    h.run()
    assert h.steps("x0")[0][3:5] == (10, 0)
    assert h.steps("x1")[0][3:5] == ((2, 8) if on else (10, 0))
    assert h.engine.prefix_hits_total == (8 if on else 0)
    assert h.engine.free == 20  # every block back in the free queue at the end
    assert not h.engine.call_live


def test_a_retry_finds_the_blocks_of_an_attempt_still_running() -> None:
    """Attempt 1 (prompt 10, 6 outputs) is decoding when the retry arrives at 0.015: the retry
    finds the 2 full prompt blocks and computes 2 tokens. Its blocks are counted again as its
    own (the sharing is not modelled): at the most 7 of the 20 blocks are held, attempt 1's 4
    (up to 16 tokens) and the retry's 3."""
    h = Harness(_retry_cfg(True))
    call = object()
    a, b = h.new(10, 6, call=call), h.new(10, 2, call=call)
    h.at(0.0, lambda t: h.engine.arrive(a, t))
    h.at(0.015, lambda t: h.engine.arrive(b, t))
    h.run()
    assert h.steps("x1")[0][3:5] == (2, 8)
    assert max(h.engine.step_kv_usage) * 20 == pytest.approx(7)
    assert h.engine.free == 20


def test_a_retry_after_its_calls_blocks_were_evicted_computes_everything() -> None:
    """7 blocks: attempt 1 (prompt 10) frees its 3 blocks at 0.02, the 2 full prompt blocks at
    the queue's tail behind 5 anonymous ones. Another call's 24-token prompt (6 blocks) takes
    the 5 and evicts one of the chain, its first output token's block evicts the other: the
    retry, at 0.1, finds nothing and computes all 10."""
    h = Harness(_retry_cfg(True, num_blocks=7))
    call = object()
    a, other, b = h.new(10, 2, call=call), h.new(24, 2, call=object()), h.new(10, 2, call=call)
    h.at(0.0, lambda t: h.engine.arrive(a, t))
    h.at(0.05, lambda t: h.engine.arrive(other, t))
    h.at(0.1, lambda t: h.engine.arrive(b, t))
    h.run()
    assert h.steps("x2")[0][3:5] == (10, 0)
    assert h.engine.prefix_hits_total == 0
