"""Seeded runs of the built-in scenarios, simulated once per test run (shared by the
pytest-xdist workers through tests/helpers/templates.py) and read-only from then on: the
output folder `relplan.sim.run.simulate` wrote and the summary it returned (kept pickled, so
the summary a test reads is the object simulate made, bit for bit). `tiny_run()`: the four
files of a tiny scenario, for a smoke test that needs any input at all (a bench script's)."""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

from relplan.sim.run import simulate
from relplan.sim.summary import SimSummary
from tests.helpers.templates import template


def simulated(scenario: str, seed: int, sets: tuple[str, ...] = ()) -> tuple[Path, SimSummary]:
    """(output folder, summary) of `simulate(scenario, folder, seed=seed, sets=sets)`, run
    once."""

    def build(path: Path) -> None:
        out = path.parent / f"{scenario}-{seed}"
        summary = simulate(scenario, out, seed=seed, sets=list(sets) or None)
        path.write_bytes(pickle.dumps(summary))

    key = f"simulate {scenario} seed {seed}" + (f" sets {list(sets)!r}" if sets else "")
    kept = template(key, build, name="summary.pickle")
    summary = pickle.loads(kept.read_bytes())
    assert isinstance(summary, SimSummary)
    return kept.parent / f"{scenario}-{seed}", summary


# 20 s at 1 call/s, no overload: a report of it costs about two thirds of the sample's
# computed report's CPU and replays nothing
TINY = """\
name = "tiny"
description = "smoke tests: 20 s at 1 call/s"
overload_phase = "none"

[workload]
phases = [{ name = "only", seconds = 20, rate_per_s = 1.0 }]
"""


def tiny_run() -> Path:
    """The output folder of the scenario TINY, seed 1, simulated once per test run."""

    def build(path: Path) -> None:
        scenario = path.parent / "tiny.toml"
        scenario.write_text(TINY, encoding="utf-8")
        simulate(str(scenario), path.parent / "tiny", seed=1)
        path.write_text("done", encoding="utf-8")

    key = "simulate tiny " + hashlib.sha256(TINY.encode()).hexdigest()
    return template(key, build, name="done").parent / "tiny"
