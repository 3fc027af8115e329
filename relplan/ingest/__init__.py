"""Ingest: proxy logs, engine traces, metrics and run manifests into the DuckDB workspace.

`ingest_paths` and `pull_prometheus` are the library entry points (the CLI calls them);
`inspect_workspace` reports what a workspace holds. See driver.py for the transaction rules
and each reader module for its format.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from relplan.ingest.base import IngestOptions
from relplan.ingest.contents import InspectReport, inspect_workspace, render_inspect
from relplan.ingest.driver import Progress, Session, add_staged, in_transaction, ingest_files
from relplan.ingest.outcome import IngestReport, render_ingest
from relplan.ingest.promlive import stage_pull
from relplan.workspace import open_workspace

__all__ = [
    "IngestOptions",
    "IngestReport",
    "InspectReport",
    "ingest_paths",
    "inspect_workspace",
    "pull_prometheus",
    "render_ingest",
    "render_inspect",
]


def ingest_paths(
    db: Path, paths: Iterable[Path], opts: IngestOptions, progress: Progress | None = None
) -> IngestReport:
    with open_workspace(db) as con:
        return ingest_files(con, paths, opts, progress)


def pull_prometheus(
    db: Path, url: str, match: str, start: float, end: float, step: float, opts: IngestOptions
) -> IngestReport:
    def run(session: Session) -> None:
        staged = stage_pull(session.con, session.new_id(), url, match, start, end, step, opts)
        add_staged(session, staged)

    with open_workspace(db) as con:
        return in_transaction(con, opts, run)
