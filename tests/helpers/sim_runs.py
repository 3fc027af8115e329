"""Seeded runs of the built-in scenarios, simulated once per test run (shared by the
pytest-xdist workers through tests/helpers/templates.py) and read-only from then on: the
output folder `relplan.sim.run.simulate` wrote and the summary it returned (kept pickled, so
the summary a test reads is the object simulate made, bit for bit)."""

from __future__ import annotations

import pickle
from pathlib import Path

from relplan.sim.run import simulate
from relplan.sim.summary import SimSummary
from tests.helpers.templates import template


def simulated(scenario: str, seed: int) -> tuple[Path, SimSummary]:
    """(output folder, summary) of `simulate(scenario, folder, seed=seed)`, run once."""

    def build(path: Path) -> None:
        summary = simulate(scenario, path.parent / f"{scenario}-{seed}", seed=seed)
        path.write_bytes(pickle.dumps(summary))

    kept = template(f"simulate {scenario} seed {seed}", build, name="summary.pickle")
    summary = pickle.loads(kept.read_bytes())
    assert isinstance(summary, SimSummary)
    return kept.parent / f"{scenario}-{seed}", summary
