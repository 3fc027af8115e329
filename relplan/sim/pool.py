"""The process context shared by the simulator's parallel runners (sweep, calibrate)."""

from __future__ import annotations

import multiprocessing
import os


def spawn_context() -> multiprocessing.context.BaseContext:
    """Workers forked from a fresh fork server that has only imported the simulator: forking
    this process (which may run polars/DuckDB threads) could deadlock, and spawning a fresh
    interpreter per worker pays the imports each time. `pool_env` goes first: it sets the
    workers' thread counts before polars is imported."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["relplan.sim.pool_env", "relplan.sim.sweep"])
    return ctx


def duckdb_config() -> dict[str, str | bool | int | float | list[str]]:
    """DuckDB settings for a connection the simulator opens: one thread inside a worker of a
    parallel run (see `pool_env`), DuckDB's default elsewhere."""
    threads = os.environ.get("RELPLAN_WORKER_THREADS", "")
    return {"threads": int(threads)} if threads.isdigit() and int(threads) > 0 else {}
