"""The report's analysis cache: the analyses' result for a workspace the report's workspace
cache keeps (relplan/report/workspace_cache.py), so a later report of the same inputs with
the same analysis flags (other page flags: `--no-whatif`, `--tz`, `--out`, `--png`, a
page-cache miss) reads it instead of running the analyses again.

What the key holds (any change is a different key, hence the analyses run): the kept
workspace's key (every input file's path, size, modification time and SHA-256, the input
flags, relplan's code digest, DuckDB's version: the workspace is a pure function of these);
the analysis flags (`AnalyzeOptions`: the phases, Ĉ, D, W, windows, bins, --from/--to, the
replica label); the versions of the libraries the analyses compute with (numpy, pydantic).
Never used with `--prometheus-url` (the engine health signals then come from a server, not
from the workspace), nor for a workspace PATH, `--db`, or inputs ingested into a temporary workspace: only
a kept workspace has a key that says what it holds.

What is kept: the `AnalyzeResult` as JSON (about 80 KB for the sample), in a checked text
file (relplan/caches.py, `write_checked`: a header with the SHA-256 of the rest; a damaged
file reads as absent). JSON gives every finite float back to the bit; a result that does not
come back equal from its JSON (a NaN, an infinity) is not kept. tests/test_report_analysis_cache.py
compares the page and the data JSON of a report from the cache with one computed anew.
The newest `KEEP` results are kept.

Where: `$RELPLAN_CACHE_DIR/analyses/`. `RELPLAN_ANALYSIS_CACHE=0` (or
`RELPLAN_WHATIF_CACHE=0`, every cache; or `RELPLAN_WORKSPACE_CACHE=0`, which leaves no kept
workspace to key on) turns it off.
"""

from __future__ import annotations

import hashlib
import os
from contextlib import suppress

import numpy
import pydantic

from relplan import caches
from relplan.analyses import AnalyzeOptions, AnalyzeResult, registry
from relplan.whatif import cache as store

__all__ = ["FOLDER", "KEEP", "enabled", "key_for", "load", "save"]

FOLDER = "analyses"
KEEP = 16  # results kept (the newest by modification time)
_HEADER = "relplan analyses sha256 of the rest: "


def enabled() -> bool:
    return store.enabled() and os.environ.get("RELPLAN_ANALYSIS_CACHE", "1") != "0"


def key_for(workspace_key: str | None, opts: AnalyzeOptions) -> str | None:
    """The key of the analyses of the kept workspace `workspace_key` with `opts`; None when
    the cache is off, there is no kept workspace, or the result does not follow from the
    workspace alone (a Prometheus server)."""
    if workspace_key is None or not enabled() or opts.prometheus_url is not None:
        return None
    h = hashlib.sha256()
    for part in (
        "analyses",
        workspace_key,
        opts.model_dump_json(),
        numpy.__version__,
        pydantic.VERSION,
    ):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def load(key: str) -> AnalyzeResult | None:
    """The result kept under `key`, or None (absent, damaged, or no longer this model's)."""
    path = caches.root() / FOLDER / f"{key[:32]}.json"
    text = caches.read_checked(path, _HEADER + key + " ")
    if text is None:
        return None
    try:
        result: AnalyzeResult = registry.result_model().model_validate_json(text)
    except pydantic.ValidationError:
        return None
    with suppress(OSError):
        os.utime(path)  # the newest use: kept longest
    return result


def save(key: str, result: AnalyzeResult) -> None:
    """Keep `result` under `key` (a folder that cannot be written is skipped). A result its
    JSON does not give back equal (a NaN or an infinity, which JSON writes as null) is not
    kept: it is computed again next time."""
    text = result.model_dump_json()
    try:
        if registry.result_model().model_validate_json(text) != result:
            return
    except pydantic.ValidationError:
        return
    folder = caches.root() / FOLDER
    caches.write_checked(folder / f"{key[:32]}.json", text, _HEADER + key + " ")
    try:
        kept = sorted(folder.glob("[!.]*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in kept[KEEP:]:
        with suppress(OSError):
            old.unlink()
