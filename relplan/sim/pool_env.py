"""Imported first in the simulator's fork server, so every worker forked from it runs its
libraries on one thread: the parallelism is one run per core, and a worker whose polars and
DuckDB each started a thread per core would fight the other workers for the same cores."""

from __future__ import annotations

import os

os.environ["POLARS_MAX_THREADS"] = "1"  # read when polars is first imported
os.environ["RELPLAN_WORKER_THREADS"] = "1"  # read by `pool.duckdb_config`
