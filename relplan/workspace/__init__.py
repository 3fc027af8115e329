"""The workspace: one DuckDB file holding everything ingested about an incident.

Owns the schema (`queries/schema.sql`), the connection settings (a memory limit
and a spill directory so inputs larger than memory still ingest) and the path rules:
`--db`, else `$RELPLAN_DB`, else `./relplan.duckdb`.

What the workspace says about itself (the latest run manifest, the sources, the rows per
table) is read in `relplan.workspace.facts`.
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
    # Settings go in as connection config, not as SQL text: a path never becomes SQL.
    config: dict[str, str | bool | int | float | list[str]] = {
        "memory_limit": DEFAULT_MEMORY_LIMIT,
        "preserve_insertion_order": False,
    }
    if not read_only:
        config["temp_directory"] = str(path.with_name(path.name + ".tmp"))
    try:
        con = duckdb.connect(str(path), read_only=read_only, config=config)
    except duckdb.Error as exc:
        raise InputError(f"cannot open workspace: {exc}", str(path)) from exc
    if not read_only:
        con.execute(sql.load("schema").text)
    return con


@contextmanager
def open_workspace(path: Path, *, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    con = connect(path, read_only=read_only)
    try:
        yield con
    finally:
        con.close()
