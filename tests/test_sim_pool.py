"""The simulator's worker processes run their libraries on one thread each."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor

import polars as pl
import pytest

from relplan.sim.pool import duckdb_config, spawn_context


@pytest.mark.slow
def test_a_worker_runs_polars_and_duckdb_on_one_thread() -> None:
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn_context()) as pool:
        assert pool.submit(os.getenv, "POLARS_MAX_THREADS").result(timeout=120) == "1"
        assert pool.submit(pl.thread_pool_size).result(timeout=120) == 1
        assert pool.submit(duckdb_config).result(timeout=120) == {"threads": 1}


def test_outside_a_worker_duckdb_keeps_its_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RELPLAN_WORKER_THREADS", raising=False)
    assert duckdb_config() == {}
    monkeypatch.setenv("RELPLAN_WORKER_THREADS", "zero")
    assert duckdb_config() == {}
