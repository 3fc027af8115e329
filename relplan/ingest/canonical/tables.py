"""The canonical proxy and engine formats (docs/formats.md, Proxy attempts log and Engine trace) in JSONL, CSV or Parquet.

DuckDB reads the files with explicit column types (queries/ingest_{proxy,engine}_read_*.sql).
JSON Lines has two readers: DuckDB's typed JSON reader (fast; it stages in file order, and
when the records are as many as the file's lines, rowid - base + 1 is each one's line) and a
line reader that parses each line's JSON in SQL, keeping line numbers and raw text (used when
the fast reader raises, which restarts the ingest exactly, when the file has blank lines,
and in skip mode when a record is refused, to keep its raw text).
CSV is read as text with its header (by DuckDB; line by line in Python, canonical_csv.py,
when DuckDB cannot name every record's line or take a row); Parquet keeps its types. Engine Parquet whose columns
already have the contract's types is not staged at all in fail mode: the driver inserts it
straight into the tables (queries/ingest/direct_parquet_*.sql). Engine JSON Lines in fail
mode is read once with numbers typed as DOUBLE (queries/ingest/engine_read_jsonl_typed.sql),
checked as it is read by a quick test, and inserted by type (queries/ingest/direct_jsonl_*.sql); a
file that may hold a JSON boolean, has blank lines, or a record the quick test does not pass,
takes the staged path above (whose checks refuse the record with its line, or keep it).
The readers share their pieces (file readers with line numbers, typed templates, conversion
error messages) as temp macros: queries/ingest/macros.sql, ingest/proxy_macros.sql and
ingest/engine_macros.sql, created by stage.create_stage inside the ingest transaction.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb

from relplan import sql
from relplan.errors import InputError
from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example
from relplan.ingest.base import FastPathFailed, IngestOptions, Staged
from relplan.ingest.canonical import csv_rows as canonical_csv
from relplan.ingest.columns import ENGINE_COLUMNS, ENGINE_TRACE, PROXY_COLUMNS, PROXY_REQUIRED
from relplan.ingest.files import (
    FileInfo,
    duck_path,
    first_unreadable_line,
    json_loads,
    readable_copy,
)
from relplan.ingest.sniff import parquet_columns
from relplan.ingest.stage import StageWriter


def _known(kind: str) -> tuple[str, ...]:
    return PROXY_COLUMNS if kind == "proxy" else ENGINE_COLUMNS


def _duck_msg(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


@dataclass(frozen=True)
class _KindQueries:
    """The query files that stage one kind of canonical record."""

    read_jsonl: str
    read_jsonl_lines: str
    read_csv: str
    read_parquet: str
    rowids: str
    delete: str


_QUERIES = {
    "proxy": _KindQueries(
        read_jsonl="ingest/proxy_read_jsonl",
        read_jsonl_lines="ingest/proxy_read_jsonl_lines",
        read_csv="ingest/proxy_read_csv",
        read_parquet="ingest/proxy_read_parquet",
        rowids="ingest/stage_rowids_proxy",
        delete="ingest/delete_stage_proxy",
    ),
    "engine": _KindQueries(
        read_jsonl="ingest/engine_read_jsonl",
        read_jsonl_lines="ingest/engine_read_jsonl_lines",
        read_csv="ingest/engine_read_csv",
        read_parquet="ingest/engine_read_parquet",
        rowids="ingest/stage_rowids_engine",
        delete="ingest/delete_stage_engine",
    ),
}


def _jsonl_unknown_columns(info: FileInfo, kind: str) -> list[str]:
    """Keys outside the contract among the records in the first 64 KiB (a sample, said so)."""
    known = set(_known(kind))
    seen: set[str] = set()
    for line in info.head.decode("utf-8", errors="replace").splitlines():
        try:
            obj = json_loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            seen.update(k for k in obj if k not in known)
    return sorted(seen)


def stage_jsonl(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    kind, path, sid = staged.kind, str(info.path), staged.source_id
    queries = _QUERIES[kind]
    staged.unknown_columns = _jsonl_unknown_columns(info, kind)

    def lines_reader() -> None:
        sql.run(con, queries.delete, {"source_id": sid})
        if opts.skip and first_unreadable_line(info.path) is not None:
            # Checked first: a failed read would abort the transaction.
            _stage_readable_lines(con, info, staged)
            return
        try:
            sql.run(con, queries.read_jsonl_lines, {"path": duck_path(path), "source_id": sid})
        except duckdb.Error as exc:
            bad = first_unreadable_line(info.path)
            if bad is not None:
                raise InputError(bad[1], path, bad[0]) from exc
            raise InputError(f"cannot read as JSON Lines: {_duck_msg(exc)}", path) from exc

    if opts.exact:
        lines_reader()
        return
    if kind == "engine" and not opts.skip and _stage_typed(con, info, sid):
        staged.direct = list(_DIRECT_JSONL)
        return
    base = _in_file_order(con, queries.read_jsonl, queries.rowids, info, sid)
    if base is None:
        # Blank lines (or a gap in rowids): record order does not give line numbers.
        lines_reader()
        return
    sql.run(con, "ingest/stage_set_base", {"source_id": sid, "base": base})
    staged.restage_with_raw = lines_reader


def _in_file_order(
    con: duckdb.DuckDBPyConnection, read: str, rowids: str, info: FileInfo, sid: int
) -> int | None:
    """Stage the file's records with `read` (DuckDB's JSON reader, on every thread) keeping
    them in file order; the rowid of the first when the records are a run of rowids without
    a gap, as many as the file's lines (a record's line is then rowid - that + 1), else None.
    A read DuckDB refuses raises FastPathFailed."""
    sql.run(con, "ingest/keep_insertion_order")
    try:
        sql.run(con, read, {"path": duck_path(str(info.path)), "source_id": sid})
    except duckdb.Error as exc:
        # The transaction is aborted (the driver resets the setting after its rollback).
        raise FastPathFailed(f"{info.path}: {_duck_msg(exc)}") from exc
    sql.run(con, "ingest/free_insertion_order")
    staged = sql.one(con, rowids, {"source_id": sid}) or {}
    lo, hi, n = staged.get("first_rowid"), staged.get("last_rowid"), staged.get("n")
    if lo is None or hi is None or n != info.lines or hi - lo + 1 != n:
        return None
    return int(lo)


_DIRECT_JSONL = (
    "ingest/direct_jsonl_events",
    "ingest/direct_jsonl_steps",
    "ingest/direct_jsonl_engine_stats",
    "ingest/direct_request_ids",
)


def _stage_typed(con: duckdb.DuckDBPyConnection, info: FileInfo, sid: int) -> bool:
    """Fail mode, engine JSON Lines: read the file once with every number typed as DOUBLE
    (ingest/engine_read_jsonl_typed.sql), each record checked as it is read by rp_engine_ok
    (a record it does not pass is left out), the rows kept in file order so that
    rowid - base + 1 is a record's line; the driver then inserts the rows by type
    (ingest/direct_jsonl_*.sql). False, with nothing left staged, when the rows cannot be
    trusted: the file may hold a JSON boolean (read as 1 or 0), or its records are fewer than
    its lines (blank lines, or a record the quick test left out: the staged reader then
    checks it fully) or their rowids have a gap, so that rowids are not lines. A value the
    reader cannot convert raises FastPathFailed (the ingest restarts with the exact reader)."""
    base = _in_file_order(
        con, "ingest/engine_read_jsonl_typed", "ingest/direct_engine_rowids", info, sid
    )
    if base is not None and not info.may_hold_booleans:
        sql.run(con, "ingest/stage_set_base", {"source_id": sid, "base": base})
        return True
    sql.run(con, "ingest/delete_stage_direct_engine", {"source_id": sid})
    return False


def _stage_readable_lines(con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged) -> None:
    """Skip mode, a file with lines DuckDB cannot read (not UTF-8, NUL bytes): read a copy
    with those lines left empty, and stage each of them as a refused record with its line."""
    queries = _QUERIES[staged.kind]
    with tempfile.TemporaryDirectory(prefix="relplan-") as tmp:
        copy = Path(tmp) / "lines.jsonl"
        bad = readable_copy(info.path, copy)
        try:
            sql.run(
                con,
                queries.read_jsonl_lines,
                {"path": duck_path(copy), "source_id": staged.source_id},
            )
        except duckdb.Error as exc:
            raise InputError(
                f"cannot read as JSON Lines: {_duck_msg(exc)}", str(info.path)
            ) from exc
    w = StageWriter(con, f"stage_{staged.kind}")
    for n, text, why in bad:
        w.add(source_id=staged.source_id, ln=n, raw=text, perr=why, origin="canonical")
    w.flush()


def _table_columns(info: FileInfo, container: str) -> list[str]:
    if container == "parquet":
        return parquet_columns(info)
    return canonical_csv.header(info)


def stage_table(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    """CSV or Parquet (staged.format)."""
    kind, path, sid, container = staged.kind, str(info.path), staged.source_id, staged.format
    cols = _table_columns(info, container)
    line = 1 if container == "csv" else None
    if kind == "proxy":
        missing = [c for c in PROXY_REQUIRED if c not in cols]
        if missing:
            raise InputError(
                f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}; expected"
                f" {', '.join(PROXY_REQUIRED)} (docs/formats.md, Proxy attempts log)",
                path,
                line,
            )
    elif not set(cols) & {"type", "event", "prompt_computed", "num_running", "kv_usage"}:
        raise InputError(
            "no type column and none of event, prompt_computed, num_running, kv_usage; expected"
            " engine records (docs/formats.md, Engine trace)",
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
            "ingest/direct_request_ids",
        ]
        return
    queries = _QUERIES[kind]
    if container == "csv" and (opts.exact or canonical_csv.RESERVED & set(cols)):
        canonical_csv.stage_csv_lines(con, info.path, kind, sid, cols, _known(kind), opts.skip)
        return
    read = queries.read_parquet if container == "parquet" else queries.read_csv
    try:
        sql.run(con, read, {"path": duck_path(path), "source_id": sid, "keep_raw": opts.skip})
    except duckdb.Error as exc:
        if not opts.exact:  # the transaction is aborted: start again, exactly
            raise FastPathFailed(f"{path}: {_duck_msg(exc)}") from exc
        raise InputError(f"cannot read as {container.upper()}: {_duck_msg(exc)}", path) from exc
    if container == "csv":
        staged_rows = sql.one(con, queries.rowids, {"source_id": sid}) or {}
        if staged_rows.get("n") != info.lines - 1:
            # Blank lines, or a quoted field spanning lines: DuckDB's row numbers are not
            # the file's lines. Read it again line by line.
            sql.run(con, queries.delete, {"source_id": sid})
            canonical_csv.stage_csv_lines(con, info.path, kind, sid, cols, _known(kind), opts.skip)


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
    try:
        described = sql.rows(con, "ingest/parquet_types", {"path": duck_path(path)})
    except duckdb.Error:
        return False
    types = {r["column_name"]: r["column_type"] for r in described}
    for col in ENGINE_TRACE:
        typ = types.get(col.name)
        if typ is None:
            continue
        ok = typ == "VARCHAR" if col.kind == "string" else str(typ).startswith(_NUMERIC)
        if not ok:
            return False
    return True


def _canonical_kind(head: sniff.Head, kind: str | None) -> str | None:
    if head.parquet:
        return sniff.kind_from_keys(head.columns) or kind
    if head.csv_header is not None:
        return sniff.kind_from_keys(head.csv_header) or kind
    return sniff.kind_from_keys(head.keys) or kind


def _either(kind: str | None) -> bool:
    return kind in ("proxy", "engine")


def _jsonl(head: sniff.Head, kind: str | None) -> float:
    if head.records:
        return (
            sniff.LIKELY + 0.1 if sniff.kind_from_keys(head.keys) else sniff.HINTED * _either(kind)
        )
    if head.jsonish and head.document_error is not None:
        return sniff.HINTED * _either(kind)  # malformed JSON Lines, read (and refused) as such
    return 0.0


def _csv(head: sniff.Head, kind: str | None) -> float:
    if head.csv_header is None:
        return 0.0
    return sniff.LOOSE if sniff.kind_from_keys(head.csv_header) else sniff.HINTED * _either(kind)


def _parquet(head: sniff.Head, kind: str | None) -> float:
    if not head.parquet:
        return 0.0
    return sniff.CERTAIN if _either(_canonical_kind(head, kind)) else 0.0


_TABLES = ("attempts", "events", "steps", "engine_stats", "request_ids")
ADAPTERS = (
    Adapter(
        name="jsonl",
        shape="json",
        kinds=("proxy", "engine"),
        family="canonical",
        summary="relplan's proxy attempts or engine records, one JSON object a line",
        tables=_TABLES,
        recognise=_jsonl,
        read=stage_jsonl,
        kind_of=_canonical_kind,
        examples=(
            Example(
                "tests/data/ingest/incident/proxy.jsonl", "relplan's own format (docs/formats.md)"
            ),
            Example(
                "tests/data/ingest/incident/engine.jsonl", "relplan's own format (docs/formats.md)"
            ),
        ),
        doc="proxy-attempts-log",
    ),
    Adapter(
        name="csv",
        shape="csv",
        kinds=("proxy", "engine"),
        family="canonical",
        summary="the same records as CSV with a header",
        tables=_TABLES,
        recognise=_csv,
        read=stage_table,
        kind_of=_canonical_kind,
        examples=(
            Example(
                "tests/data/ingest/adapters/proxy.csv",
                "relplan's own format (docs/formats.md)",
                # A full row whose t_sent is no time.
                broken="c9,0,,not-a-time,1764460840,delivered,e9,false,,200,llama-8b,r1,1,1",
            ),
        ),
        doc="proxy-attempts-log",
    ),
    Adapter(
        name="parquet",
        shape="parquet",
        kinds=("proxy", "engine"),
        family="canonical",
        summary="the same records as Parquet",
        tables=_TABLES,
        recognise=_parquet,
        read=stage_table,
        kind_of=_canonical_kind,
        examples=(
            Example(
                "tests/data/ingest/adapters/proxy.parquet",
                "tests/data/ingest/incident/proxy.jsonl written as Parquet by DuckDB's COPY",
            ),
        ),
        doc="proxy-attempts-log",
    ),
)
