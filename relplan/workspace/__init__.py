"""The workspace: one DuckDB file holding everything ingested about an incident.

Owns the schema (`queries/schema.sql`) and its version (`relplan_meta`), the connection
settings (a memory limit and a spill directory so inputs larger than memory still ingest)
and the path rules: `--db`, else `$RELPLAN_DB`, else `./relplan.duckdb`.

`--db` names a DuckDB workspace or a new path: any other file (a JSON Lines log, an SQLite
database) or a directory is refused by its header before DuckDB opens it, so DuckDB never
reads it as a database of another kind. The environment is input too: RELPLAN_MEMORY_LIMIT
must be a size, and it reaches DuckDB as connection config, never as SQL text.

What the workspace says about itself (the latest run manifest, the sources, the rows per
table) is read in `relplan.workspace.facts`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path

import duckdb

from relplan import caches, sql
from relplan.errors import InputError, NoDataError, UsageError, check_utf8_path

DEFAULT_DB = Path("relplan.duckdb")
# DuckDB's own limit for buffers it manages; it spills to the temp directory past this.
# Read (and validated) in one place, memory_limit(), each time a workspace is opened; sizes
# have DuckDB's units: KB, MB, GB, TB are powers of 1000, KiB, MiB, GiB, TiB powers of 1024.
MEMORY_LIMIT_ENV = "RELPLAN_MEMORY_LIMIT"
DEFAULT_MEMORY_LIMIT = "1GB"
_SIZE = re.compile(r"(\d{1,15}(?:\.\d{1,6})?)\s?(?:([KMGT])(i)?)?B", re.IGNORECASE)
_POWER = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}

# The version of queries/schema.sql a workspace follows, kept in relplan_meta. Workspaces
# from before relplan_meta existed are version 1. Bump it with a migration in migrate().
# Version 2 (issue 17) adds the kube_events table; version 3 (issue 26) the engine-trace
# columns of the vLLM plugin's records to events and engine_stats (ADDED_IN_3).
SCHEMA_VERSION = 3
# Older versions this relplan upgrades when it writes to them: schema.sql only adds tables
# (`create table if not exists`) and columns (`alter table ... add column if not exists`), so
# running it is the whole migration. Read-only, such a workspace opens as it is: its missing
# tables read as empty temp tables, its missing columns as NULL (temp views of the same names,
# queries/workspace/temp_views_since_v2.sql).
MIGRATES_FROM = frozenset({1, 2})
ADDED_IN_3 = {
    "events": ("finish_reason", "output_tokens", "cached_tokens", "preemptions", "max_tokens"),
    "engine_stats": (
        *("prompt_computed", "decode_tokens", "elapsed_ms"),
        *("num_preempted", "prefix_queries", "prefix_hits"),
    ),
}
# A DuckDB database file has this magic at byte 8 (after the checksum of its header).
DUCKDB_MAGIC = b"DUCK"
_MAGIC_AT = 8
# Then three 4 KiB headers, then the blocks (of pragma database_size's block_size).
_DATA_AT = 3 * 4096

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
    "kube_events",
)


def resolve_db(db: Path | None) -> Path:
    if db is not None:
        return db
    env = os.environ.get("RELPLAN_DB")
    return Path(env) if env else DEFAULT_DB


def memory_limit() -> str:
    """RELPLAN_MEMORY_LIMIT (default 1GB), refused unless it is a plain size such as 1GB,
    512MB or 2GiB. The one place relplan reads the variable."""
    value = os.environ.get(MEMORY_LIMIT_ENV, DEFAULT_MEMORY_LIMIT)
    if not _SIZE.fullmatch(value.strip()):
        raise UsageError(
            MEMORY_LIMIT_ENV, f"expected a size such as 1GB, 512MB or 2GiB, got {value!r}"
        )
    return value.strip()


def memory_limit_bytes() -> int:
    """memory_limit() in bytes, in DuckDB's units (1GB is 10**9 bytes, 1GiB 2**30)."""
    m = _SIZE.fullmatch(memory_limit())
    assert m is not None  # memory_limit() checked it
    number, prefix, binary = m.groups()
    base = 1024 if binary else 1000
    return int(float(number) * base ** _POWER[(prefix or "").upper()])


