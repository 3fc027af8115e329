"""`relplan inspect`: what a workspace holds (sources, counts, rejects, metrics, manifests)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from pydantic import Field

from relplan import sql
from relplan.ingest.outcome import display_path, iso, say, sources_table, span
from relplan.models import StrictModel
from relplan.tables import format_table
from relplan.values import num, short
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


def render_inspect(rep: InspectReport) -> str:
    out = [format_table(["table", "rows"], [[t, num(n)] for t, n in rep.tables.items()])]
    out.append("")
    if rep.sources:
        out.append("Sources:")
        out.append(sources_table(rep.sources, WIDTH))
        for s in rep.sources:
            if s.unknown_columns:
                out.append(
                    say("inspect_ignored_columns", source=s.source_id, columns=s.unknown_columns)
                )
            for note in s.notes:
                out.extend(_fit(say("inspect_source_note", source=s.source_id, note=note)))
    else:
        out.append(say("no_sources_yet"))
    if rep.rejects_total:
        out.append("")
        out.append(say("rejected_records", total=rep.rejects_total, shown=len(rep.rejects)))
        for r in rep.rejects:
            out.append(f"  {display_path(r.path)}:{r.line}: {r.reason}")
    if rep.metrics:
        out.append("")
        out.extend(_metrics_table(rep.metrics))
    for m in rep.manifests:
        out.append("")
        out.append(say("manifest_heading", name=m.name, source=m.source_id))
        fields = {
            "capacity_calls_per_s": m.capacity_calls_per_s,
            "deadline_s": m.deadline_s,
            "delivery_window_s": m.delivery_window_s,
            "overload_phase": m.overload_phase,
            "t0": iso(m.t0) if m.t0 is not None else None,
            "notes": m.notes,
        }
        for k, v in fields.items():
            if v is not None:
                out.append(f"  {k}: {v}")
        if m.phases:
            out.append(
                "  phases: "
                + ", ".join(
                    f"{p['name']}={short(p['start_s'])}:{short(p['end_s'])}" for p in m.phases
                )
            )
    return "\n".join(out)


WIDTH = 100  # inspect fits a 100-column terminal (issue 23)


def _fit(line: str) -> list[str]:
    """A note line, wrapped at WIDTH (continuations indented) when longer."""
    if len(line) <= WIDTH:
        return [line]
    import textwrap

    return textwrap.wrap(line, WIDTH, subsequent_indent="      ", break_on_hyphens=False)


def summarise_keys(keys: list[str], budget: int) -> str:
    """Label keys in at most `budget` characters: all of them when they fit, else as many as
    fit and how many there are (`40 keys: block_size, cache_dtype, ...`)."""
    full = ", ".join(keys) or "-"
    if len(full) <= budget:
        return full
    head = f"{len(keys)} keys: "
    shown: list[str] = []
    for k in keys:
        if len(head + ", ".join([*shown, k]) + ", ...") > budget:
            break
        shown.append(k)
    return head + ", ".join([*shown, "..."]) if shown else f"{len(keys)} keys (see --json)"


def _metrics_table(metrics: list[InspectMetric]) -> list[str]:
    """The Metrics table within WIDTH: unchanged when it fits; else one span for all names in
    the heading when they share it, and wide label sets summarised (--json has them all)."""
    spans = [span(m.t_min, m.t_max) for m in metrics]

    def table(keys: list[str], with_span: bool) -> str:
        headers = ["name", "type", "samples", "series", "label keys"]
        rows = [
            [m.name, m.type or "-", num(m.samples), num(m.series), k]
            for m, k in zip(metrics, keys, strict=True)
        ]
        if with_span:
            headers.append("span (UTC)")
            rows = [[*r, sp] for r, sp in zip(rows, spans, strict=True)]
        return format_table(headers, rows, left=(0, 1, 4, 5))

    full = table([", ".join(m.label_keys) or "-" for m in metrics], True)
    if max(len(line) for line in full.splitlines()) <= WIDTH:
        return ["Metrics:", full]
    one_span = len(set(spans)) == 1
    with_span = not one_span
    fixed = table(["-"] * len(metrics), with_span)
    if with_span and max(len(line) for line in fixed.splitlines()) > WIDTH - 20:
        with_span = False  # no room for spans that differ: --json has each name's
        fixed = table(["-"] * len(metrics), False)
    heading = (
        f"Metrics (all {spans[0]}):"
        if one_span
        else "Metrics:"
        if with_span
        else "Metrics (each name's span: --json):"
    )
    others = max(len(line) for line in fixed.splitlines()) - len("label keys")
    budget = max(20, WIDTH - others)
    keys = [summarise_keys(m.label_keys, budget) for m in metrics]
    return [heading, table(keys, with_span)]


def to_json(rep: InspectReport) -> str:
    return json.dumps(rep.model_dump(mode="json"), indent=2)


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


def render_formats(rep: FormatsReport) -> str:
    return format_table(
        ["format", "kind", "family", "tables", "options", "what"],
        [
            [
                f.name,
                "/".join(f.kinds),
                f.family,
                ", ".join(f.tables) or "-",
                ", ".join(f.options) or "-",
                f.summary,
            ]
            for f in rep.formats
        ],
    )
