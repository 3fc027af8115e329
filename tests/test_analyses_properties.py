"""Invariants of the analyses on random runs (hypothesis)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relplan.analyses import AnalyzeOptions, analyze
from tests.helpers.incident import T0, insert_events, insert_manifest, insert_metrics
from tests.helpers.synthetic_runs import fifo_engine_events, memory_workspace, random_engine_run

FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.slow
@FAST
@given(seed=st.integers(0, 10_000), with_proxy=st.booleans())
def test_every_computed_token_has_exactly_one_fate(seed: int, with_proxy: bool) -> None:
    """Sum over fates = all computed prompt tokens (run and each phase); the phases, which
    tile the run, add up to it; the shares sum to 1; the sub-shares stay within their base."""
    con = memory_workspace()
    random_engine_run(con, seed, with_proxy=with_proxy)
    total = con.execute("select coalesce(sum(prompt_computed), 0) from steps").fetchone()[0]  # type: ignore[index]
    r = analyze(con, AnalyzeOptions(only=["wasted_prefill"]))
    if r.wasted_prefill is None:
        assert total == 0
        return
    rows = [w for w in r.wasted_prefill.windows if w.replica is None]
    run = rows[0]
    assert run.computed_tokens == total
    for w in rows:
        assert sum(w.tokens_by_fate.values()) == w.computed_tokens
        if w.computed_tokens:
            assert sum(v or 0 for v in w.share_by_fate.values()) == pytest.approx(1.0)
        assert w.inflight_prompt_tokens <= w.tokens_by_fate["aborted"]
        assert w.before_first_output_tokens <= w.tokens_by_fate["aborted"]
        assert w.recomputed_tokens <= w.computed_tokens
    assert sum(w.computed_tokens for w in rows[1:]) == total
    per_replica = [
        w for w in r.wasted_prefill.windows if w.replica is not None and w.window == "run"
    ]
    if per_replica:
        assert sum(w.computed_tokens for w in per_replica) == total
    if not with_proxy:
        assert run.tokens_by_fate["delivered"] == run.tokens_by_fate["finished_for_nobody"] == 0


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10_000), load=st.floats(0.3, 0.8))
def test_littles_law_is_consistent_on_a_long_window(seed: int, load: float) -> None:
    """A FIFO server (service 1 s) fed Poisson arrivals at `load` calls/s for 4000 s: on the
    whole run (all waits inside it) L = λ·Wq exactly; on the middle half, whose edges cut a
    few waits, the consistency stays within 5 %."""
    rng = random.Random(seed)
    arrivals, t = [], 0.0
    while True:
        t += rng.expovariate(load)
        if t >= 4000:
            break
        arrivals.append(t)
    con = memory_workspace()
    insert_events(
        con,
        [
            (0.0, "first", "arrived", 1, "r0"),
            (0.0, "first", "scheduled", None, "r0"),
            *fifo_engine_events(arrivals, 1.0),
        ],
    )
    insert_manifest(
        con, {"name": "q", "t0": T0, "phases": [{"name": "mid", "start": 1000, "end": 3000}]}
    )
    e = analyze(con, AnalyzeOptions(only=["littles_law"], deadline=30)).littles_law
    assert e is not None
    run, mid = [w for w in e.windows if w.replica is None]
    assert run.consistency == pytest.approx(1.0, rel=1e-9)
    assert mid.consistency == pytest.approx(1.0, abs=0.05)


@pytest.mark.slow
@FAST
@given(
    incs=st.lists(st.integers(0, 1000), min_size=2, max_size=40),
    resets=st.sets(st.integers(1, 39)),
)
def test_counter_rise_follows_the_reset_rule_and_adjacent_windows_add_up(
    incs: list[int], resets: set[int]
) -> None:
    """A counter sampled every 10 s; at a reset the value restarts from the increment. The
    whole run's rise is the sum of the increments; phases cut on sample times add up to it."""
    values, v = [], 0
    for i, d in enumerate(incs):
        v = d if i in resets else v + d
        values.append(v)
    # a reset that does not drop the value is indistinguishable from no reset: the rule
    # (docs/analyses.md, Conventions: counter rise) sees only drops
    rises = [
        values[i] - values[i - 1] if values[i] >= values[i - 1] else values[i]
        for i in range(1, len(values))
    ]
    n = len(values)
    rows = [(10.0 * i, "vllm:prompt_tokens_total", "r0", float(x)) for i, x in enumerate(values)]
    rows += [(10.0 * i, "vllm:prefix_cache_queries_total", "r0", 0.0) for i in range(n)]
    con = memory_workspace()
    insert_metrics(con, rows)
    cut = 10.0 * (n // 2)
    end = 10.0 * (n - 1)
    phases = [{"name": "a", "start": 0, "end": cut}] if cut > 0 else []
    if end > cut:
        phases.append({"name": "b", "start": cut, "end": end})
    insert_manifest(con, {"name": "c", "t0": T0, "phases": phases})
    c = analyze(con, AnalyzeOptions(only=["counters"])).counters
    assert c is not None
    w = [x for x in c.windows if x.replica is None]
    assert w[0].prompt_rise == sum(rises)
    assert sum(x.prompt_rise for x in w[1:]) == sum(rises)


@pytest.mark.slow
@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    spans=st.lists(st.tuples(st.integers(0, 390), st.integers(1, 120)), min_size=1, max_size=20),
)
def test_wasted_prefill_windows_match_direct_sums_for_any_phases(
    seed: int, spans: list[tuple[int, int]]
) -> None:
    """Phases of any number (past the SQL CASE's 12 cut points too), overlapping or not:
    each window's computed tokens equal a direct sum over the steps with t_done in it."""
    con = memory_workspace()
    random_engine_run(con, seed)
    con.execute("delete from phases")
    phases = [(f"p{i}", float(a), float(a + d)) for i, (a, d) in enumerate(spans)]
    r = analyze(con, AnalyzeOptions(only=["wasted_prefill"], phases=phases))
    if r.wasted_prefill is None:
        return
    got = {w.window: w.computed_tokens for w in r.wasted_prefill.windows if w.replica is None}
    ctx = r.context

    def direct(a: float, b: float, closed: bool) -> int:
        op = "<=" if closed else "<"
        q = f"select coalesce(sum(prompt_computed), 0) from steps where t_done >= ? and t_done {op} ?"
        return int(con.execute(q, [a, b]).fetchall()[0][0])

    assert got["run"] == direct(ctx.window_start, ctx.window_end, True)
    for i, (a, d) in enumerate(spans):
        assert got[f"p{i}"] == direct(T0 + a, min(T0 + a + d, ctx.window_end), False)
