"""The report's what-if replay, cached per workspace fingerprint, so a second report is instant.

The replay is deterministic: the same stored rows, the same analysis options and the same
relplan code give the same `WhatIf`. So its result is kept on disk, keyed by:

- the workspace's sources (`sources`: each file's SHA-256, kind, format, rows stored and
  rejected, time span and ingest notes; queries/whatif/fingerprint.sql): re-ingesting the same
  bytes the same way gives the same key, whichever path or temporary workspace they went to;
- the analysis options (`AnalyzeOptions`, as JSON) and the replay's own settings (seeds);
- the code: a SHA-256 over relplan's Python files, queries and templates and the installed
  libraries (relplan/caches.py, LIBRARIES), so any change of relplan or of a library (a new
  version, or an edited checkout) is a different key.

Where: `$RELPLAN_CACHE_DIR/whatif/<key>.json` (default `$XDG_CACHE_HOME/relplan`, else
`~/.cache/relplan`, the folder the report's script bundle uses). A file starts with a line
holding the SHA-256 of the rest; one that fails it (truncated, edited) is ignored and rewritten.
Nothing is ever invalidated in place: a changed input is a new key; old files can be deleted at
any time (`rm -r ~/.cache/relplan/whatif`). `RELPLAN_WHATIF_CACHE=0` turns the cache off (every
report replays). A folder that cannot be written only means the replay runs each time.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from relplan import caches

if TYPE_CHECKING:
    import duckdb

    from relplan.analyses import AnalyzeOptions

__all__ = ["cache_dir", "enabled", "fingerprint", "load", "store"]

# The store below is shared with the report's page cache (relplan/report/cache.py), which
# passes its own folder; this module imports only the standard library at its top, so that a
# report served from that cache loads neither duckdb nor the analyses.
_HEADER = "// relplan {folder} cache sha256="


def enabled() -> bool:
    return os.environ.get("RELPLAN_WHATIF_CACHE", "1") != "0"


def cache_dir(folder: str = "whatif") -> Path:
    return caches.root() / folder


def fingerprint(con: duckdb.DuckDBPyConnection, opts: AnalyzeOptions, settings: str) -> str:
    """The cache key of the replay of this workspace with these options."""
    from relplan import sql

    h = hashlib.sha256()
    h.update(caches.code_digest().encode())
    h.update(opts.model_dump_json().encode())
    h.update(settings.encode())
    for r in sql.rows(con, "whatif/fingerprint"):
        h.update(json.dumps(r, sort_keys=True, default=str).encode())
    return h.hexdigest()


def _path(key: str, folder: str) -> Path:
    return cache_dir(folder) / f"{key[:32]}.json"


def load(key: str, folder: str = "whatif") -> str | None:
    """The cached JSON for `key`, or None (absent, damaged, or the cache is off)."""
    if not enabled():
        return None
    return caches.read_checked(_path(key, folder), _HEADER.format(folder=folder))


def store(key: str, body: str, folder: str = "whatif") -> None:
    """Write the JSON for `key` atomically; a folder that cannot be written is skipped."""
    if enabled():
        caches.write_checked(_path(key, folder), body, _HEADER.format(folder=folder))
