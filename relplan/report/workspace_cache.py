"""The report's workspace cache: the workspace a `relplan report PATH` ingested from raw inputs
is kept, so a later report of the same inputs (other flags: `--tz`, `--no-whatif`, the
run-context flags, or a page-cache miss) opens it read-only instead of ingesting again.

What the key holds (any change is a different key, hence a new ingest): PATH's resolved
location; every file below it (relative path, size, modification time, SHA-256); the input
flags (and a `--map` file's content); relplan's code digest (relplan/caches.py); DuckDB's
version (a newer one may write another storage format). It is the
page cache's digest of the inputs (relplan/report/cache.py, `inputs_digest`) with the input
flags only: the analysis flags do not shape a workspace.

What is kept: the DuckDB workspace file, as `relplan report PATH --db FILE` would leave it,
and beside it the SHA-256 of its bytes, in a checked text file (relplan/caches.py,
`write_checked`: a header line with the SHA-256 of the rest, as the empty workspace's digest
in relplan/workspace/template.py), checked before each use; a file that fails the check, a
digest file that fails its own, or a file DuckDB cannot open, is ingested again. On a miss
the inputs are ingested into a new file in the cache folder, which is renamed into place
only after the ingest committed (a failed or interrupted ingest removes it), its digest
file written after it; when the folder cannot be written the report ingests into a
temporary workspace. The newest `KEEP` workspaces are kept, older ones deleted.

Where: `$RELPLAN_CACHE_DIR/workspace/` (default `~/.cache/relplan/workspace/`).
`RELPLAN_WORKSPACE_CACHE=0` (or `RELPLAN_WHATIF_CACHE=0`, every cache) turns it off.
Not used with `--db` (the named workspace is the one written) nor for a workspace PATH.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

import duckdb

from relplan import caches
from relplan.ingest import IngestOptions, ingest_paths
from relplan.report import cache as page_cache
from relplan.whatif import cache as store

__all__ = [
    "DIGEST_HEADER",
    "FOLDER",
    "KEEP",
    "enabled",
    "forget",
    "key_of",
    "missing",
    "workspace_for",
]

FOLDER = "workspace"
KEEP = 4  # workspaces kept (the newest by modification time)
# The first line of a kept workspace's `.sha256` file, before the SHA-256 of the rest.
DIGEST_HEADER = "relplan report workspace sha256 of the rest: "


def enabled() -> bool:
    return store.enabled() and os.environ.get("RELPLAN_WORKSPACE_CACHE", "1") != "0"


def key_of(path: Path, inputs: IngestOptions) -> str | None:
    """The cache key of the workspace of the raw inputs at `path` read with `inputs`, or None
    when the cache is off or a file cannot be read."""
    if not enabled():
        return None
    settings = {
        "workspace_of": str(path.resolve()),
        "duckdb": duckdb.__version__,  # the file's storage format
        **inputs.as_dict(),
    }
    return page_cache.inputs_digest(path, settings)


def missing(path: Path, inputs: IngestOptions) -> str | None:
    """The key of the raw inputs at `path` when `workspace_for` will ingest them: the cache is
    on and holds no workspace of them; else None (a cache off, or a file that cannot be read,
    as `workspace_for` is then not asked). `relplan report` asks before it imports the
    report's modules, so that the ingest starts at once in a process of its own
    (relplan/report/ingest_worker.py) and the what-if's workers start importing (the replay
    of new inputs is not cached either)."""
    key = key_of(path, inputs)
    return key if key is not None and _kept(key) is None else None


def _folder() -> Path:
    return caches.root() / FOLDER


def _kept(key: str) -> Path | None:
    """The kept workspace for `key` when its bytes pass their SHA-256, else None."""
    db = _folder() / f"{key[:32]}.duckdb"
    try:
        expected = caches.read_checked(db.with_suffix(".sha256"), DIGEST_HEADER)
        if expected is None or expected != caches.file_sha256(db):
            return None
        os.utime(db)  # the newest use: kept longest (_evict)
    except OSError:
        return None
    return db


def workspace_for(
    path: Path, inputs: IngestOptions, key: str, on_miss: Callable[[], object] | None = None
) -> Path | None:
    """The kept workspace of these inputs, ingested into the cache folder first on a miss
    (`on_miss` called first: new inputs); None when the folder cannot be written (the caller
    ingests into a temporary workspace). An ingest error propagates, and leaves nothing in
    the folder."""
    found = _kept(key)
    if found is not None:
        return found
    if on_miss is not None:
        on_miss()
    folder = _folder()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    db = folder / f"{key[:32]}.duckdb"
    tmp = folder / f".{key[:32]}-{os.getpid()}.duckdb"
    try:
        ingest_paths(tmp, [path], inputs)
        digest = caches.file_sha256(tmp)
        os.replace(tmp, db)
    except BaseException as exc:
        # An ingest that failed removed its file; one stopped after it committed (Ctrl-C
        # between the ingest and the rename) has it removed here.
        for p in (tmp, tmp.with_name(tmp.name + ".wal")):
            with suppress(OSError):
                p.unlink()
        if isinstance(exc, (OSError, duckdb.IOException)):
            return None
        raise
    # Written after the file it vouches for (atomically; skipped when it cannot be): a digest
    # that is missing, or that another report's file replaced meanwhile, fails the check.
    caches.write_checked(db.with_suffix(".sha256"), digest, DIGEST_HEADER)
    _evict(folder)
    return db


def forget(key: str) -> None:
    """Delete the workspace kept for `key` (one DuckDB could not open)."""
    db = _folder() / f"{key[:32]}.duckdb"
    for p in (db, db.with_suffix(".sha256")):
        with suppress(OSError):
            p.unlink()


def _evict(folder: Path) -> None:
    """Keep the newest KEEP workspaces (with their SHA-256 files)."""
    try:
        kept = sorted(folder.glob("[!.]*.duckdb"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in kept[KEEP:]:
        for p in (old, old.with_suffix(".sha256")):
            with suppress(OSError):
                p.unlink()
