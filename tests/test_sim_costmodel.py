"""The step cost model against every measured H200 step time (tests/data/gpu-step-costs/).

The default profile's coefficients (speed 1: the measured GPU, before the profile's scaling)
must predict every prefill-only, decode-only and mixed point within 10 %; the files and their
provenance are described in tests/data/gpu-step-costs/README.md.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from relplan.sim.costmodel import CostModel, step_cost_ms
from relplan.sim.profiles import load_profile

DATA = Path(__file__).parent / "data" / "gpu-step-costs"
MAX_ERROR = 0.10


def _measured() -> list[tuple[str, list[tuple[int, int]], list[int], float]]:
    """(label, prefill chunks (N, C), decode contexts, measured ms) for every timed point."""
    points = []
    with (DATA / "prefill.csv").open() as fh:
        for r in csv.DictReader(fh):
            n, c = int(r["N"]), int(r["C"])
            points.append((f"prefill N={n} C={c}", [(n, c)], [], float(r["ms_graph"])))
    with (DATA / "decode.csv").open() as fh:
        for r in csv.DictReader(fh):
            if not r["ms_graph"]:  # not measured (did not fit in memory)
                continue
            b, ln = int(r["B"]), int(r["L"])
            points.append((f"decode B={b} L={ln}", [], [ln] * b, float(r["ms_graph"])))
    with (DATA / "mixed.csv").open() as fh:
        for r in csv.DictReader(fh):
            n, c, b, ln = (int(r[k]) for k in ("N", "C", "B", "L"))
            label = f"mixed N={n} C={c} B={b} L={ln}"
            points.append((label, [(n, c)], [ln] * b, float(r["ms_fused_graph"])))
    return points


def _unscaled_default() -> CostModel:
    profile, _ = load_profile("h100-7b")
    model = profile.cost_model()
    return CostModel(**{**model.__dict__, "speed": 1.0})


def test_the_measured_data_covers_prefill_decode_and_mixed_steps() -> None:
    kinds = [label.split()[0] for label, *_ in _measured()]
    assert (kinds.count("prefill"), kinds.count("decode"), kinds.count("mixed")) == (28, 20, 4)


@pytest.mark.parametrize(("label", "chunks", "contexts", "ms"), _measured())
def test_the_cost_model_is_within_ten_percent_of_a_measured_step(
    label: str, chunks: list[tuple[int, int]], contexts: list[int], ms: float
) -> None:
    predicted = step_cost_ms(_unscaled_default(), chunks, contexts)
    assert abs(predicted / ms - 1) <= MAX_ERROR, f"{label}: model {predicted:.2f} ms, measured {ms}"


def test_a_small_decode_step_costs_at_least_the_weights_read() -> None:
    """One decode at 2,000 tokens of context: the 15.2 GB of weights read once at 4.26 TB/s
    is 3.6 ms; the model's floor keeps the step above it (measured 5.73 ms)."""
    assert step_cost_ms(_unscaled_default(), [], [2000]) >= 15.2 / 4.26


def test_the_floor_binds_a_small_step_and_compute_a_large_one() -> None:
    m = _unscaled_default()
    small = step_cost_ms(m, [], [2000])
    assert small == pytest.approx(
        m.floor_ms + m.floor_ms_per_seq + m.floor_ms_per_context_token * 2000
    )
    large = step_cost_ms(m, [(8192, 0)], [])
    assert large == pytest.approx(m.a_ms + m.b_ms_per_token * 8192 + m.c_ms_per_pair * 8192 * 4096)
