"""The canonical proxy and engine formats (formats.md sections 1-2) in JSONL, CSV or Parquet.

DuckDB reads the files with explicit column types (queries/ingest_{proxy,engine}_read_*.sql).
JSON Lines has two readers: DuckDB's typed JSON reader (fast; it stages in file order, and
when the records are as many as the file's lines, rowid - base + 1 is each one's line) and a
line reader that parses each line's JSON in SQL, keeping line numbers and raw text (used when
the fast reader raises, which restarts the ingest exactly, when the file has blank lines,
and in skip mode when a record is refused, to keep its raw text).
CSV is read as text with its header; Parquet keeps its types. Engine Parquet whose columns
already have the contract's types is not staged at all in fail mode: the driver inserts it
straight into the tables (queries/ingest/direct_parquet_*.sql).
The readers share their pieces (file readers with line numbers, typed templates, conversion
error messages) as temp macros: queries/ingest/macros.sql, ingest/proxy_macros.sql and
ingest/engine_macros.sql, created by stage.create_stage inside the ingest transaction.
"""

from __future__ import annotations

import json

import duckdb

from relplan import sql
from relplan.errors import InputError
from relplan.ingest.base import FastPathFailed, IngestOptions, Staged
from relplan.ingest.detect import (
    ENGINE_COLUMNS,
    PROXY_COLUMNS,
    PROXY_REQUIRED,
    parquet_columns,
)
from relplan.ingest.files import FileInfo, first_unreadable_line


def _known(kind: str) -> tuple[str, ...]:
    return PROXY_COLUMNS if kind == "proxy" else ENGINE_COLUMNS


def _duck_msg(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _delete(con: duckdb.DuckDBPyConnection, kind: str, source_id: int) -> None:
    q = sql.load(f"ingest/delete_stage_{kind}")
    con.execute(q.text, q.bind({"source_id": source_id}))


def _jsonl_unknown_columns(info: FileInfo, kind: str) -> list[str]:
    """Keys outside the contract among the records in the first 64 KiB (a sample, said so)."""
    known = set(_known(kind))
    seen: set[str] = set()
    for line in info.head.decode("utf-8", errors="replace").splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            seen.update(k for k in obj if k not in known)
    return sorted(seen)


def stage_jsonl(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    kind, path, sid = staged.kind, str(info.path), staged.source_id
    staged.unknown_columns = _jsonl_unknown_columns(info, kind)

    def lines_reader() -> None:
        _delete(con, kind, sid)
        q = sql.load(f"ingest/{kind}_read_jsonl_lines")
        try:
            con.execute(q.text, q.bind({"path": path, "source_id": sid}))
        except duckdb.Error as exc:
            bad = first_unreadable_line(info.path)
            if bad is not None:
                raise InputError(bad[1], path, bad[0]) from exc
            raise InputError(f"cannot read as JSON Lines: {_duck_msg(exc)}", path) from exc

    if opts.exact:
        lines_reader()
        return
    fast = sql.load(f"ingest/{kind}_read_jsonl")
    con.execute("set preserve_insertion_order = true")
    try:
        con.execute(fast.text, fast.bind({"path": path, "source_id": sid}))
    except duckdb.Error as exc:
        # The transaction is aborted (the driver resets the setting after its rollback).
        raise FastPathFailed(f"{path}: {_duck_msg(exc)}") from exc
    con.execute("set preserve_insertion_order = false")
    q = sql.load(f"ingest/stage_rowids_{kind}")
    lo, hi, n = con.execute(q.text, q.bind({"source_id": sid})).fetchone() or (None, None, 0)
    if lo is None or hi is None or n != info.lines or hi - lo + 1 != n:
        # Blank lines (or a gap in rowids): record order does not give line numbers.
        lines_reader()
        return
    qb = sql.load("ingest/stage_set_base")
    con.execute(qb.text, qb.bind({"source_id": sid, "base": lo}))
    staged.restage_with_raw = lines_reader


def _table_columns(con: duckdb.DuckDBPyConnection, info: FileInfo, container: str) -> list[str]:
    if container == "parquet":
        return parquet_columns(info)
    q = sql.load("ingest/csv_header")
    try:
        cur = con.execute(q.text, q.bind({"path": str(info.path)}))
    except duckdb.Error as exc:
        raise InputError(f"cannot read as CSV: {_duck_msg(exc)}", str(info.path), 1) from exc
    return [str(d[0]) for d in cur.description or []]


def stage_table(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    """CSV or Parquet (staged.format)."""
    kind, path, sid, container = staged.kind, str(info.path), staged.source_id, staged.format
    cols = _table_columns(con, info, container)
    line = 1 if container == "csv" else None
    if kind == "proxy":
        missing = [c for c in PROXY_REQUIRED if c not in cols]
        if missing:
            raise InputError(
                f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}; expected"
                f" {', '.join(PROXY_REQUIRED)} (formats.md section 1)",
                path,
                line,
            )
    elif not set(cols) & {"type", "event", "prompt_computed", "num_running", "kv_usage"}:
        raise InputError(
            "no type column and none of event, prompt_computed, num_running, kv_usage; expected"
            " engine records (formats.md section 2)",
            path,
            line,
        )
    staged.unknown_columns = sorted(c for c in cols if c not in _known(kind))

    if (
        container == "parquet"
        and kind == "engine"
        and not opts.skip
        and not opts.exact
        and _canonical_types(con, path)
    ):
        staged.direct = [
            "ingest/direct_parquet_events",
            "ingest/direct_parquet_steps",
            "ingest/direct_parquet_engine_stats",
        ]
        return
    q = sql.load(f"ingest/{kind}_read_{container}")
    try:
        con.execute(q.text, q.bind({"path": path, "source_id": sid, "keep_raw": opts.skip}))
    except duckdb.Error as exc:
        if not opts.exact:  # the transaction is aborted: start again, exactly
            raise FastPathFailed(f"{path}: {_duck_msg(exc)}") from exc
        raise InputError(f"cannot read as {container.upper()}: {_duck_msg(exc)}", path) from exc


_NUMERIC = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "FLOAT",
    "DOUBLE",
    "DECIMAL",
)


def _canonical_types(con: duckdb.DuckDBPyConnection, path: str) -> bool:
    """Whether every engine column the Parquet file has is a number or a string as the
    contract says (then it can be inserted directly, without conversions)."""
    q = sql.load("ingest/parquet_types")
    try:
        types = dict(con.execute(q.text, q.bind({"path": path})).fetchall())
    except duckdb.Error:
        return False
    strings = {"type", "execution_id", "event", "replica"}
    for col in ENGINE_COLUMNS:
        typ = types.get(col)
        if typ is None:
            continue
        ok = typ == "VARCHAR" if col in strings else str(typ).startswith(_NUMERIC)
        if not ok:
            return False
    return True
