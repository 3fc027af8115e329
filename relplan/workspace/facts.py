"""What the workspace says about itself: the latest run manifest, its sources, rows per table.

- `latest_manifest(con)`: the run.json ingested last (highest source_id) with its phases, or
  None when no run.json was ingested. The analyses' run context reads its t0, Ĉ, D, W and
  overload phase from here; every value run.json leaves out is None.
- `workspace_facts(con, fallback_name)`: the run's name (the manifest's `name`, else
  `fallback_name`), every source with its rows, and the rows held by each data table. The
  report's footer shows them; the report builder receives them and queries nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

import duckdb
from pydantic import Field

from relplan import sql
from relplan.models import StrictModel


@dataclass(frozen=True)
class ManifestPhase:
    name: str
    start_s: float  # seconds from t0
    end_s: float


@dataclass(frozen=True)
class LatestManifest:
    """The modelled values of the latest run.json; None where run.json leaves one out."""

    name: str | None
    capacity_calls_per_s: float | None
    deadline_s: float | None
    delivery_window_s: float | None
    overload_phase: str | None
    t0: float | None
    phases: tuple[ManifestPhase, ...]


class SourceInfo(StrictModel):
    name: str = Field(description="file name (the directory is left out of the page)")
    kind: str
    format: str
    rows: int
    rejected: int


class WorkspaceFacts(StrictModel):
    """What the workspace says about itself: the run's name, its sources and row counts."""

    run_name: str
    sources: list[SourceInfo]
    row_counts: dict[str, int]


def latest_manifest(con: duckdb.DuckDBPyConnection) -> LatestManifest | None:
    rows = sql.rows(con, "workspace/run_manifest_latest")
    if not rows:
        return None
    first = rows[0]
    return LatestManifest(
        name=first["name"],
        capacity_calls_per_s=first["capacity_calls_per_s"],
        deadline_s=first["deadline_s"],
        delivery_window_s=first["delivery_window_s"],
        overload_phase=first["overload_phase"],
        t0=first["t0"],
        phases=tuple(
            ManifestPhase(name=r["phase"], start_s=r["start_s"], end_s=r["end_s"])
            for r in rows
            if r["phase"] is not None
        ),
    )


def workspace_facts(con: duckdb.DuckDBPyConnection, fallback_name: str) -> WorkspaceFacts:
    """The run name (latest run.json, else `fallback_name`), sources, rows per table."""
    manifest = latest_manifest(con)
    name = manifest.name if manifest is not None and manifest.name else fallback_name
    sources = [
        SourceInfo(
            name=_display_name(str(r["path"])),
            kind=str(r["kind"]),
            format=str(r["format"]),
            rows=int(r["rows"]),
            rejected=int(r["rejected"]),
        )
        for r in sql.rows(con, "inspect/sources")
    ]
    counts = {str(r["tbl"]): int(r["n"]) for r in sql.rows(con, "workspace/row_counts")}
    return WorkspaceFacts(run_name=name, sources=sources, row_counts=counts)


def _display_name(path: str) -> str:
    """A file's name without its directory (a URL stays whole)."""
    return path if "://" in path else PurePath(path).name
