"""A new workspace is a copy of an empty one made once: the schema is created once per cache.

Creating the schema (queries/schema.sql: a sequence, 12 tables, their keys) in a new DuckDB
file and recording its version costs DuckDB tens of milliseconds of planning and a checkpoint;
copying the bytes of a workspace made that way costs well under one (bench/ingest_tiny.py
has the figures). The empty workspace also holds the ingest's conversion macros, persistent
(`kept_macros`): an ingest into it makes none (relplan/ingest/stage.py, create_macros). It is
kept in relplan's cache folder (relplan/caches.py) as `empty-workspace/empty-KEY.duckdb`, KEY
the SHA-256 of everything its bytes follow from: the schema's text, SCHEMA_VERSION, DuckDB's
version and the macro files' text. Beside it, `empty-KEY.sha256` (a checked text file) holds
the SHA-256 of the file's bytes: bytes that do not hash to it (a truncated or edited copy, a
race between two writers) are not used, and the template is made again.

A cache folder that cannot be written, or any other failure here, only means the workspace
is made the slow way (relplan.workspace.connect runs the schema itself; the ingest then makes
its macros as temp macros): a template is never needed, only faster. Once read and checked,
the bytes stay in memory for the process.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from contextlib import suppress
from functools import cache
from pathlib import Path

_HEADER = "relplan empty workspace sha256 of the rest: "
_BYTES: dict[str, bytes] = {}

# The ingest's conversion macros (relplan/ingest/stage.py, create_macros), in the order they
# are made (later ones call earlier ones): the empty workspace holds them, persistent.
MACROS = ("ingest/macros", "ingest/proxy_macros", "ingest/engine_macros")
VERSION = "ingest/macros_version"  # rp_macros_digest(): macros_digest() of the files it names
_TEMP = "create or replace temp macro "


@cache
def macros_digest() -> str:
    """SHA-256 of the macro files' text: which macros a workspace holds."""
    from relplan import sql

    h = hashlib.sha256()
    for name in MACROS:
        h.update(sql.load(name).text.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def kept_macros() -> list[str]:
    """The statements that store the conversion macros in the empty workspace: the macro files,
    then queries/ingest/macros_version.sql (`rp_macros_digest()`, naming them), each with its
    macros persistent instead of temp. An ingest into a workspace holding these very macros
    makes none (their 37 statements took about 15 ms of CPU per ingest); one holding none or
    others makes them temp, for its connection, as before."""
    from relplan import sql

    out: list[str] = []
    for name in (*MACROS, VERSION):
        text = sql.load(name).text
        if text.count(_TEMP) != text.lower().count("create "):
            raise ValueError(f"queries/{name}.sql: every statement must be {_TEMP.strip()!r}")
        out.append(text.replace(_TEMP, "create or replace macro "))
    return out


def _key(schema_text: str, version: int) -> str:
    import duckdb

    h = hashlib.sha256()
    from relplan import sql

    macros = (macros_digest(), sql.load(VERSION).text)
    for part in (schema_text, str(version), duckdb.__version__, *macros):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()[:32]


def _build(folder: Path, schema_text: str, version: str) -> bytes:
    """Make the empty workspace in `folder` (a file of this process) and return its bytes."""
    import duckdb

    from relplan import sql

    with tempfile.TemporaryDirectory(dir=folder, prefix=".empty-") as tmp:
        path = Path(tmp) / "empty.duckdb"
        con = duckdb.connect(
            str(path),
            config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
        )
        try:
            con.execute(schema_text)
            sql.run(con, "workspace/set_schema_version", {"version": version})
            for statements in kept_macros():
                con.execute(statements)
        finally:
            con.close()
        if path.with_name(path.name + ".wal").exists():  # closed means checkpointed
            raise OSError("the empty workspace kept a write-ahead log")
        return path.read_bytes()


def _keep(folder: Path, key: str, data: bytes) -> None:
    """Write the template and its digest atomically; a folder that cannot be written is
    skipped."""
    from relplan import caches

    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".empty-{key}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, folder / f"empty-{key}.duckdb")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    caches.write_checked(folder / f"empty-{key}.sha256", hashlib.sha256(data).hexdigest(), _HEADER)


def _kept(folder: Path, key: str) -> bytes | None:
    from relplan import caches

    digest = caches.read_checked(folder / f"empty-{key}.sha256", _HEADER)
    if digest is None:
        return None
    try:
        data = (folder / f"empty-{key}.duckdb").read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == digest else None


def empty_workspace(schema_text: str, version: int) -> bytes | None:
    """The bytes of an empty workspace of this schema, from memory, the cache folder, or made
    now (and kept); None when they cannot be had (the caller creates the schema itself)."""
    from relplan import caches

    key = _key(schema_text, version)
    if key in _BYTES:
        return _BYTES[key]
    folder = caches.root() / "empty-workspace"
    data = _kept(folder, key)
    if data is None:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            data = _build(folder, schema_text, str(version))
            _keep(folder, key, data)
        except OSError:
            return None
    _BYTES[key] = data
    return data


def write_new(path: Path, data: bytes) -> bool:
    """Write `data` as the new workspace `path` (missing, or an empty file): True when done.
    False, and `path` as it was, when it could not be (it appeared meanwhile, the disk is
    full): the caller then creates the workspace itself."""
    try:
        existed = path.exists()
        if existed and path.stat().st_size:
            return False
        fh = path.open("r+b" if existed else "xb")
    except OSError:
        return False
    try:
        with fh:
            fh.write(data)
    except OSError:
        with suppress(OSError):
            if existed:
                path.write_bytes(b"")
            else:
                path.unlink()
        return False
    return True
