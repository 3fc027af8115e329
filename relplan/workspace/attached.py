"""Attached Parquet (`relplan ingest --attach`): the workspace's engine tables as views that
read the files in place.

A workspace with an attachment (one per workspace), opened read-only, gets temporary views
named `steps`, `events` and `engine_stats` that shadow the stored tables: each is the stored
table UNION ALL BY NAME the attachment's rows (queries/workspace/attached_views.sql), so every
analysis reads attached data unchanged. The views add `source_file` (provenance: the file,
with source_id and source_row) and the Hive partition columns (`day`, `hour`, `replica`).

`narrow(con, t_from, t_to, replicas)` limits which partitions the views read: hours
outside the window and replicas not named are pruned before any file is opened (EXPLAIN
shows `Scanning Files: k/N`). Rows inside a kept partition but outside the window are
still read; the analyses filter them as on stored data.

A writable connection gets no views (ingest inserts into the stored tables).

Every install first checks that the files are those attached (`check_unchanged`): a file
added, removed or rewritten since the attach is an error naming it and the command that
re-attaches, never a different answer.
"""

from __future__ import annotations

import datetime as dt
import glob as globlib
import hashlib
import os
import re

import duckdb

from relplan import caches, sql
from relplan.errors import InputError

# Times below this are seconds from t0 (as the analyses read --from/--to).
_ABSOLUTE = 1e8
_ALL = ("0000-00-00T00", "9999-99-99T99")


def has_attachments(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(sql.rows(con, "workspace/table_exists", {"name": "attachments"}))


def install(con: duckdb.DuckDBPyConnection) -> int:
    """Create the views over the workspace's attachment (none without one); the number of
    attachments (0 or 1: relplan ingest --attach takes one glob per workspace)."""
    if not has_attachments(con):
        return 0
    rows = sql.rows(con, "workspace/attachments")
    if not rows:
        return 0
    (row,) = rows
    sid = int(row["source_id"])
    check_unchanged(con, sid, str(row["pattern"]))
    define(con, [sid], [str(row["pattern"])])
    catalog = _identifier(str((sql.one(con, "workspace/current_database") or {})["name"]))
    names = {t: f"{catalog}.main.{t}" for t in ("steps", "events", "engine_stats")}
    sql.run(con, "workspace/set_attached_stored", {**names, "sid": sid})
    sql.run(con, "workspace/attached_views")
    return 1


def check_unchanged(con: duckdb.DuckDBPyConnection, sid: int, pattern: str) -> None:
    """The files the glob matches now are the files attached, unchanged (path, size,
    modification time), else an InputError saying what changed and how to re-attach.
    Workspaces attached before attached_files existed are checked by the sources row's
    fingerprint of the same facts."""
    now = sorted(f for f in globlib.glob(pattern, recursive=True) if os.path.isfile(f))
    stat = {f: os.stat(f) for f in now}
    if not sql.rows(con, "workspace/table_exists", {"name": "attached_files"}):
        row = sql.one(con, "workspace/source_hash", {"sid": sid}) or {}
        if row.get("sha256") != fingerprint(now):
            raise _changed(pattern, "")
        return
    was = {str(r["path"]): r for r in sql.rows(con, "workspace/attached_files", {"sid": sid})}
    added = [f for f in now if f not in was]
    removed = [f for f in was if f not in stat]
    rewritten = [f for f in now if f in was and _rewritten(f, stat[f], was[f])]
    changes = [
        f"{len(fs)} {what} ({fs[0]}{', ...' if len(fs) > 1 else ''})"
        for what, fs in (("added", added), ("removed", removed), ("rewritten", rewritten))
        if fs
    ]
    if changes:
        raise _changed(pattern, ": " + ", ".join(changes))


def _changed(pattern: str, what: str) -> InputError:
    """The error of attached files that changed (`what`: how, or empty when not known)."""
    return InputError(
        f"the attached files changed since they were attached{what}; the answers would change"
        f" without a word: re-attach into a new workspace (relplan ingest --db NEW.duckdb"
        f" --attach '{pattern}')",
        pattern,
    )


def _rewritten(path: str, st: os.stat_result, was: dict[str, object]) -> bool:
    """Whether the file at `path` differs from the one attached: its size or modification
    time changed, or (for files attached with their ctime) its status-change time did and its
    content hash is no longer the one attached. A rewrite that puts the size and modification
    time back (`touch -d`, os.utime) still moves the ctime, which no user can set; a copy
    that keeps the times (rsync -a, a restore) moves it too, and is read again when its
    bytes are the same."""
    if (st.st_size, st.st_mtime_ns) != (was["size"], was["mtime_ns"]):
        return True
    ctime = was.get("ctime_ns")
    if ctime is None or st.st_ctime_ns == ctime:
        return False
    # the content hash ingest gives a Parquet file (relplan/ingest/files.py), which attached
    # files are: the bytes' SHA-256
    return caches.file_sha256(path) != was["sha256"]


def fingerprint(files: list[str]) -> str:
    """The attachment's sources sha256: the file list with sizes and modification times."""
    h = hashlib.sha256(b"relplan attach\n")
    for f in files:
        st = os.stat(f)
        h.update(f"{f}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def define(con: duckdb.DuckDBPyConnection, ids: list[int], globs: list[str]) -> None:
    """The macros and variables the attached views read (every partition in scope)."""
    sql.run(con, "ingest/macros")
    sql.run(con, "ingest/engine_macros")
    sql.run(con, "workspace/set_attached_globs", {"ids": ids, "globs": globs})
    sql.run(con, "workspace/set_attached_scope", {"lo": _ALL[0], "hi": _ALL[1], "replicas": None})
    sql.run(con, "workspace/attached_macros")


def narrow(
    con: duckdb.DuckDBPyConnection,
    t_from: float | None,
    t_to: float | None,
    replicas: list[str] | None = None,
) -> tuple[float | None, float | None]:
    """Read only the partitions of the hours [t_from, t_to] and of `replicas`. Times are
    epoch seconds, or seconds from the earliest time the workspace's sources record when
    below 1e8 (the analyses' t0 without a run manifest). Returns the window in epoch
    seconds: the data read now starts later, so a time from t0 would move with it. Without
    attachments nothing changes and the times come back as given."""
    if not has_attachments(con) or not sql.rows(con, "workspace/attachments"):
        return t_from, t_to
    origin = _earliest(con)
    lo, hi = _ALL
    if t_from is not None:
        t_from = t_from if abs(t_from) > _ABSOLUTE else origin + t_from
        lo = _hour(t_from)
    if t_to is not None:
        t_to = t_to if abs(t_to) > _ABSOLUTE else origin + t_to
        hi = _hour(t_to)
    sql.run(con, "workspace/set_attached_scope", {"lo": lo, "hi": hi, "replicas": replicas})
    return t_from, t_to


def _earliest(con: duckdb.DuckDBPyConnection) -> float:
    row = sql.one(con, "workspace/sources_t_min")
    value = None if row is None else row["t_min"]
    return float(value) if value is not None else 0.0


def _hour(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H")


def _identifier(name: str) -> str:
    if not re.fullmatch(r"[^\x00]{1,255}", name):
        raise ValueError(f"unexpected catalog name {name!r}")
    return '"' + name.replace('"', '""') + '"'
