"""Clients and proxy controls in isolation, on hand-checked timelines.

Each test builds a Simulation with no synthetic arrivals (one phase at 0 calls/s) and plans
its calls by hand. Steps cost exactly 10 ms and there is no shared prefix, so an execution
with an 8-token prompt and N output tokens that runs alone takes N steps (the prefill step
makes the first token) and is finished 0.010 * N s after it arrives at an idle engine.
Backoff is fixed at 0.5 s (uniform between equal bounds) unless said otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest

from relplan.sim.execution import ABORTED, FINISHED, EngineEvent
from relplan.sim.profiles import CostSpec, Profile
from relplan.sim.scenario import Scenario
from relplan.sim.simulator import Simulation

PROFILE = Profile(
    name="ten-ms",
    model_name="test-model",
    speed=1.0,
    cost=CostSpec(a_ms=10.0, b_ms_per_token=0.0, c_ms_per_pair=0.0, f_ms_per_context_token=0.0),
)


def make_sim(seconds: float = 100.0, **sections: Any) -> Simulation:
    data: dict[str, Any] = {
        "name": "hand",
        "workload": {
            "phases": [{"name": "all", "seconds": seconds, "rate_per_s": 0.0}],
            "prefix_tokens": 0,
        },
        "client": {"backoff_min_s": 0.5, "backoff_max_s": 0.5},
    }
    for key, value in sections.items():
        data.setdefault(key, {}).update(value)
    return Simulation(Scenario.model_validate(data), PROFILE, None, 1)


def rows(sim: Simulation) -> list[tuple[str, int, float, float, str, str | None, bool, int | None]]:
    return [
        (
            a.call.call_id,
            a.number,
            round(a.t_sent, 6),
            round(a.t_end or -1, 6),
            a.outcome or "",
            None if a.ex is None else a.ex.execution_id,
            a.attached,
            a.status,
        )
        for a in sim.clients.attempts
    ]


def test_retry_budget_refuses_the_second_retry_in_the_window() -> None:
    """Ten calls at t = 0.0, 0.1, ..., 0.9, each needing 10 s of engine time; deadline 1 s,
    one retry each. Every first attempt times out (t = 1.0 ... 1.9) and retries 0.5 s later
    (t = 1.5 ... 2.4). The window holds 10 first attempts, so the budget (10 %) admits one
    retry: the first (call 0 at 1.5) is admitted, the second (call 1 at 1.6) and all later
    ones are refused with 429 and end at once."""
    sim = make_sim(
        client={"deadline_s": 1.0, "max_retries": 1},
        proxy={"retry_budget": {"ratio": 0.1, "window_s": 60}},
    )
    for i in range(10):
        sim.add_call(i / 10, 8, 1000)
    sim.run()
    retries = sorted((r for r in rows(sim) if r[1] == 1), key=lambda r: r[2])
    assert retries[0][:5] == ("call-00000", 1, 1.5, 2.5, "client_gone")
    assert retries[0][5] == "call-00000-1"
    assert retries[1] == ("call-00001", 1, 1.6, 1.6, "shed", None, False, 429)
    assert all(r[4] == "shed" and r[7] == 429 for r in retries[1:])
    assert len(sim.executions) == 11


def test_coalesced_retry_receives_its_calls_response() -> None:
    """One call, 300 output tokens: its execution finishes at t = 3.0. Deadline 2 s: attempt
    0 leaves at 2.0; the retry at 2.5 attaches to the still-running execution (cancellation is
    deferred 10 s, so nothing was aborted) and receives the response at 3.0."""
    sim = make_sim(
        client={"deadline_s": 2.0, "max_retries": 3},
        proxy={"coalesce": True, "cancellation": "deferred(10)"},
    )
    sim.add_call(0.0, 8, 300)
    sim.run()
    assert rows(sim) == [
        ("call-00000", 0, 0.0, 2.0, "client_gone", "call-00000-0", False, None),
        ("call-00000", 1, 2.5, 3.0, "delivered", "call-00000-0", True, 200),
    ]
    assert len(sim.executions) == 1


def test_without_coalescing_the_retry_starts_over_and_the_first_response_is_dropped() -> None:
    """Same call without coalescing or cancellation, one retry: the first execution still
    finishes at 3.0, for nobody (no attempt is attached to it); the retry's own execution
    arrives at 2.5 and needs 3 s more, past the retry's deadline (4.5)."""
    sim = make_sim(client={"deadline_s": 2.0, "max_retries": 1})
    sim.add_call(0.0, 8, 300)
    sim.run()
    assert rows(sim) == [
        ("call-00000", 0, 0.0, 2.0, "client_gone", "call-00000-0", False, None),
        ("call-00000", 1, 2.5, 4.5, "client_gone", "call-00000-1", False, None),
    ]
    assert sim.executions[0].state == FINISHED  # at 3.0, response dropped


