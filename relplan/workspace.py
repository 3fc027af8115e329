"""The workspace: one DuckDB file holding everything ingested about an incident.

Owns the schema (`queries/schema.sql`), the connection settings (a memory limit
and a spill directory so inputs larger than memory still ingest) and the path rules:
`--db`, else `$RELPLAN_DB`, else `./relplan.duckdb`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from relplan import sql
from relplan.errors import InputError, NoDataError

DEFAULT_DB = Path("relplan.duckdb")
# DuckDB's own limit for buffers it manages; it spills to the temp directory past this.
DEFAULT_MEMORY_LIMIT = os.environ.get("RELPLAN_MEMORY_LIMIT", "1GB")

TABLES = (
    "sources",
    "attempts",
    "events",
    "request_ids",
    "steps",
    "engine_stats",
    "metric_samples",
    "metric_meta",
    "manifests",
    "phases",
    "rejects",
)


def resolve_db(db: Path | None) -> Path:
    if db is not None:
        return db
    env = os.environ.get("RELPLAN_DB")
    return Path(env) if env else DEFAULT_DB


def connect(path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed and allowed) the workspace and make sure its schema exists."""
    if read_only and not path.exists():
        raise NoDataError(f"{path}: no workspace here; run `relplan ingest` first")
    try:
        con = duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as exc:
        raise InputError(f"cannot open workspace: {exc}", str(path)) from exc
    con.execute(f"set memory_limit = '{DEFAULT_MEMORY_LIMIT}'")
    con.execute("set preserve_insertion_order = false")
    if not read_only:
        tmp = path.with_name(path.name + ".tmp")
        con.execute(f"set temp_directory = '{_sql_string(str(tmp))}'")
        con.execute(sql.load("schema").text)
    return con


@contextmanager
def open_workspace(path: Path, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    con = connect(path, read_only=read_only)
    try:
        yield con
    finally:
        con.close()


def _sql_string(text: str) -> str:
    # Settings cannot take prepared parameters; the only values formatted in are paths.
    return text.replace("'", "''")
