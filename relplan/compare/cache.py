"""Compare's cache: each run's analysis result, and the workspace an input folder was ingested
into, kept on disk so that comparing the same baseline again (a CI gate against the last
release, a rerun) neither re-ingests nor re-analyses it.

Keys (SHA-256):
- an analysis result: relplan's code (relplan/caches.py's digest of its Python files,
  queries and templates, so an edited checkout or a new version is a new key), the analysis options as JSON,
  the analyses compare runs, and the workspace file's resolved path, size, modification time
  and inode (and its `.wal` file's, when there is one): a workspace that is written to again
  is a new key;
- an ingested input folder: relplan's code and, for every file under the folder, its relative
  path, size and modification time (what `make` and `rsync` go by: a file rewritten with the
  same size and time is not seen).

Where: `$RELPLAN_CACHE_DIR/compare/` (default `$XDG_CACHE_HOME/relplan`, else
`~/.cache/relplan`, beside the what-if cache): `results/<key>.json`, each starting with a line
holding the SHA-256 of the rest (a damaged file is ignored and rewritten), and
`ingested/<key>.duckdb`. Nothing is invalidated in place; the folder can be deleted at any
time. `RELPLAN_COMPARE_CACHE=0` turns it off (every run is ingested and analysed again). A
folder that cannot be written only means the work is done each time.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from relplan import caches

__all__ = ["cache_dir", "enabled", "ingested", "ingested_before", "load", "result_key", "store"]

_HEADER = "// relplan compare cache sha256="


def enabled() -> bool:
    return os.environ.get("RELPLAN_COMPARE_CACHE", "1") != "0"


def cache_dir() -> Path:
    return caches.root() / "compare"


def _stat(path: Path) -> str:
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"


def result_key(db: Path, options: str, analyses: list[str]) -> str:
    """The key of the analysis result of workspace `db` with these options and analyses."""
    h = hashlib.sha256()
    for part in (caches.code_digest(), options, ",".join(analyses), str(db.resolve()), _stat(db)):
        h.update(part.encode())
        h.update(b"\0")
    wal = db.with_name(db.name + ".wal")
    if wal.exists():
        h.update(_stat(wal).encode())
    return h.hexdigest()


def _results(key: str) -> Path:
    return cache_dir() / "results" / f"{key[:32]}.json"


def load(key: str) -> str | None:
    """The cached JSON for `key`, or None (absent, damaged, or the cache is off)."""
    return caches.read_checked(_results(key), _HEADER) if enabled() else None


def store(key: str, body: str) -> None:
    """Write the JSON for `key` atomically; a folder that cannot be written is skipped."""
    if enabled():
        caches.write_checked(_results(key), body, _HEADER)


def folder_key(folder: Path, variant: str = "") -> str:
    """The folder's files (names, sizes, times), relplan's code and `variant` (the input
    flags it is ingested with)."""
    h = hashlib.sha256(caches.code_digest().encode() + b"\0" + variant.encode())
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(f"{p.relative_to(folder).as_posix()}\0{_stat(p).rsplit(':', 1)[0]}\0".encode())
    return h.hexdigest()


def _ingested(folder: Path, variant: str) -> Path:
    return cache_dir() / "ingested" / f"{folder_key(folder, variant)[:32]}.duckdb"


def ingested_before(folder: Path, variant: str = "") -> Path | None:
    """The cached workspace of input folder `folder` if it was ingested before (with the
    same input flags, `variant`), else None."""
    if not enabled():
        return None
    target = _ingested(folder, variant)
    return target if target.is_file() else None


def ingested(folder: Path, ingest: Callable[[Path], None], variant: str = "") -> Path | None:
    """The cached workspace of input folder `folder`, made with `ingest(db)` when absent;
    None when the cache is off or its folder cannot be written (the caller ingests into a
    temporary workspace of its own)."""
    if not enabled():
        return None
    target = _ingested(folder, variant)
    if target.is_file():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".ingest-") as tmp:
            db = Path(tmp) / "side.duckdb"
            ingest(db)
            if db.with_name(db.name + ".wal").exists():
                return None  # not checkpointed: the file alone is not the workspace
            os.replace(db, target)
    except OSError:
        return None
    return target
