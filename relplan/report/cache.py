"""The report's page cache: a second `relplan report` of the same raw inputs with the same
flags and the same relplan code writes the page it wrote before, without ingesting,
analysing, replaying or drawing again.

What the key holds (any change of any of these is a different key, hence a miss):
- every file of the input (PATH itself, or every file below a PATH directory, hidden ones
  included): its path relative to PATH, size, modification time and SHA-256;
- the flags that shape the page: the input flags (and the content of a `--map` file), the
  run-context flags, `--whatif/--no-whatif`, `--tz`, and the run name taken from PATH;
- relplan's code: the digest over its Python files, queries and templates
  (relplan/caches.py), so a new version or an edited checkout never reads an old page.

A workspace file (or `--db`) as the input is never served from here: a workspace changes in
place; the what-if cache still spares its replay. Nor are `--png`/`--svg` runs (the images
need the chart specs, which are not kept).

What is kept: the page and the data model's JSON, both rendered with a placeholder
generation time that is swapped for the real one when the files are written, whether the
page was just computed or read back; so a page from the cache is byte-identical to the page
the same run would compute (tests/test_report_cache.py).

Where: `$RELPLAN_CACHE_DIR/report/` (default `~/.cache/relplan/report/`), the same guarded
store as the what-if replay (a SHA-256 header, ignored when damaged). `RELPLAN_REPORT_CACHE=0`
(or `RELPLAN_WHATIF_CACHE=0`) turns it off. This module imports only the standard library
and relplan's light modules: a hit loads neither duckdb, nor the analyses, nor Altair.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from relplan import caches
from relplan.errors import InputError
from relplan.report.export import write_atomic
from relplan.report.files import ReportFiles, check_targets, default_out, is_workspace_file
from relplan.whatif import cache as store

__all__ = [
    "FOOTER_TIME",
    "SENTINEL",
    "CachedReport",
    "enabled",
    "inputs_digest",
    "inputs_key",
    "key_for",
    "load",
    "save",
    "serve",
    "stamp",
]

FOLDER = "report"
# The placeholder generation time pages are rendered with, and how the page and the data
# JSON show a time (the footer's format is the template's, relplan/report/templates).
SENTINEL = datetime(2999, 9, 9, 9, 9, 9, tzinfo=timezone.utc)
FOOTER_TIME = "%Y-%m-%d %H:%M:%S UTC"


def enabled() -> bool:
    return store.enabled() and os.environ.get("RELPLAN_REPORT_CACHE", "1") != "0"


def _files(path: Path) -> Iterator[Path]:
    if path.is_file():
        yield path
        return
    for dirpath, dirnames, filenames in os.walk(path):
        dirnames.sort()
        for name in sorted(filenames):
            yield Path(dirpath) / name


def inputs_key(path: Path, settings: Mapping[str, object]) -> str | None:
    """The key of a report on the raw inputs at `path` with these settings (JSON-able flag
    values), or None when the cache is off or a file cannot be read (then the report runs
    and its own error names the file)."""
    if not enabled():
        return None
    return inputs_digest(path, settings)


def inputs_digest(path: Path, settings: Mapping[str, object]) -> str | None:
    """`inputs_key`'s digest whether or not the page cache is on (the report's workspace
    cache, relplan/report/workspace_cache.py, keys on it too); None when a file cannot be
    read."""
    h = hashlib.sha256()
    h.update(caches.code_digest().encode())
    h.update(json.dumps(settings, sort_keys=True, default=str).encode())
    try:
        extra = settings.get("map_file")
        if isinstance(extra, (str, Path)):
            h.update(caches.file_sha256(Path(extra)).encode())
        for f in _files(path):
            st = f.stat()
            rel = f.relative_to(path).as_posix() if f != path else f.name
            h.update(f"\0{rel}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
            h.update(caches.file_sha256(f).encode())
    except (OSError, ValueError):
        return None
    return h.hexdigest()


def key_for(
    path: Path | None,
    *,
    db: Path | None,
    images: bool,
    settings: Mapping[str, object],
) -> str | None:
    """The page cache's key for this `relplan report`, or None when it is not served from
    the cache: no raw-input PATH (a workspace file, or --db), images asked for, or the cache
    is off."""
    if path is None or db is not None or images or not enabled():
        return None
    try:
        if not path.exists() or (path.is_file() and is_workspace_file(path)):
            return None
    except (OSError, InputError):  # an unreadable PATH: the report itself names the problem
        return None
    return inputs_key(path, settings)


def serve(key: str, when: datetime, out: Path | None, json_path: Path | None) -> ReportFiles | None:
    """Write the page (and the data JSON) kept under `key`, stamped `when`; None on a miss."""
    kept = load(key)
    if kept is None:
        return None
    check_targets(out, None, None)
    page, data_json = stamp(kept, when)
    target = out or default_out(kept.run_name)
    files = ReportFiles(html=write_atomic(target, page), html_bytes=len(page.encode("utf-8")))
    if json_path is not None:
        files.json = write_atomic(json_path, data_json)
    return files


@dataclass(frozen=True)
class CachedReport:
    """A page and its data JSON, each with the SENTINEL time in its one generation-time
    slot, and the run name the default output path is made from."""

    run_name: str
    html: str
    data_json: str


def load(key: str) -> CachedReport | None:
    body = store.load(key, FOLDER)
    if body is None:
        return None
    try:
        raw = json.loads(body)
        return CachedReport(str(raw["run_name"]), str(raw["html"]), str(raw["data_json"]))
    except (ValueError, KeyError, TypeError):
        return None


def save(key: str, report: CachedReport) -> None:
    """Keep `report`, unless its time slot is not exactly one place in each text (a page
    whose data happened to show the placeholder time is not cached)."""
    day = SENTINEL.strftime("%Y-%m-%d")
    if report.html.count(day) != 1 or report.html.count(SENTINEL.strftime(FOOTER_TIME)) != 1:
        return
    if report.data_json.count(day) != 1 or report.data_json.count(_json_time(SENTINEL)) != 1:
        return
    body = {"run_name": report.run_name, "html": report.html, "data_json": report.data_json}
    store.store(key, json.dumps(body), FOLDER)


def _json_time(when: datetime) -> str:
    return json.dumps(when.isoformat().replace("+00:00", "Z"))


def stamp(report: CachedReport, when: datetime) -> tuple[str, str]:
    """The page and the data JSON with `when` as their generation time."""
    html = report.html.replace(SENTINEL.strftime(FOOTER_TIME), when.strftime(FOOTER_TIME), 1)
    data = report.data_json.replace(_json_time(SENTINEL), _json_time(when), 1)
    return html, data
