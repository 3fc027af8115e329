"""The process context shared by the simulator's parallel runners (sweep, calibrate)."""

from __future__ import annotations

import multiprocessing


def spawn_context() -> multiprocessing.context.BaseContext:
    """Workers forked from a fresh fork server that has only imported the simulator: forking
    this process (which may run polars/DuckDB threads) could deadlock, and spawning a fresh
    interpreter per worker pays the imports each time."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["relplan.sim.sweep"])
    return ctx