def _foreign_kind(head: bytes) -> str:
    if head.startswith(b"SQLite format 3\x00"):
        return "an SQLite database"
    if head.startswith(b"\x1f\x8b"):
        return "a gzip file"
    if head.startswith(b"PAR1"):
        return "a Parquet file"
    if head.lstrip()[:1] in (b"{", b"["):
        return "a JSON file"
    return "not a DuckDB database"


def check_db_path(path: Path) -> None:
    """Refuse a `--db` that is a directory or an existing file other than a DuckDB database.
    An empty file or a missing path is a new workspace."""
    check_utf8_path(path)
    where = str(path)
    if path.is_dir():
        raise InputError("is a directory; --db names a workspace file (new or existing)", where)
    if not path.exists():
        return
    if not path.is_file():  # a FIFO would block the read below (and DuckDB) forever
        raise InputError(
            "not a regular file (a FIFO, a device or a socket); --db names a workspace file"
            " (new or existing)",
            where,
        )
    try:
        with path.open("rb") as f:
            head = f.read(64)
    except OSError as exc:
        raise InputError(f"cannot read the workspace: {exc.strerror or exc}", where) from exc
    if not head:
        return
    if head[_MAGIC_AT : _MAGIC_AT + len(DUCKDB_MAGIC)] != DUCKDB_MAGIC:
        if len(head) < _MAGIC_AT + len(DUCKDB_MAGIC):
            kind = "too short to be a DuckDB database (truncated?)"
        else:
            kind = _foreign_kind(head)
        raise InputError(
            f"not a relplan workspace ({kind}); --db names a DuckDB workspace or a new path,"
            " input files are given as arguments",
            where,
        )


def connect(
    path: Path, *, read_only: bool = False, threads: int | None = None
) -> duckdb.DuckDBPyConnection:
    """Open (creating if needed and allowed) the workspace and make sure its schema exists.
    `threads` caps DuckDB's threads for this connection (default: one per core), for callers
    that run several workspaces' queries side by side."""
    check_utf8_path(path)
    if read_only and not path.exists():
        raise NoDataError(f"{path}: no workspace here; run `relplan ingest` first")
    check_db_path(path)
    # Settings go in as connection config, not as SQL text: a path never becomes SQL.
    config: dict[str, str | bool | int | float | list[str]] = {
        "memory_limit": memory_limit(),
        "preserve_insertion_order": False,
        # A workspace never needs an extension: none is installed or loaded behind its back.
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
    }
    if not read_only:
        config["temp_directory"] = str(path.with_name(path.name + ".tmp"))
    if threads is not None:
        config["threads"] = threads
    # A new workspace is a copy of the empty one (relplan/workspace/template.py): its schema
    # and version are known, so they are neither created nor checked here.
    existed = path.exists()
    copied = not read_only and _copy_template(path)
    try:
        con = duckdb.connect(str(path), read_only=read_only, config=config)
    except duckdb.Error as exc:
        if copied:
            _uncopy(path, existed)
        raise InputError(f"cannot open workspace: {exc}", str(path)) from exc
    try:
        if not copied:
            _check_version(con, path, read_only=read_only)
        if read_only:
            _install_attached(con, path)
    except BaseException:
        con.close()
        if copied:
            _uncopy(path, existed)
        raise
    return con


def _copy_template(path: Path) -> bool:
    """Write the empty workspace's bytes to `path` when it names a new workspace (no file, or
    an empty one, and no write-ahead log): True when written."""
    from relplan.workspace import template

    if path.with_name(path.name + ".wal").exists():
        return False
    if path.exists() and path.stat().st_size:
        return False
    data = template.empty_workspace(sql.load("schema").text, SCHEMA_VERSION)
    return data is not None and template.write_new(path, data)


