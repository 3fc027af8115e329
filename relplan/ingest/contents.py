"""`relplan inspect`: what a workspace holds (sources, counts, rejects, metrics, manifests), and
the input formats this build reads (`--formats`); relplan/text/ingest.py words both."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from pydantic import Field

from relplan import sql
from relplan.models import StrictModel
from relplan.workspace import TABLES, open_workspace

REJECTS_SHOWN = 50


class InspectSource(StrictModel):
    source_id: int
    path: str
    kind: str
    format: str
    rows: int
    rejected: int
    t_min: float | None = Field(description="UTC epoch seconds")
    t_max: float | None
    unknown_columns: list[str] = Field(description="columns present in the file and ignored")
    notes: list[str]
    ingested_at: str = Field(description="RFC 3339, UTC")


class InspectReject(StrictModel):
    source_id: int
    path: str
    line: int
    reason: str
    raw: str


class InspectMetric(StrictModel):
    name: str
    type: str | None
    samples: int
    series: int
    label_keys: list[str]
    t_min: float
    t_max: float


class InspectManifest(StrictModel):
    source_id: int
    name: str
    capacity_calls_per_s: float | None
    deadline_s: float | None
    delivery_window_s: float | None
    overload_phase: str | None
    t0: float | None
    notes: str | None
    phases: list[dict[str, Any]]


class InspectReport(StrictModel):
    workspace: str
    tables: dict[str, int] = Field(description="row count of every workspace table")
    sources: list[InspectSource]
    rejects_total: int
    rejects: list[InspectReject] = Field(description=f"the first {REJECTS_SHOWN} by source, line")
    metrics: list[InspectMetric]
    manifests: list[InspectManifest]


def inspect_workspace(db: Path) -> InspectReport:
    with open_workspace(db, read_only=True) as con:
        counted = {str(r["table"]): int(r["n"]) for r in sql.rows(con, "inspect/table_rows")}
        tables = {t: counted[t] for t in TABLES}
        sources = [
            InspectSource(
                source_id=r["source_id"],
                path=r["path"],
                kind=r["kind"],
                format=r["format"],
                rows=r["rows"],
                rejected=r["rejected"],
                t_min=r["t_min"],
                t_max=r["t_max"],
                unknown_columns=list(r["unknown_columns"] or []),
                notes=list(r["notes"] or []),
                ingested_at=r["ingested_at"].astimezone(dt.timezone.utc).isoformat(),
            )
            for r in sql.rows(con, "inspect/sources")
        ]
        rejects = [InspectReject(**r) for r in sql.rows(con, "inspect/rejects")]
        metrics = [
            InspectMetric(
                name=r["name"],
                type=r["type"],
                samples=r["samples"],
                series=r["series"],
                label_keys=sorted(r["label_keys"] or []),
                t_min=r["t_min"],
                t_max=r["t_max"],
            )
            for r in sql.rows(con, "inspect/metrics")
        ]
        phases: dict[int, list[dict[str, Any]]] = {}
        for p in sql.rows(con, "inspect/phases"):
            phases.setdefault(p["source_id"], []).append(
                {"name": p["name"], "start_s": p["start_s"], "end_s": p["end_s"]}
            )
        manifests = [
            InspectManifest(**m, phases=phases.get(m["source_id"], []))
            for m in sql.rows(con, "inspect/manifests")
        ]
    return InspectReport(
        workspace=str(db),
        tables=tables,
        sources=sources,
        rejects_total=tables["rejects"],
        rejects=rejects,
        metrics=metrics,
        manifests=manifests,
    )


class InputFormat(StrictModel):
    name: str = Field(description="the --format value and sources.format")
    kinds: list[str]
    family: str
    summary: str
    tables: list[str] = Field(description="canonical tables it fills")
    options: list[str] = Field(description="input flags it reads")


class FormatsReport(StrictModel):
    formats: list[InputFormat]


def input_formats() -> FormatsReport:
    """Every input format this build reads (`relplan inspect --formats`), from the registry."""
    from relplan.ingest import registry

    return FormatsReport(
        formats=[
            InputFormat(
                name=a.name,
                kinds=list(a.kinds),
                family=a.family,
                summary=a.summary,
                tables=list(a.tables),
                options=[o.flag for o in a.options],
            )
            for a in registry.adapters().values()
        ]
    )
