"""`relplan ingest --attach GLOB`: register Hive-partitioned engine Parquet as views over
the files instead of copying them (relplan.workspace.attached reads them).

What an attach does, in one transaction: list the files the glob matches (none is an
error); check every column's type in every file (queries/ingest/attach_column_types.sql:
an engine column stored as the wrong type names the file and the column); run the engine
record rules of a copy over every row (queries/ingest/attach_check_engine.sql: the first
refused record is reported as FILE:ROW, and nothing is attached); then add a sources row
(format `parquet_attached`, path the absolute glob, sha256 of the file list with sizes and
modification times, so attaching the same files again adds nothing), an attachments row and
one attached_files row per file (path, size, modification time, content hash).

Provenance: every later read checks the files against attached_files
(relplan.workspace.attached.install): a file added, removed or rewritten is one error naming
it, never a different answer. Files whose bytes an ingest already copied into the workspace
are refused (their rows would count twice), and an ingest that would copy an attached file
skips it. Hive partition values are checked by type (`hour` 0-23, `hour=9` read as 09; `day` a
date), and a partition key that names a column inside the files is an error.
Only fail mode exists: a bad record cannot be skipped in files that are not copied.
"""

from __future__ import annotations

import datetime as dt
import glob as globlib
import os
import re
from contextlib import suppress
from pathlib import Path
from typing import Any

import duckdb

from relplan import sql
from relplan.errors import InputError, UsageError, check_utf8_path
from relplan.ingest.base import IngestOptions
from relplan.ingest.files import digest
from relplan.ingest.outcome import IngestReport, SkippedInput, SourceReport, say
from relplan.workspace import attached

FORMAT = "parquet_attached"
# Engine columns (docs/formats.md, Engine trace) and the Parquet physical types each may
# have: numbers as integers or floats, text as UTF-8 byte arrays.
_NUMBER = {"INT32", "INT64", "FLOAT", "DOUBLE"}
_TEXT = {"BYTE_ARRAY"}
_COLUMNS = {
    **dict.fromkeys(("type", "execution_id", "event", "replica"), _TEXT),
    **dict.fromkeys(
        (
            "t",
            "prompt_tokens",
            "step",
            "t_issue",
            "t_done",
            "prompt_computed",
            "prompt_cached",
            "decode_tokens",
            "num_running",
            "num_waiting",
            "num_batched_tokens",
            "kv_usage",
        ),
        _NUMBER,
    ),
}
_ENGINE_MARKS = {"prompt_computed", "event", "num_running", "kv_usage", "type"}
_PARTITION = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=[^/]*")


def attach_globs(db: Path, globs: list[str], opts: IngestOptions) -> IngestReport:
    """Attach every glob to the workspace at `db` (one transaction)."""
    from relplan.workspace import open_workspace

    if opts.on_error != "fail":
        raise UsageError(
            "--on-error", "--attach reads files in place: a bad record cannot be skipped"
        )
    with open_workspace(db) as con:
        con.begin()
        try:
            report = _attach_all(con, globs)
            con.commit()
        except BaseException:
            with suppress(duckdb.Error):  # a failed write may have ended it already
                con.rollback()
            raise
    return report


