"""relplan/sim/costfit.py: the step-cost fit from a workspace's engine trace."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from relplan.sim.costfit import fit_engine, render_fit
from relplan.workspace import connect

T0 = 1764460800.0


def _steps(path: Path, rows: list[tuple[int, float, float, int, int]]) -> None:
    """rows: (step, t_issue, t_done, prompt_computed, decoding executions)."""
    values: list[tuple[object, ...]] = []
    for step, t0, t1, prefill, decodes in rows:
        values.append((step, t0, t1, "p", prefill, 0, step))
        values += [(step, t0, t1, f"d{j}", 0, 1, step) for j in range(decodes)]
    con = connect(path)
    text = ", ".join(
        f"({a}, {b!r}, {c!r}, '{d}', {e}, 0, {f}, null, 1, {g})" for a, b, c, d, e, f, g in values
    )
    con.execute(f"insert into steps values {text}")
    con.close()


@pytest.mark.slow
def test_a_linear_engine_is_recovered_with_no_error(tmp_path: Path) -> None:
    rng = random.Random(3)
    rows, t = [], T0
    for step in range(60):
        prefill, decodes = rng.randrange(0, 2048), rng.randrange(0, 30)
        ms = 5.0 + 0.02 * prefill + 0.3 * decodes
        rows.append((step, t, t + ms / 1000.0, prefill, decodes))
        t += ms / 1000.0
    _steps(tmp_path / "w.duckdb", rows)
    con = connect(tmp_path / "w.duckdb", read_only=True)
    fit = fit_engine(con)
    con.close()
    got = {c.name: c.value_ms for c in fit.coefficients}
    assert got["a_ms"] == pytest.approx(5.0, rel=1e-4)
    assert got["b_ms_per_token"] == pytest.approx(0.02, rel=1e-4)
    assert got["b_ms_per_decode_seq"] == pytest.approx(0.3, rel=1e-4)
    assert all(c.constrained for c in fit.coefficients)
    assert fit.median_abs_error_pct is not None
    assert fit.median_abs_error_pct < 0.01
    assert fit.source == "steps"
    assert fit.steps_used == 60
    assert fit.kv_capacity_tokens is None


def test_a_column_that_never_varies_is_reported_as_not_constrained(tmp_path: Path) -> None:
    rows, t = [], T0
    for step in range(30):
        prefill = 100 * (step % 7)
        ms = 4.0 + 0.01 * prefill
        rows.append((step, t, t + ms / 1000.0, prefill, 0))
        t += ms / 1000.0
    _steps(tmp_path / "w.duckdb", rows)
    con = connect(tmp_path / "w.duckdb", read_only=True)
    fit = fit_engine(con)
    con.close()
    decode = next(c for c in fit.coefficients if c.name == "b_ms_per_decode_seq")
    assert decode.value_ms is None
    assert not decode.constrained
    assert "not constrained" in render_fit(fit)


def test_too_few_steps_fit_nothing(tmp_path: Path) -> None:
    _steps(tmp_path / "w.duckdb", [(0, T0, T0 + 0.01, 10, 1)])
    con = connect(tmp_path / "w.duckdb", read_only=True)
    fit = fit_engine(con)
    con.close()
    assert fit.source == "steps"
    assert all(c.value_ms is None for c in fit.coefficients)
    assert any("at least" in n for n in fit.notes)
