"""Reading a workspace back in a test, without a new DuckDB per read.

`duckdb.connect(path)` makes a new database instance each time, and making one (its catalog of
built-in functions) costs about 16 ms of CPU, more than most of the queries a test then runs.
These helpers keep one in-memory DuckDB per test process and attach the workspace file to it
read-only for each call (about 3 ms), detached again before they return, so the file is closed
as it is after `duckdb.connect(...).close()`. They read the same rows as tests/helpers/ingest.py's
`rows`, `state` and `whole_state` (tests/test_fast_read.py holds them equal), which they
replace in the tests that read many workspaces.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from relplan.workspace import TABLES
from tests.helpers.ingest import whole_state_of

_ALIAS = "rp_test_ws"
_LOCK = threading.Lock()
_HOST: list[duckdb.DuckDBPyConnection] = []


@contextmanager
def attached(db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection whose default catalog is the workspace `db`, attached read-only."""
    with _LOCK:
        if not _HOST:
            _HOST.append(duckdb.connect(config={"autoload_known_extensions": False}))
        con = _HOST[0]
        quoted = str(db).replace("'", "''")
        con.execute(f"attach '{quoted}' as {_ALIAS} (read_only)")
        try:
            con.execute(f"use {_ALIAS}")
            yield con
        finally:
            con.execute("use memory")
            con.execute(f"detach {_ALIAS}")


def rows(db: Path, query: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    with attached(db) as con:
        return con.execute(query, params or {}).fetchall()


def state(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (sorted), to compare a workspace before and after."""
    if not db.exists():
        return {}
    with attached(db) as con:
        return {t: sorted(con.table(t).fetchall(), key=repr) for t in TABLES}


def whole_state(db: Path) -> dict[str, Any] | None:
    """Everything a workspace file holds, as tests/helpers/ingest.py's `whole_state` gives it:
    every table's columns and types, row count and an md5 of its sorted rows as text, the
    views and the sequences. None when there is no file."""
    if not db.exists():
        return None
    with attached(db) as con:
        return whole_state_of(con)