def _attach_all(con: duckdb.DuckDBPyConnection, globs: list[str]) -> IngestReport:
    sql.run(con, "workspace/attachments_table")
    one_only = (
        "one attachment per workspace: name every partition with one glob"
        " (for example 'traces/**/*.parquet'), or attach into a new --db"
    )
    if len(globs) > 1:
        raise UsageError("--attach", one_only)
    row = sql.one(con, "ingest/next_source_id")
    next_id = int(row["source_id"]) if row else 1
    sources: list[SourceReport] = []
    skipped: list[SkippedInput] = []
    counts: dict[str, int] = {}
    for pattern in globs:
        check_utf8_path(pattern)
        full = str(Path(pattern).expanduser().absolute())
        files = sorted(globlib.glob(full, recursive=True))
        files = [f for f in files if os.path.isfile(f)]
        for f in files:
            check_utf8_path(f)
        if not files:
            raise InputError("no file matches this glob; expected Parquet files to attach", pattern)
        not_parquet = [f for f in files if not f.endswith(".parquet")]
        if not_parquet:
            raise InputError("not a .parquet file; --attach reads Parquet only", not_parquet[0])
        sha = attached.fingerprint(files)
        stored = sql.rows(con, "ingest/source_by_hash", {"sha256": sha})
        partitions = _partitions(files)
        if stored:
            why = say("already_attached", source=stored[0]["source_id"])
            skipped.append(SkippedInput(path=pattern, reason=why))
            continue
        if sql.rows(con, "workspace/attachments"):
            raise UsageError("--attach", one_only)
        names = _check_types(con, full)
        clash = sorted(set(partitions) & names.keys())
        if clash:
            raise InputError(
                f"the partition key {clash[0]!r} in the paths also names a column inside the"
                " files; one would silently replace the other: rename the partition directory"
                " or the column",
                names[clash[0]],
            )
        hashes = [digest(Path(f))[0] for f in files]
        _refuse_twins(files, hashes)
        _refuse_copied(con, files, hashes)
        sid = next_id
        next_id += 1
        report, by_table = _check_rows(con, sid, full, pattern, files, partitions, sha)
        refuse_records_twice(con, None, sid)
        stats = [os.stat(f) for f in files]
        sql.run(con, "workspace/attached_files_ctime")
        sql.run(
            con,
            "workspace/insert_attached_files",
            {
                "source_id": sid,
                "paths": files,
                "sizes": [st.st_size for st in stats],
                "mtimes": [st.st_mtime_ns for st in stats],
                "ctimes": [st.st_ctime_ns for st in stats],
                "hashes": hashes,
            },
        )
        sources.append(report)
        for table, n in by_table.items():
            if n:
                counts[table] = counts.get(table, 0) + n
    return IngestReport(sources=sources, skipped=skipped, rows_by_table=counts)


def _partitions(files: list[str]) -> list[str]:
    """The Hive partition keys of the paths, their values checked by type: `hour` a whole
    number 0-23 (`hour=9` is `hour=09`), `day` a date YYYY-MM-DD."""
    keys: set[str] = set()
    for f in files:
        for m in _PARTITION.finditer(f):
            key, value = m.group(0).split("=", 1)
            keys.add(key)
            if key == "hour" and not (value.isdigit() and 0 <= int(value) <= 23):
                raise InputError(f"hour={value}: expected an hour 0-23 (or 00-23)", f)
            if key == "day":
                try:
                    dt.date.fromisoformat(value)
                except ValueError:
                    raise InputError(f"day={value}: expected a date YYYY-MM-DD", f) from None
    return sorted(keys)


def _refuse_twins(files: list[str], hashes: list[str]) -> None:
    """Two files of one attachment with the same bytes would count their rows twice."""
    first: dict[str, str] = {}
    for f, h in zip(files, hashes, strict=True):
        if h in first:
            raise InputError(
                f"the same bytes as {first[h]}, which the glob also matches; attaching both"
                " would count their rows twice: remove one or narrow the glob",
                f,
            )
        first[h] = f


def refuse_records_twice(
    con: duckdb.DuckDBPyConnection, source_id: int | None, attached_id: int
) -> None:
    """The same engine records copied (source `source_id`, or any stored source when None)
    and attached (`attached_id`) would count twice, whatever their encoding: refused, naming
    the copied record and the attached file's row (queries/ingest/engine_rows_also_attached)."""
    hit = sql.one(
        con,
        "ingest/engine_rows_also_attached",
        {"source_id": source_id, "attached_id": attached_id},
    )
    if hit is None:
        return
    src = sql.one(con, "workspace/source_path", {"source_id": hit["source_id"]}) or {}
    copied = f"{src.get('path', 'source ' + str(hit['source_id']))}:{hit['source_row']}"
    attached_at = f"{hit['source_file']}:{hit['file_row']}"
    if source_id is None:  # attaching files whose records an ingest copied before
        raise InputError(
            f"the same {hit['what']} is already in the workspace, copied by ingest from"
            f" {copied}; attaching it too would count it twice (a record is stored once:"
            " attach into a new --db, or leave these files out of the glob)",
            str(hit["source_file"]),
            int(hit["file_row"]),
        )
    raise InputError(
        f"the same {hit['what']} is attached in place ({attached_at}); copying it too would"
        " count it twice (a record is stored once: leave this file out, or ingest it into a"
        " new --db)",
        str(src.get("path", copied)),
        int(hit["source_row"]),
    )


def refuse_copied_attached(
    con: duckdb.DuckDBPyConnection, reports: list[SourceReport], *, attachments: bool | None = None
) -> None:
    """An ingest copying engine records that the workspace's attachment already holds is
    refused (relplan.ingest.driver calls this before it commits): only the hours of each new
    source's span are read from the attached files. `attachments`: whether the workspace has
    the attachments table, when the caller knows (else it is looked up)."""
    if not (attached.has_attachments(con) if attachments is None else attachments):
        return
    rows = _existing(con)
    engine = [r for r in reports if r.kind == "engine" and r.rows and r.t_min is not None]
    if not rows or not engine:
        return
    ids = [int(r["source_id"]) for r in rows]
    attached.define(con, ids, [str(r["pattern"]) for r in rows])
    for r in engine:
        attached.narrow(con, r.t_min, r.t_max)
        for sid in ids:
            refuse_records_twice(con, r.source_id, sid)


