"""The result of an ingest (`relplan ingest --json` prints it)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import Field

from relplan.models import StrictModel
from relplan.values import num


class SourceReport(StrictModel):
    source_id: int
    path: str
    kind: str = Field(description="proxy | engine | metrics | manifest")
    format: str
    rows: int = Field(description="rows stored from this source, over all tables")
    rejected: int = Field(description="records refused (stored in rejects with --on-error skip)")
    t_min: float | None = Field(description="earliest time stored, UTC epoch seconds")
    t_max: float | None = Field(description="latest time stored, UTC epoch seconds")
    unknown_columns: list[str]
    notes: list[str] = Field(description="what the adapter dropped or assumed")


class SkippedInput(StrictModel):
    path: str
    reason: str


class IngestReport(StrictModel):
    sources: list[SourceReport] = Field(description="sources added by this ingest")
    skipped: list[SkippedInput] = Field(description="inputs that added nothing, and why")
    rows_by_table: dict[str, int] = Field(description="rows added per workspace table")


def display_path(path: str) -> str:
    """A stored (absolute) path as the user typed it, most likely: relative to the current
    directory when it lies inside it."""
    from pathlib import Path

    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


def iso(t: float | None) -> str:
    """UTC time as RFC 3339 to the millisecond, or '-'."""
    if t is None:
        return "-"
    import datetime as dt

    stamp = dt.datetime.fromtimestamp(t, tz=dt.timezone.utc)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def span(t_min: float | None, t_max: float | None) -> str:
    if t_min is None or t_max is None:
        return "-"
    return f"{iso(t_min)} +{num(t_max - t_min, 1)} s"


class _Source(Protocol):
    @property
    def source_id(self) -> int: ...
    @property
    def path(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def rows(self) -> int: ...
    @property
    def rejected(self) -> int: ...
    @property
    def t_min(self) -> float | None: ...
    @property
    def t_max(self) -> float | None: ...


def sources_table(sources: Sequence[_Source], width: int | None = None) -> str:
    """The Sources table of `ingest` and `inspect`; with `width`, when the paths make it wider,
    they move under it, one line each (`source 3: PATH`), and the table keeps the rest."""
    from relplan.tables import format_table
    from relplan.values import num

    def table(with_path: bool) -> str:
        headers = ["source", "kind", "format", "rows", "rejected", "span (UTC)"]
        rows = [
            [
                str(s.source_id),
                s.kind,
                s.format,
                num(s.rows),
                num(s.rejected),
                span(s.t_min, s.t_max),
            ]
            for s in sources
        ]
        if with_path:
            headers.append("path")
            rows = [[*r, display_path(s.path)] for r, s in zip(rows, sources, strict=True)]
        return format_table(headers, rows, left=(1, 2, 5, 6))

    full = table(True)
    if width is None or max(len(line) for line in full.splitlines()) <= width:
        return full
    return "\n".join(
        [table(False), *(f"  source {s.source_id}: {display_path(s.path)}" for s in sources)]
    )


def render_ingest(rep: IngestReport) -> str:
    lines: list[str] = []
    if rep.sources:
        lines.append(sources_table(rep.sources))
    else:
        lines.append("nothing new ingested")
    for s in rep.sources:
        for note in s.notes:
            lines.append(f"note: source {s.source_id}: {note}")
        if s.unknown_columns:
            lines.append(
                f"note: source {s.source_id}: ignored columns {', '.join(s.unknown_columns)}"
            )
        if s.rejected:
            lines.append(
                f"note: source {s.source_id}: {s.rejected} records refused, kept in"
                " rejects (relplan inspect lists them)"
            )
    for sk in rep.skipped:
        lines.append(f"skipped {sk.path}: {sk.reason}")
    return "\n".join(lines)
