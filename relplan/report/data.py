"""The report's data model: everything the HTML page shows, as plain values.

`ReportData` is what `relplan report --json` writes and what the syrupy snapshot checks. It
holds no figure of its own: every number comes from `relplan.analyses` (see `build.py`,
which arranges an `AnalyzeResult` into this model, and relplan/report/sections/, one module
per section). The HTML renderer and the chart
functions only read it.

Choices:
- Times in series are seconds from the run's t0 (`t0` is epoch seconds, `t0_utc` the same
  in RFC 3339); tables and sentences show them as wall-clock times in `tz` (`--tz`, UTC by
  default) with the date, seconds only where a duration is meant; rates are multiples of capacity (× Ĉ) when the
  capacity is known, else per second (`rate_unit` says which).
- Every section is always present, in registry order (relplan/analyses/registry.py). A section whose analysis could not run
  has `available = False` and names the missing inputs in `missing`; the last section,
  "what the data could not show", lists them all.
- Tables are short and already formatted (strings), so the page and `--json` read alike.
- Series keep the analyses' order (by time); firing intervals are sorted by replica, signal
  and start, so the model is deterministic for a given workspace.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from relplan.analyses.delivery import Verdict
from relplan.models import StrictModel
from relplan.workspace.facts import SourceInfo


class KeyFigure(StrictModel):
    """One figure behind the verdict: a label, the number and how it reads."""

    label: str
    value: float | None
    text: str


class VerdictBlock(StrictModel):
    verdict: Verdict | Literal["healthy", "failing", "cannot tell"]
    headline: str = Field(description="one sentence in plain words")
    reasons: list[str] = Field(description="the figures behind it, as sentences")
    figures: list[KeyFigure]


class Table(StrictModel):
    columns: list[str]
    rows: list[list[str]]


class PhaseBand(StrictModel):
    name: str
    start_s: float
    end_s: float


class SectionBase(StrictModel):
    title: str
    question: str = Field(description="what the section answers, one sentence")
    available: bool = True
    finding: str = Field(default="", description="what it shows, in plain words")
    missing: list[str] = Field(default_factory=list, description="inputs it lacked")
    caption: str = Field(default="", description="how to read the chart (dashes, rules)")
    table: Table | None = None


class Interval(StrictModel):
    replica: str
    name: str
    start_s: float
    end_s: float


# --- what the data could not show -----------------------------------------------------------


class MissingItem(StrictModel):
    section: str = Field(description="the analysis or signal that could not run")
    reason: str = Field(description="the input it lacked, as the analysis states it")


class MissingSection(SectionBase):
    items: list[MissingItem] = Field(default_factory=list)


# --- footer and the whole report ------------------------------------------------------------


class Footer(StrictModel):
    sources: list[SourceInfo]
    row_counts: dict[str, int]
    relplan_version: str
    generated_at: datetime


class ReportData(StrictModel):
    """The fields every report has. The class the builder fills is built from the registry
    (`relplan.report.section.report_model()`): these fields, then one section per registered
    analysis with a report section (named after the analysis, in registry order), then
    `missing` and `footer`."""

    title: str
    run_name: str
    t0: float | None = Field(description="epoch seconds of the run's start")
    t0_utc: str | None = Field(default=None, description="t0 in RFC 3339, UTC")
    tz: str = Field(default="UTC", description="the zone tables and axes show times in")
    end_s: float | None = Field(description="end of the data, seconds from t0")
    capacity_calls_per_s: float | None
    capacity_status: str | None = Field(
        default=None, description="given (a flag or run.json) | estimated (from the data)"
    )
    deadline_s: float | None
    deadline_status: str | None = Field(
        default=None, description="given (a flag or run.json) | estimated (from the data)"
    )
    phases: list[PhaseBand]
    verdict: VerdictBlock

    if TYPE_CHECKING:  # fields report_model() adds
        missing: MissingSection
        footer: Footer

        def __getattr__(self, name: str) -> Any: ...

    def sections(self) -> list[tuple[str, SectionBase]]:
        """The sections in page order, with their anchors (the analyses' names, `missing`)."""
        return [(name, value) for name, value in self if isinstance(value, SectionBase)]
