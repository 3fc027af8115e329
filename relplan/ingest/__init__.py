"""Ingest: proxy logs, engine traces, metrics and run manifests into the DuckDB workspace.

`ingest_paths` and `pull_prometheus` are the library entry points (the CLI calls them);
`inspect_workspace` reports what a workspace holds (relplan/text/ingest.py words both reports
for a person: `render_ingest`, `render_inspect`). See driver.py for the transaction rules
and each reader module for its format.

The package loads its readers (DuckDB, pyarrow) only when one of these names is first used,
so a light submodule such as `relplan.ingest.columns` can be imported on its own cheaply.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from relplan.ingest.base import IngestOptions
    from relplan.ingest.contents import InspectReport, inspect_workspace
    from relplan.ingest.driver import Progress
    from relplan.ingest.outcome import IngestReport

__all__ = [
    "IngestOptions",
    "IngestReport",
    "InspectReport",
    "ingest_paths",
    "inspect_workspace",
    "pull_prometheus",
]

_LAZY = {
    "IngestOptions": "relplan.ingest.base",
    "IngestReport": "relplan.ingest.outcome",
    "InspectReport": "relplan.ingest.contents",
    "inspect_workspace": "relplan.ingest.contents",
}


# Submodules reachable as attributes (`from relplan.ingest import promlive`).
_MODULES = {"promlive": "relplan.ingest.metrics.promlive"}


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def ingest_paths(
    db: Path, paths: Iterable[Path], opts: IngestOptions, progress: Progress | None = None
) -> IngestReport:
    from relplan.ingest.driver import ingest_files
    from relplan.workspace import open_workspace

    with open_workspace(db) as con:
        return ingest_files(con, paths, opts, progress)


def pull_prometheus(
    db: Path, url: str, match: str, start: float, end: float, step: float, opts: IngestOptions
) -> IngestReport:
    from relplan.ingest.driver import Session, add_staged, in_transaction
    from relplan.ingest.metrics.promlive import stage_pull
    from relplan.workspace import open_workspace

    def run(session: Session) -> None:
        staged = stage_pull(session.con, session.new_id(), url, match, start, end, step, opts)
        add_staged(session, staged)

    with open_workspace(db) as con:
        return in_transaction(con, opts, run)
