"""Engine invariants under random workloads, aborts and a tight KV cache (hypothesis)."""

from __future__ import annotations

from collections import Counter

from hypothesis import example, given, settings
from hypothesis import strategies as st

from relplan.sim.execution import ABORTED, FINISHED, EngineConfig, EngineEvent
from tests.test_sim_engine import Harness

job = st.tuples(
    st.floats(min_value=0.0, max_value=0.5),  # arrival
    st.integers(min_value=1, max_value=300),  # prompt
    st.integers(min_value=1, max_value=60),  # output
    st.one_of(st.none(), st.floats(min_value=0.0, max_value=1.0)),  # abort time
)


HEAVY = [(i * 0.001, 300 - i, 60, 0.05 * i if i % 3 == 0 else None) for i in range(25)]


@settings(max_examples=60, deadline=None)
@example(jobs=HEAVY, blocks=30, budget=128, max_seqs=12, prefix=40)  # preempts and aborts
@given(
    jobs=st.lists(job, min_size=1, max_size=25),
    blocks=st.integers(min_value=30, max_value=80),
    budget=st.sampled_from([16, 32, 64, 128]),
    max_seqs=st.integers(min_value=1, max_value=12),
    prefix=st.sampled_from([0, 16, 40]),
)
def test_engine_invariants(
    jobs: list[tuple[float, int, int, float | None]],
    blocks: int,
    budget: int,
    max_seqs: int,
    prefix: int,
) -> None:
    """Blocks of 16; every prompt fits in the cache (300 + 60 tokens <= 23 blocks < 30).
    Whatever the arrivals, aborts and preemptions: the KV cache is never overdrawn and is
    all free at the end; a step never exceeds the token budget or max_num_seqs; a (step,
    execution) pair appears once; a finished execution produced exactly its output tokens
    (first token, decodes and recomputation tokens, once each) after computing its whole
    prompt beyond the cached prefix; the prompt-token counter is the prompts of executions
    that produced a first token; every execution ends finished or aborted."""
    cfg = EngineConfig(
        max_num_batched_tokens=max(budget, max_seqs),
        max_num_seqs=max_seqs,
        block_size=16,
        num_blocks=blocks,
        prefix_tokens=prefix,
    )
    h = Harness(cfg)
    for t, prompt, out, abort_at in jobs:
        ex = h.new(prompt, out)
        h.at(t, lambda now, ex=ex: h.engine.arrive(ex, now))
        if abort_at is not None:
            h.at(t + abort_at, lambda now, ex=ex: h.engine.abort(ex, now))
    h.run()
    e = h.engine

    assert all(0.0 <= kv <= 1.0 for kv in e.step_kv_usage)
    assert e.free == e.num_blocks - e.pinned_blocks
    assert all(b <= cfg.max_num_batched_tokens for b in e.step_batched_tokens)

    rows: list[tuple[int, int, int, int]] = list(
        zip(
            e.prefill_step,
            e.prefill_execution,
            e.prefill_computed,
            e.prefill_decode_tokens,
            strict=True,
        )
    )
    for x, k0, k1 in zip(e.span_execution, e.span_first_step, e.span_end_step, strict=True):
        rows += [(k, x, 0, 1) for k in range(k0, k1)]
    pairs = Counter((k, x) for k, x, _, _ in rows)
    assert max(pairs.values()) == 1
    per_step = Counter(k for k, _ in pairs)
    assert max(per_step.values()) <= max_seqs
    tokens_per_step: Counter[int] = Counter()
    for k, _, comp, dec in rows:
        tokens_per_step[k] += comp if comp else dec
    assert all(tokens_per_step[k] == e.step_batched_tokens[k] for k in tokens_per_step)

    decoded: Counter[int] = Counter()
    computed: Counter[int] = Counter()
    for _, x, comp, dec in rows:
        decoded[x] += dec
        computed[x] += comp
    first = {
        x
        for x, c in zip(e.event_execution, e.event_kind, strict=True)
        if c == EngineEvent.FIRST_TOKEN
    }
    for ex in h.execs:
        assert ex.state in (FINISHED, ABORTED)
        if ex.state == FINISHED:
            assert decoded[ex.idx] == ex.output_tokens
            assert computed[ex.idx] >= ex.prompt_tokens - ex.cached
    assert e.prompt_tokens_total == sum(h.execs[x].prompt_tokens for x in first)
    assert e.preemptions_total == sum(1 for c in e.event_kind if c == EngineEvent.PREEMPTED)