def _uncopy(path: Path, existed: bool) -> None:
    """Undo _copy_template when the open fails: the empty file as it was, or no file."""
    with suppress(OSError):
        if existed:
            path.write_bytes(b"")
        else:
            _remove([path, path.with_name(path.name + ".wal")])


@contextmanager
def scratch_workspace(temp_dir: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A workspace in memory for one command (`relplan report DIR` without `--db`): nothing
    to write back, so no file, no WAL and no checkpoint; what does not fit in the memory limit
    spills to `temp_dir`."""
    config: dict[str, str | bool | int | float | list[str]] = {
        "memory_limit": memory_limit(),
        "preserve_insertion_order": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "temp_directory": str(temp_dir),
    }
    con = duckdb.connect(":memory:", config=config)
    try:
        _check_version(con, Path(":memory:"), read_only=False)
        yield con
    finally:
        con.close()


def _check_version(con: duckdb.DuckDBPyConnection, path: Path, *, read_only: bool) -> None:
    """Refuse a DuckDB file that is not a relplan workspace or follows another schema
    version; create (or complete) the schema when writing."""
    try:
        _check_size(con, path)
        listed = sql.rows(con, "workspace/tables")
        tables = len(listed)
        has_meta = any(r["table_name"] == "relplan_meta" for r in listed)
        version = SCHEMA_VERSION
        if has_meta:
            row = sql.rows(con, "workspace/schema_version")
            version_text = str(row[0]["value"]) if row else "1"
            if not version_text.isdigit():
                raise InputError(
                    f"the workspace's schema version {version_text!r} is not a number;"
                    " not a workspace this relplan wrote",
                    str(path),
                )
            version = int(version_text)
        elif tables:
            has_sources = bool(sql.rows(con, "workspace/table_exists", {"name": "sources"}))
            if not has_sources:
                raise InputError(
                    "a DuckDB database but not a relplan workspace (no sources table);"
                    " name a new path with --db",
                    str(path),
                )
            version = 1  # made before relplan_meta existed
        if version != SCHEMA_VERSION and version not in MIGRATES_FROM:
            newer = "a newer" if version > SCHEMA_VERSION else "an older"
            raise InputError(
                f"the workspace has schema version {version}, made by {newer} relplan; this"
                f" relplan reads version {SCHEMA_VERSION} (docs/workspace.md, schema version):"
                " use a matching relplan or ingest into a new --db",
                str(path),
            )
        if (
            read_only
            and version != SCHEMA_VERSION
            and not sql.rows(con, "workspace/table_exists", {"name": "kube_events"})
        ):
            # An older workspace read as it is: the tables it predates exist, empty, for this
            # connection only (temp tables; the file is not touched). Not when the file has
            # them (a temp table would hide the stored one).
            sql.run(con, "workspace/temp_tables_since_v1")
        if read_only and version != SCHEMA_VERSION and _lacks_v3_columns(con):
            # The same for the columns version 3 added: temp views over the stored tables
            # (when both exist; a missing one is reported by check_tables below).
            catalog = str((sql.one(con, "workspace/current_database") or {})["name"])
            quoted = '"' + catalog.replace('"', '""') + '"'
            names = {t: f"{quoted}.main.{t}" for t in ADDED_IN_3}
            sql.run(con, "workspace/set_stored_since_v2", names)
            sql.run(con, "workspace/temp_views_since_v2")
        if not read_only and not (has_meta and version == SCHEMA_VERSION):
            # Once per file: a workspace whose relplan_meta row already says this version had
            # queries/schema.sql run on it (the row is written right after), so re-running its
            # `create ... if not exists` statements on every open would only cost time.
            con.execute(sql.load("schema").text)
            sql.run(con, "workspace/set_schema_version", {"version": str(SCHEMA_VERSION)})
        if tables or has_meta:
            # Tables made since the listing (schema.sql, temp tables) are read by the columns.
            fresh = has_meta and version == SCHEMA_VERSION
            check_tables(
                con, path, older=version != SCHEMA_VERSION, listed=listed if fresh else None
            )
    except duckdb.Error as exc:
        raise InputError(
            f"cannot read the workspace (damaged or truncated?): {exc}", str(path)
        ) from exc


def _check_size(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """A file shorter than the blocks in use need (after DuckDB's three 4 KiB headers) was
    truncated: refused here, naming the file, rather than by whichever query first reads a
    missing block. The blocks in use have distinct numbers, so the highest is at least their
    count less one; free blocks at the end may have been cut off by DuckDB itself."""
    row = sql.one(con, "workspace/blocks_in_use")
    if row is None or not path.is_file():  # in memory
        return
    need = _DATA_AT + int(row["used_blocks"]) * int(row["block_size"])
    size = path.stat().st_size
    if size < need:
        raise InputError(
            f"truncated workspace: the file has {size} bytes, its blocks in use need at least"
            f" {need}; it cannot be read: restore it, or rebuild it from its inputs"
            " (relplan ingest --db NEW.duckdb INPUT...)",
            str(path),
        )


_SCHEMA_HEADER = "relplan schema columns and statements v2 "


def _schema_columns() -> dict[str, dict[str, str]]:
    """Table -> column -> type, as queries/schema.sql creates them (in a scratch database)."""
    return _schema_facts()[0]


def _schema_statements() -> dict[str, str]:
    """Table -> its CREATE statement as DuckDB writes it from the catalog, as queries/schema.sql
    creates it (in a scratch database)."""
    return _schema_facts()[1]


def _strings(value: object) -> bool:
    return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())


@cache
def _schema_facts() -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """_schema_columns() and _schema_statements().

    Making the scratch database costs about 0.05 CPU s, once per process: the answer is kept
    in the cache folder (`schema/`, relplan/caches.py) under the SHA-256 of the schema's text
    and DuckDB's version, and read from there by later processes."""
    text = sql.load("schema").text
    key = hashlib.sha256(f"{duckdb.__version__}\n{text}".encode()).hexdigest()
    kept = caches.root() / "schema" / f"{key}.json"
    body = caches.read_checked(kept, _SCHEMA_HEADER)
    if body is not None:
        with suppress(ValueError):
            data = json.loads(body)
            if (
                isinstance(data, dict)
                and isinstance(data.get("columns"), dict)
                and all(_strings(cols) for cols in data["columns"].values())
                and _strings(data.get("statements"))
            ):
                return data["columns"], data["statements"]
    con = duckdb.connect(":memory:")
    try:
        con.execute(text)
        columns = _columns(con)
        statements = {
            str(r["table_name"]): str(r["sql"]) for r in sql.rows(con, "workspace/tables")
        }
    finally:
        con.close()
    facts = {"columns": columns, "statements": statements}
    caches.write_checked(kept, json.dumps(facts, sort_keys=True), _SCHEMA_HEADER)
    return columns, statements


def _columns(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for r in sql.rows(con, "workspace/table_columns"):
        out.setdefault(str(r["table_name"]), {})[str(r["column_name"])] = str(r["data_type"])
    return out


def check_tables(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    *,
    older: bool = False,
    listed: list[dict[str, object]] | None = None,
) -> None:
    """Every table and column of queries/schema.sql is in the workspace, with its type: a
    table dropped, a column dropped, renamed or of another type (a damaged workspace, or one
    edited by hand) is one error naming it, before any command reads a wrong answer from it
    or fails inside a query. Columns beyond the schema's are allowed (a user's own).

    `listed`: the rows of queries/workspace/tables.sql, read on this connection since it last
    changed a table. When each table of the schema is there, stored, with the very CREATE
    statement a scratch database gives it, its columns and types are the schema's: the
    columns are not read (duckdb_columns() and the views it must leave out took about 3-6 ms
    of CPU per open, a fifth of a read-only open)."""
    if listed is not None and not older:
        stored = {str(r["table_name"]): r["sql"] for r in listed if r["stored"]}
        shadowed = any(not r["stored"] for r in listed)
        if not shadowed and all(stored.get(t) == s for t, s in _schema_statements().items()):
            return
    have = _columns(con)
    for table, want in _schema_columns().items():
        got = have.get(table)
        if got is None and older and table == "relplan_meta":
            continue  # version 1 had none
        if got is not None and older:
            got = {**{c: want[c] for c in ADDED_IN_3.get(table, ())}, **got}  # version 1, 2
        if got is None:
            raise _damaged(path, older, f"the table {table} is missing")
        missing = [c for c in want if c not in got]
        wrong = [c for c in want if c in got and got[c] != want[c]]
        if missing:
            raise _damaged(path, older, f"the column {table}.{missing[0]} is missing")
        if wrong:
            c = wrong[0]
            raise _damaged(path, older, f"the column {table}.{c} is {got[c]}; expected {want[c]}")


def _damaged(path: Path, older: bool, what: str) -> InputError:
    """The error of a damaged workspace: `what` is damaged, and how to mend it (an older
    workspace is migrated by an ingest into it)."""
    if older:
        fix = (
            "ingest into it once to migrate it (relplan ingest --db FILE INPUT), or"
            " rebuild it from its inputs (relplan ingest --db NEW.duckdb INPUT...)"
        )
    else:
        fix = "rebuild it from its inputs: relplan ingest --db NEW.duckdb INPUT..."
    return InputError(
        f"damaged workspace: {what} (docs/workspace.md, schema version {SCHEMA_VERSION}); {fix}",
        str(path),
    )


def _install_attached(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Views over attached Parquet (relplan.workspace.attached), on read-only connections."""
    from relplan.workspace import attached

    try:
        attached.install(con)
    except duckdb.Error as exc:
        raise InputError(
            f"cannot read the attached Parquet (moved or deleted since `ingest --attach`?): {exc}",
            str(path),
        ) from exc


def _lacks_v3_columns(con: duckdb.DuckDBPyConnection) -> bool:
    have = _columns(con)
    if not all(t in have for t in ADDED_IN_3):
        return False
    return any(c not in have[t] for t, cols in ADDED_IN_3.items() for c in cols)


@contextmanager
def open_workspace(
    path: Path, *, read_only: bool = False, threads: int | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The workspace for the length of a `with` (`threads` as in connect()). When the body
    fails on a writable workspace (its transaction rolled back), a checkpoint returns the
    blocks the failed transaction wrote, so the file does not stay grown by them; a workspace
    this call created is removed (with its WAL and spill folder): a failed `ingest --db NEW`
    leaves no empty workspace behind, the path is as it was."""
    created = [] if read_only else [p for p in _files_of(path) if not p.exists()]
    con = connect(path, read_only=read_only, threads=threads)
    try:
        yield con
    except BaseException:
        if not read_only:
            with suppress(duckdb.Error):
                sql.run(con, "workspace/checkpoint")
        with suppress(duckdb.Error):
            con.close()
        if path in created:
            _remove(created)
        raise
    con.close()


def _files_of(path: Path) -> list[Path]:
    """The workspace file, its write-ahead log and its spill folder (connect's temp_directory)."""
    return [path, path.with_name(path.name + ".wal"), path.with_name(path.name + ".tmp")]


def _remove(paths: list[Path]) -> None:
    for p in paths:
        with suppress(OSError):
            if p.is_dir():
                shutil.rmtree(p)
            else:
                p.unlink()
