"""When `relplan report` may fork its helper processes from itself (the what-if's replay
workers, relplan/whatif/replay.py; the chart worker, relplan/report/chart_worker.py; the
ingest worker, relplan/report/ingest_worker.py) instead of starting fresh interpreters."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess


def fork_ok() -> bool:
    """Whether this process can fork workers from itself: Linux (the thread count is read
    from /proc), one thread (a thread holding a lock at the fork would leave it held in the
    child forever), and neither polars, which reads its thread count once, nor DuckDB
    imported yet."""
    if "polars" in sys.modules or "duckdb" in sys.modules:
        return False
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            threads = next(line for line in fh if line.startswith("Threads:"))
    except (OSError, StopIteration, UnicodeDecodeError):
        return False
    return threads.split()[1] == "1"


def cores() -> int:
    """The cores this machine has (`os.cpu_count`, one when unknown)."""
    return os.cpu_count() or 1


def fork_worker(
    serve: Callable[[Connection, Connection], None], name: str
) -> tuple[Connection, BaseProcess]:
    """A daemon process forked from this one that runs `serve(its end, this end)` (`serve`
    closes this end, which the fork copied), and this process's end of the pipe to it: the
    chart worker's and the ingest worker's start."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    mine, theirs = context.Pipe()
    proc = context.Process(target=serve, args=(theirs, mine), name=name, daemon=True)
    proc.start()
    theirs.close()
    return mine, proc