def test_deferred_cancel_is_prevented_by_a_retry_arriving_in_time() -> None:
    """2,000 output tokens: the execution would finish at 20.0. Deadline 10 s, cancellation
    deferred 5 s. Attempt 0 leaves at 10.0; its retry attaches at 10.5; when the deferred
    cancellation fires at 15.0 the retry is attached and still waiting, so nothing is
    aborted and the retry gets the response at 20.0."""
    sim = make_sim(
        seconds=30.0,
        client={"deadline_s": 10.0, "max_retries": 1},
        proxy={"coalesce": True, "cancellation": "deferred(5)"},
    )
    sim.add_call(0.0, 8, 2000)
    sim.run()
    assert rows(sim) == [
        ("call-00000", 0, 0.0, 10.0, "client_gone", "call-00000-0", False, None),
        ("call-00000", 1, 10.5, 20.0, "delivered", "call-00000-0", True, 200),
    ]
    assert sim.clients.attempts[0].t_cancel is None
    assert sim.executions[0].state == FINISHED


def test_deferred_cancel_aborts_when_no_retry_arrived_in_time() -> None:
    """As above but cancellation deferred only 0.25 s, shorter than the 0.5 s backoff: at
    10.25 no other attempt is attached, so the proxy aborts (t_cancel = 10.25) and the retry
    at 10.5 starts a new execution."""
    sim = make_sim(
        seconds=30.0,
        client={"deadline_s": 10.0, "max_retries": 1},
        proxy={"coalesce": True, "cancellation": "deferred(0.25)"},
    )
    sim.add_call(0.0, 8, 2000)
    sim.run()
    first, retry = sim.clients.attempts
    assert first.t_cancel == 10.25
    assert sim.executions[0].state == ABORTED
    assert retry.ex is sim.executions[1]
    assert not retry.attached


def test_immediate_cancellation_aborts_when_the_client_leaves() -> None:
    sim = make_sim(
        client={"deadline_s": 1.0, "max_retries": 0}, proxy={"cancellation": "immediate"}
    )
    sim.add_call(0.0, 8, 500)
    sim.run()
    assert sim.clients.attempts[0].t_cancel == 1.0
    assert sim.executions[0].state == ABORTED


def test_proxy_cap_serves_its_queue_newest_first() -> None:
    """At most one execution at the engine. A (t=0) runs for 1 s (100 tokens); B, C, D arrive
    at 0.1, 0.2, 0.3 and queue at the proxy. Newest first: D is forwarded when A finishes
    (1.0), then C (2.0), then B (3.0)."""
    sim = make_sim(
        client={"deadline_s": 100.0, "max_retries": 0},
        proxy={"max_outstanding": 1, "queue_order": "newest_first"},
    )
    for t in (0.0, 0.1, 0.2, 0.3):
        sim.add_call(t, 8, 100)
    sim.run()
    arrivals = [
        (sim.executions[x].execution_id, round(t, 6))
        for t, x, c in zip(
            sim.engine.event_t, sim.engine.event_execution, sim.engine.event_kind, strict=False
        )
        if c == EngineEvent.ARRIVED
    ]
    assert arrivals == [
        ("call-00000-0", 0.0),
        ("call-00003-0", 1.0),
        ("call-00002-0", 2.0),
        ("call-00001-0", 3.0),
    ]


