"""The engine's loop over plain decode steps (`Engine.decode_run`) gives the run the general
path gives, to the last bit: every record, event, attempt and scrape of a simulation is the
same with the loop turned off."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from relplan.sim.engine import Engine
from relplan.sim.run import prepare
from relplan.sim.simulator import Simulation
from relplan.sim.writer import engine_frame, event_frame, proxy_frame

# the reference shape with its hold shortened (the overload and its drain are kept)
SHORT = ["workload.phases.2.seconds=150"]


def _run(scenario: str, sets: list[str], record_steps: bool) -> Simulation:
    p = prepare(scenario, [*SHORT, *sets], 1)
    sim = Simulation(p.scenario, p.profile, p.capacity, 1, record_steps=record_steps)
    return sim.run()


def _frames(sim: Simulation, record_steps: bool) -> dict[str, Any]:
    out = {
        "proxy": proxy_frame(sim),
        "events": event_frame(sim),
        "samples": pl.DataFrame(sim.samples, orient="row"),
    }
    if record_steps:
        out["engine"] = engine_frame(sim)
    return out


@pytest.mark.parametrize(
    ("scenario", "sets"),
    [
        ("pulse-retry-cancel", []),
        ("pulse-retry-coalesce", []),
        ("pulse-retry-enginecap", []),
        ("pulse-retry-cancel-2048", []),
        # (a setting the profile's C^ is not calibrated for: given)
        ("pulse-retry-cancel", ["engine.async_depth=1", "capacity_calls_per_s=2.85"]),
        ("pulse-retry-cancel", ["engine.retry_prompt_cached=true"]),
    ],
)
@pytest.mark.parametrize("record_steps", [True, False])
def test_a_run_is_the_same_without_the_decode_loop(
    scenario: str, sets: list[str], record_steps: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    looped = 0
    real = Engine.decode_run

    def counted(self: Engine, *args: Any) -> float | None:
        nonlocal looped
        before = self.next_step
        last = real(self, *args)
        looped += self.next_step - before
        return last

    monkeypatch.setattr(Engine, "decode_run", counted)
    fast = _run(scenario, sets, record_steps)
    assert looped > fast.engine.next_step // 4, "most plain decode steps take the loop"

    monkeypatch.setattr(Engine, "decode_run", lambda self, *args: None)
    slow = _run(scenario, sets, record_steps)

    assert fast.now == slow.now
    assert fast.engine.next_step == slow.engine.next_step
    got, want = _frames(fast, record_steps), _frames(slow, record_steps)
    for name, frame in want.items():
        assert_frame_equal(got[name], frame, check_exact=True)  # name: in the traceback
