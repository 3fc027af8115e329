"""The summary's figures on a hand-built run whose every number can be checked on paper."""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan.sim.scenario import Scenario
from relplan.sim.simulator import Simulation
from relplan.sim.summary import summarize
from relplan.sim.writer import write_outputs
from tests.test_sim_proxy import PROFILE


def test_summary_of_a_hand_built_run(tmp_path: Path) -> None:
    """Steps cost 10 ms, one sequence at a time, 8-token prompts, no prefix; C^ = 1 call/s;
    deadline 5 s, window 30 s, no retries, immediate cancellation.
    Phases: base [0, 10), pulse [10, 20), hold [20, 80).

    base:  c0 at 1.0, 100 tokens: done at 2.0 (on time).
    pulse: B at 10.0, 600 tokens, would take 6 s: its client leaves at 15.0 and it is
           aborted (after its first token). c1 at 10.015 waits behind it (one sequence at a
           time); two of B's steps are in flight at the abort, so c1's prefill step is issued
           when the first of them is done (15.0 or 15.01) and is done 0.02 s later; c1's client
           leaves at 15.015, with that step in flight and before c1's first token.
    hold:  eleven calls at 25, 30, ..., 75, 100 tokens each: served at once, on time; the
           30 s bins after the pulse ([20, 50), [50, 80)) hold 5 and 6 calls, all on time,
           so service recovered at the first bin: 0 s.
    steady: [25, 80), the pulse's end plus D to the hold's end: the same eleven calls.

    Executions: 14, none by a retry. Computed prompt tokens: 14 x 8 = 112, of which B's and
    c1's are aborted (16); c1's 8 were in flight at the abort, before its first token.
    Rates (x C^ = 1): base 1 / 10 s accepted and completed; pulse accepted 2 / 10 s,
    completed 0; hold 11 / 60 s. Little's law in the hold: nothing waits (L = 0). Counters in
    the hold: prompt tokens and prefix-cache queries rise alike: shortfall 0.
    """
    scn = Scenario.model_validate(
        {
            "name": "hand",
            "workload": {
                "phases": [
                    {"name": "base", "seconds": 10, "rate_per_s": 0},
                    {"name": "pulse", "seconds": 10, "rate_per_s": 0},
                    {"name": "hold", "seconds": 60, "rate_per_s": 0},
                ],
                "prefix_tokens": 0,
            },
            "client": {
                "deadline_s": 5,
                "max_retries": 0,
                "delivery_window_s": 30,
            },
            "proxy": {"cancellation": "immediate"},
            "engine": {"max_num_seqs": 1},
        }
    )
    sim = Simulation(scn, PROFILE, 1.0, 1)
    sim.add_call(1.0, 8, 100)
    sim.add_call(10.0, 8, 600)
    sim.add_call(10.015, 8, 100)
    for t in range(25, 80, 5):
        sim.add_call(float(t), 8, 100)
    sim.run()
    write_outputs(sim, tmp_path, {"scenario": "hand"})
    s = summarize(tmp_path)

    assert s.capacity_calls_per_s == 1.0
    base, pulse, hold = s.phases["base"], s.phases["pulse"], s.phases["hold"]
    assert (base.calls, base.delivered_share, base.on_time_share) == (1, 1.0, 1.0)
    assert base.accepted_rate_x_capacity == pytest.approx(0.1)
    assert base.completed_rate_x_capacity == pytest.approx(0.1)
    assert (pulse.calls, pulse.delivered_share, pulse.on_time_share) == (2, 0.0, 0.0)
    assert pulse.accepted_rate_x_capacity == pytest.approx(0.2)
    assert pulse.completed_rate_x_capacity == 0.0
    assert (hold.calls, hold.delivered_share, hold.on_time_share) == (11, 1.0, 1.0)
    assert hold.accepted_rate_x_capacity == pytest.approx(11 / 60)
    assert hold.completed_rate_x_capacity == pytest.approx(11 / 60)
    # steady: from the pulse's end plus D (20 + 5) to the hold's end, the eleven hold calls
    assert s.steady is not None
    assert (s.steady.start_s, s.steady.end_s) == (25.0, 80.0)
    assert (s.steady.calls, s.steady.delivered_share, s.steady.on_time_share) == (11, 1.0, 1.0)
    assert s.steady.completed_rate_x_capacity == pytest.approx(11 / 55)
    assert s.steady.retry_share_of_executions == 0.0
    assert s.recovered_after_pulse_s == 0.0
    assert s.verdict == "recovered"
    assert s.after_overload.bins_with_calls == 2
    assert s.retry_share_of_executions == 0.0
    assert s.prefill.computed_tokens == 14 * 8
    assert s.prefill.aborted_share == pytest.approx(16 / 112)
    assert s.prefill.in_flight_share_of_aborted == 0.5
    assert s.prefill.before_first_token_share == pytest.approx(8 / 112)
    assert s.littles_law.l_waiting == 0.0
    assert s.littles_law.deadline_saturation == 0.0
    assert s.counter_shortfall_hold == 0.0
