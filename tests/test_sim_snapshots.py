"""The seed-1 summary of every built-in scenario, as a snapshot (one JSON file each).

A change to the model that moves any figure shows here; update with
`python -m pytest tests/test_sim_snapshots.py --snapshot-update` only when the change is
meant, and say so. Floats are rounded to 6 significant digits (the analyses' sums may differ
in the last bits between DuckDB thread schedules).
"""

from __future__ import annotations

from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from relplan.sim.scenario import builtin_names
from tests.helpers.sim_runs import simulated


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
    _, s = simulated(name, 1)  # simulate(name, FOLDER, seed=1), once per test run
    assert _rounded(s.model_dump(mode="json")) == snapshot_json
