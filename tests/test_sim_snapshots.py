"""The seed-1 summary of every built-in scenario, as a snapshot (one JSON file each).

A change to the model that moves any figure shows here; update with
`python -m pytest tests/test_sim_snapshots.py --snapshot-update` only when the change is
meant, and say so. Floats are rounded to 6 significant digits (the analyses' sums may differ
in the last bits between DuckDB thread schedules).

The calibration ramp runs with its stages cut from 300 s to 60 s (SHORTER): its 31 stages,
their rates, its patient clients and its engine as built in, so the same windows are cut, the
stages above the capacity still build a backlog that drains only once the load stops, and any
change to the model still moves its figures; the 300 s ramp's seed-1 run cost about 15 CPU
seconds, half of this file's, the 60 s one about 3.
"""

from __future__ import annotations

from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from relplan.sim.scenario import builtin_names, load_scenario
from tests.helpers.sim_runs import simulated

STAGE_S = 60


def _shorter(name: str) -> tuple[str, ...]:
    """The settings that cut every stage of the ramp to STAGE_S (none for another scenario)."""
    if name != "ramp":
        return ()
    phases = load_scenario(name).workload.phases
    assert all(p.seconds > STAGE_S for p in phases)  # a cut, never a stretch
    return tuple(f"workload.phases.{i}.seconds={STAGE_S}" for i in range(len(phases)))


def _rounded(v: Any) -> Any:
    if isinstance(v, float):
        return float(f"{v:.6g}")
    if isinstance(v, dict):
        return {k: _rounded(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_rounded(x) for x in v]
    return v


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


@pytest.mark.slow
@pytest.mark.parametrize("name", builtin_names())
def test_seed_1_summary(name: str, snapshot_json: SnapshotAssertion) -> None:
    # simulate(name, FOLDER, seed=1), once per test run (the ramp's stages shortened)
    _, s = simulated(name, 1, _shorter(name))
    assert _rounded(s.model_dump(mode="json")) == snapshot_json
