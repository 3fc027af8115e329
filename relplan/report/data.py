"""The report's data model: everything the HTML page shows, as plain values.

`ReportData` is what `relplan report --json` writes and what the syrupy snapshot checks. It
holds no figure of its own: every number comes from `relplan.analyses` (see `build.py`,
which arranges an `AnalyzeResult` into this model). The HTML renderer and the chart
functions only read it.

Choices:
- Times are seconds from the run's t0; rates are multiples of capacity (× Ĉ) when the
  capacity is known, else per second (`rate_unit` says which).
- Every section is always present, in a fixed order. A section whose analysis could not run
  has `available = False` and names the missing inputs in `missing`; the last section,
  "what the data could not show", lists them all.
- Tables are short and already formatted (strings), so the page and `--json` read alike.
- Series keep the analyses' order (by time); firing intervals are sorted by replica, signal
  and start, so the model is deterministic for a given workspace.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from relplan.models import StrictModel
from relplan.workspace.facts import SourceInfo

Verdict = Literal["recovered", "metastable", "draining", "overloaded", "insufficient data"]
RateUnit = Literal["x capacity", "per second"]

SECTION_ORDER = (
    "load",
    "delivery",
    "prefill",
    "counters",
    "queue",
    "retries",
    "health",
    "missing",
)


class KeyFigure(StrictModel):
    """One figure behind the verdict: a label, the number and how it reads."""

    label: str
    value: float | None
    text: str


class VerdictBlock(StrictModel):
    verdict: Verdict
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
    table: Table | None = None


# --- A. load and amplification -------------------------------------------------------------


class LoadBin(StrictModel):
    start_s: float
    end_s: float
    calls: float | None = Field(description="calls arriving (by planned time), rate")
    accepted: float | None = Field(description="executions accepted, rate")
    completed: float | None = Field(description="executions completed, rate")
    completed_waiting: float | None = Field(
        description="executions completed for a client still waiting, rate"
    )


class LoadSection(SectionBase):
    rate_unit: RateUnit = "x capacity"
    capacity_calls_per_s: float | None = None
    bins: list[LoadBin] = Field(default_factory=list)


# --- B. delivery and recovery --------------------------------------------------------------


class DeliveryBin(StrictModel):
    start_s: float = Field(description="planned-arrival bin start, seconds from t0")
    end_s: float
    calls: int
    on_time_share: float | None


class DeliverySection(SectionBase):
    threshold: float = 0.9
    min_calls: int = 5
    overload_end_s: float | None = None
    recovery_s: float | None = Field(
        default=None, description="start of the recovery bin, seconds from t0"
    )
    recovery_text: str = ""
    bins: list[DeliveryBin] = Field(default_factory=list)


# --- C. where the prefill went --------------------------------------------------------------


class FateTokens(StrictModel):
    fate: str
    tokens: int
    share: float | None


class PrefillSection(SectionBase):
    fates: list[FateTokens] = Field(default_factory=list)
    total_tokens: int = 0
    in_flight_tokens: int | None = None
    in_flight_share: float | None = Field(
        default=None, description="of the aborted executions' computed prompt tokens"
    )
    before_first_token_tokens: int | None = None
    before_first_token_share: float | None = Field(
        default=None, description="of all computed prompt tokens"
    )
    recomputed_tokens: int | None = None


# --- D. counters that miss it ----------------------------------------------------------------


class CounterPoint(StrictModel):
    t_s: float = Field(description="end of the rolling window")
    replica: str
    prompt_rise: float | None
    query_rise: float | None
    shortfall: float | None


class Interval(StrictModel):
    replica: str
    name: str
    start_s: float
    end_s: float


class CountersSection(SectionBase):
    window_s: float = 60
    threshold: float = 0.2
    points: list[CounterPoint] = Field(default_factory=list)
    alarms: list[Interval] = Field(default_factory=list)


# --- E. queue vs Little's law ------------------------------------------------------------------


QueueSeries = Literal["waiting", "waiting_metrics", "deadline"]


class QueuePoint(StrictModel):
    start_s: float = Field(description="bin start, seconds from t0")
    end_s: float
    series: QueueSeries = Field(
        description="waiting: L from the engine trace; waiting_metrics: L from "
        "vllm:num_requests_waiting; deadline: λ·D, one deadline's worth of arrivals"
    )
    value: float


class QueueSection(SectionBase):
    deadline_s: float | None = None
    source: str = ""
    points: list[QueuePoint] = Field(default_factory=list)


# --- F. retry timing ------------------------------------------------------------------------


class RetryStat(StrictModel):
    """One measure's distribution over one window: p10, median and p90 with the count."""

    window: str
    measure: Literal["gap", "slack"]
    n: int
    p10_s: float
    median_s: float
    p90_s: float


class RetrySection(SectionBase):
    stats: list[RetryStat] = Field(default_factory=list)


# --- J. engine health -----------------------------------------------------------------------


class HealthSection(SectionBase):
    signals: list[str] = Field(default_factory=list, description="every signal evaluated")
    replicas: list[str] = Field(default_factory=list)
    intervals: list[Interval] = Field(default_factory=list)


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
    title: str
    run_name: str
    t0: float | None = Field(description="epoch seconds of the run's start")
    end_s: float | None = Field(description="end of the data, seconds from t0")
    capacity_calls_per_s: float | None
    deadline_s: float | None
    phases: list[PhaseBand]
    verdict: VerdictBlock
    load: LoadSection
    delivery: DeliverySection
    prefill: PrefillSection
    counters: CountersSection
    queue: QueueSection
    retries: RetrySection
    health: HealthSection
    missing: MissingSection
    footer: Footer

    def sections(self) -> list[tuple[str, SectionBase]]:
        """The sections in page order, with their anchors."""
        return [(name, getattr(self, name)) for name in SECTION_ORDER]
