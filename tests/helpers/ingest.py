"""Helpers shared by the ingest tests: the bundled input files, ingest and read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from relplan.ingest import IngestOptions, IngestReport, ingest_paths
from relplan.workspace import TABLES

DATA = Path(__file__).resolve().parents[1] / "data" / "ingest"
INCIDENT = DATA / "incident"
ADAPTERS = DATA / "adapters"


def ingest(db: Path, *paths: Path, **opts: Any) -> IngestReport:
    return ingest_paths(db, list(paths), IngestOptions(**opts))


def rows(db: Path, query: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(query, params or {}).fetchall()
    finally:
        con.close()


def state(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (sorted), to compare a workspace before and after."""
    if not db.exists():
        return {}
    con = duckdb.connect(str(db), read_only=True)
    try:
        out: dict[str, list[tuple[Any, ...]]] = {}
        for t in TABLES:
            out[t] = sorted(con.table(t).fetchall(), key=repr)
        return out
    finally:
        con.close()


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
