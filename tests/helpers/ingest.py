"""Helpers shared by the ingest tests: the bundled input files, ingest and read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from relplan.ingest import IngestOptions, IngestReport, ingest_paths
from relplan.workspace import TABLES

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"
INCIDENT = DATA / "incident"
ADAPTERS = DATA / "adapters"


def ingest(db: Path, *paths: Path, **opts: Any) -> IngestReport:
    return ingest_paths(db, list(paths), IngestOptions(**opts))


def rows(db: Path, query: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(query, params or {}).fetchall()
    finally:
        con.close()


def state(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (sorted), to compare a workspace before and after."""
    if not db.exists():
        return {}
    con = duckdb.connect(str(db), read_only=True)
    try:
        out: dict[str, list[tuple[Any, ...]]] = {}
        for t in TABLES:
            out[t] = sorted(con.table(t).fetchall(), key=repr)
        return out
    finally:
        con.close()


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def whole_state(db: Path) -> dict[str, Any] | None:
    """Everything a workspace file holds, to compare before and after a failed command: every
    table's columns and types, row count and an md5 of its sorted rows as text (the tables of
    TABLES and any other: attachments, attached_files, relplan_meta), the views and the
    sequences. None when there is no file."""
    if not db.exists():
        return None
    con = duckdb.connect(str(db), read_only=True)
    try:
        return whole_state_of(con)
    finally:
        con.close()


def whole_state_of(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """`whole_state` of the database a connection has as its current one (a file connected,
    or one attached and used: tests/helpers/fast_read.py)."""
    out: dict[str, Any] = {}
    names = con.execute(
        "select table_name from duckdb_tables() where not internal and not temporary"
        " and database_name = current_database() order by table_name"
    ).fetchall()
    for (t,) in names:
        cols = con.execute(
            "select column_name, data_type from duckdb_columns()"
            " where table_name = $t and database_name = current_database()"
            " and schema_name = 'main' order by column_index",
            {"t": t},
        ).fetchall()
        n, h = con.execute(
            "select count(*), md5(coalesce(string_agg(r, chr(10) order by r), ''))"
            f' from (select cast(x as varchar) as r from "{t}" as x)'
        ).fetchone() or (0, "")
        out[t] = (cols, n, h)
    out["(views)"] = con.execute(
        "select view_name, sql from duckdb_views() where not internal and not temporary"
        " and database_name = current_database() order by view_name"
    ).fetchall()
    out["(sequences)"] = con.execute(
        "select sequence_name, last_value from duckdb_sequences()"
        " where database_name = current_database() order by sequence_name"
    ).fetchall()
    return out