def _refuse_copied(con: duckdb.DuckDBPyConnection, files: list[str], hashes: list[str]) -> None:
    """The same records copied by an ingest and attached would count twice: refused."""
    stored = sql.rows(con, "ingest/sources_by_hashes", {"hashes": hashes})
    if stored:
        first = stored[0]
        f = files[hashes.index(str(first["sha256"]))]
        raise InputError(
            f"the same bytes are already in the workspace as source {first['source_id']}"
            f" ({first['path']}), copied by ingest; attaching them too would count their rows"
            " twice",
            f,
        )


def _check_types(con: duckdb.DuckDBPyConnection, glob: str) -> dict[str, str]:
    """Every column's type checked; each column name with the first file that has it."""
    try:
        cols = sql.rows(con, "ingest/attach_column_types", {"glob": glob})
    except duckdb.Error as exc:
        raise InputError(f"cannot read the Parquet files: {exc}", glob) from exc
    names = {str(c["name"]) for c in cols}
    if "call_id" in names:
        raise InputError(
            "a proxy log; --attach reads engine traces (steps, events, stats) only:"
            " ingest proxy logs without --attach",
            str(cols[0]["file_name"]),
        )
    if not names & _ENGINE_MARKS:
        raise InputError(
            "no engine trace columns (expected prompt_computed, event, type or a stats"
            " column; docs/formats.md, Engine trace)",
            str(cols[0]["file_name"]) if cols else glob,
        )
    for c in cols:
        allowed = _COLUMNS.get(str(c["name"]))
        decimal = "decimal" in str(c["logical"] or "").lower()
        if (
            allowed is not None
            and str(c["type"]) not in allowed
            and not (allowed is _NUMBER and decimal)
        ):
            kind = "a number" if allowed is _NUMBER else "text (UTF-8)"
            raise InputError(
                f"column {c['name']} is stored as {c['type']}; expected {kind}",
                str(c["file_name"]),
            )
    return {str(c["name"]): str(c["file_name"]) for c in reversed(cols)}


def _check_rows(
    con: duckdb.DuckDBPyConnection,
    sid: int,
    full: str,
    pattern: str,
    files: list[str],
    partitions: list[str],
    sha: str,
) -> tuple[SourceReport, dict[str, int]]:
    ids = [sid] + [int(r["source_id"]) for r in _existing(con)]
    globs = [full] + [str(r["pattern"]) for r in _existing(con)]
    attached.define(con, ids, globs)
    try:
        row = sql.one(con, "ingest/attach_check_engine", {"sid": sid}) or {}
    except duckdb.Error as exc:
        raise InputError(f"cannot read the Parquet files: {exc}", pattern) from exc
    bad = row.get("first_bad")
    if bad is not None:
        raise InputError(str(bad["reason"]), str(bad["file"]), int(bad["row"]))
    steps, events, stats = int(row["steps"]), int(row["events"]), int(row["engine_stats"])
    notes = [say("attached_in_place", files=len(files))]
    if partitions:
        notes.append(say("hive_partitions", partitions=partitions))
    rows = steps + events + stats
    now = dt.datetime.now(dt.timezone.utc)
    sql.run(
        con,
        "ingest/insert_source",
        {
            "source_id": sid,
            "path": full,
            "kind": "engine",
            "format": FORMAT,
            "sha256": sha,
            "rows": rows,
            "rejected": 0,
            "t_min": row.get("t_min"),
            "t_max": row.get("t_max"),
            "unknown_columns": [],
            "notes": notes,
            "ingested_at": now,
        },
    )
    sql.run(
        con,
        "workspace/insert_attachment",
        {"source_id": sid, "pattern": full, "kind": "engine", "partitions": partitions},
    )
    report = SourceReport(
        source_id=sid,
        path=full,
        kind="engine",
        format=FORMAT,
        rows=rows,
        rejected=0,
        t_min=row.get("t_min"),
        t_max=row.get("t_max"),
        unknown_columns=[],
        notes=notes,
    )
    return report, {"steps": steps, "events": events, "engine_stats": stats}


def _existing(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    return sql.rows(con, "workspace/attachments")
