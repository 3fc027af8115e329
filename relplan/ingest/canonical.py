"""The canonical proxy and engine formats (formats.md sections 1-2) in JSONL, CSV or Parquet.

DuckDB reads the files with explicit column types (queries/ingest_{proxy,engine}_read_*.sql).
JSON Lines has two readers: DuckDB's typed JSON reader (fast; used when it reads every record
and the record count equals the line count, so ordinals are line numbers) and a line reader
that parses each line's JSON in SQL, keeping line numbers and raw text (used when the fast
reader raises, when the file has blank lines, and in skip mode when a record is refused).
"""

from __future__ import annotations

import json

import duckdb

from relplan import sql
from relplan.errors import InputError
from relplan.ingest.base import IngestOptions, Staged
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
    q = sql.load(f"ingest_delete_stage_{kind}")
    con.execute(q.text, q.bind({"source_id": source_id}))


def _staged_count(con: duckdb.DuckDBPyConnection, kind: str, source_id: int) -> int:
    q = sql.load(f"ingest_count_stage_{kind}")
    row = con.execute(q.text, q.bind({"source_id": source_id})).fetchone()
    return int(row[0]) if row else 0


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
        q = sql.load(f"ingest_{kind}_read_jsonl_lines")
        try:
            con.execute(q.text, q.bind({"path": path, "source_id": sid}))
        except duckdb.Error as exc:
            bad = first_unreadable_line(info.path)
            if bad is not None:
                raise InputError(bad[1], path, bad[0]) from exc
            raise InputError(f"cannot read as JSON Lines: {_duck_msg(exc)}", path) from exc

    fast = sql.load(f"ingest_{kind}_read_jsonl")
    try:
        con.execute(fast.text, fast.bind({"path": path, "source_id": sid}))
    except duckdb.Error:
        lines_reader()
        return
    if _staged_count(con, kind, sid) != info.lines:
        # Blank lines: record ordinals are not line numbers. Read line by line instead.
        lines_reader()
        return
    staged.restage_with_raw = lines_reader


def _table_columns(con: duckdb.DuckDBPyConnection, info: FileInfo, container: str) -> list[str]:
    if container == "parquet":
        return parquet_columns(info)
    q = sql.load("ingest_csv_header")
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
                path, line,
            )
    elif not set(cols) & {"type", "event", "prompt_computed", "num_running", "kv_usage"}:
        raise InputError(
            "no type column and none of event, prompt_computed, num_running, kv_usage; expected"
            " engine records (formats.md section 2)",
            path, line,
        )
    staged.unknown_columns = sorted(c for c in cols if c not in _known(kind))
    q = sql.load(f"ingest_{kind}_read_{container}")
    try:
        con.execute(q.text, q.bind({"path": path, "source_id": sid, "keep_raw": opts.skip}))
    except duckdb.Error as exc:
        raise InputError(f"cannot read as {container.upper()}: {_duck_msg(exc)}", path) from exc