def test_proxy_cap_fifo_and_overflow_refused() -> None:
    """FIFO with a queue of 2: B and C queue, D finds the queue full and is refused (503)."""
    sim = make_sim(
        client={"deadline_s": 100.0, "max_retries": 0},
        proxy={"max_outstanding": 1, "queue_limit": 2},
    )
    for t in (0.0, 0.1, 0.2, 0.3):
        sim.add_call(t, 8, 100)
    sim.run()
    r = rows(sim)
    assert r[3] == ("call-00003", 0, 0.3, 0.3, "shed", None, False, 503)
    assert [e.execution_id for e in sim.executions] == [
        "call-00000-0",
        "call-00001-0",
        "call-00002-0",
    ]


def test_engine_refusal_fails_the_attempt_which_retries() -> None:
    """Engine runs 1 sequence and lets 1 wait: the third call is refused at once (503,
    outcome error, with its execution id) and retries 0.5 s later; by then the first call
    (40 tokens) is done at 0.40 and the second runs, so the retry can wait and is served."""
    sim = make_sim(
        client={"deadline_s": 100.0, "max_retries": 1},
        engine={"max_num_seqs": 1, "waiting_cap": 1},
    )
    for t, out in ((0.0, 40), (0.01, 100), (0.02, 100)):
        sim.add_call(t, 8, out)
    sim.run()
    r = rows(sim)
    assert r[2] == ("call-00002", 0, 0.02, 0.02, "error", "call-00002-0", False, 503)
    assert r[3][:2] == ("call-00002", 1)
    assert r[3][2] == 0.52
    assert r[3][4] == "delivered"


def test_a_retry_scheduled_after_the_last_phase_is_sent() -> None:
    """The last phase ends at 1.2 s; the first attempt times out at 1.0 and its retry is
    due at 1.5, after the phase: it is sent (the end of the phases stops planning new calls,
    not the clients' retries), times out at 2.5, and so on until the retries are used up
    (sent at 0, 1.5, 3.0, 4.5; the last gives up at 5.5); the run stops at the next scrape."""
    sim = make_sim(seconds=1.2, client={"deadline_s": 1.0, "max_retries": 3})
    sim.add_call(0.0, 8, 1000)
    sim.run()
    sent = [(a.number, a.t_sent, a.t_end) for a in sim.clients.attempts]
    assert sent == [(0, 0.0, 1.0), (1, 1.5, 2.5), (2, 3.0, 4.0), (3, 4.5, 5.5)]
    assert sim.now == 10.0  # the first scrape (every 5 s) after the call resolved at 5.5


def test_a_late_retry_is_served_after_the_last_phase() -> None:
    """One sequence at a time, deadline 0.45 s, a 0.5 s phase: call 0 (40 tokens) runs 0-0.40;
    call 1 (10 tokens, at 0.01) waits behind it, runs 0.40-0.50 and its client leaves at 0.46;
    the retry, due at 0.96 (after the last phase), is sent, runs alone 0.96-1.06, delivered."""
    sim = make_sim(
        seconds=0.5, client={"deadline_s": 0.45, "max_retries": 1}, engine={"max_num_seqs": 1}
    )
    sim.add_call(0.0, 8, 40)
    sim.add_call(0.01, 8, 10)
    sim.run()
    last = sim.clients.attempts[-1]
    assert (last.call.call_id, last.number, last.outcome) == ("call-00001", 1, "delivered")
    assert last.t_sent == pytest.approx(0.96)
    assert last.t_end == pytest.approx(1.06)
