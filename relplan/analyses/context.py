"""The run context every analysis shares: t0, T, phases, the overload phase, Ĉ, D and W.

Conventions (docs/analyses.md, conventions 1-2, 8):
- t0 is run.json's `t0`, else the earliest proxy or engine timestamp (metrics excluded).
- T is the later of the last phase end and the last proxy or engine timestamp (the last
  metric sample when there is neither).
- Phases are half-open `[start, end)` (an event on a boundary belongs to the later phase);
  the whole run is the closed `[t0, T]`.
- The overload phase is run.json's `overload_phase`, else the phase named `pulse`, else the
  phase with the highest arrival rate (calls by t_planned; engine arrivals without a proxy log;
  overload.overload_phase); without phases, overload.detect finds it.
- When run.json names the overload phase and D is known, one more window, `steady`, runs from
  the overload's end plus D to the end of the last phase: the part after the overload in
  which every attempt sent during it has timed out (half-open, like a phase; left out when
  empty or when a phase is itself named `steady`).
- Windows, their query parameters and segments are relplan/analyses/windows.py's (re-exported).
- Flags override run.json: `--phases`, `--capacity`, `--deadline`, `--delivery-window`.
- `--from/--to` narrow the whole run to `[from, to]`; phases are clipped to it and a phase
  left empty by the clip is dropped. One check (bounds.window_in_data) refuses a window
  wholly outside the data, naming the data's span, and clips one that reaches far beyond it
  (more than the data's span, at least an hour), with a note.
- Work is bounded by the data, not by its timestamps: a series has at most MAX_BINS bins
  (auto) or MAX_SERIES_BINS (`--bin`, widened with a note past that), and the rolling
  series at most MAX_ROLLING_EVALUATIONS evaluations (`--step` widened with a note), so one
  record with an outlier timestamp cannot make an analysis build millions of windows. Times given on the command line are seconds from t0,
  or absolute epoch seconds when larger than 1e8 (a date after 1973), the same rule as
  `--phases`.
"""

from __future__ import annotations

import math
from typing import Any, Literal, NamedTuple

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses.bounds import (
    INSTANT_S,
    MAX_SERIES_BINS,
    bounded_bin,
    bounded_step,
    rolling_bounds,
    window_in_data,
)
from relplan.analyses.coverage import ADJACENT_S
from relplan.analyses.overload import (
    STEADY,
    deadline_from_attempts,
    deadline_from_retries,
    overload_phase,
    steady_window,
)
from relplan.analyses.overload import detect as detect_overload
from relplan.analyses.windows import SEGMENT_CASE_CUTS, Window, segments, window_params
from relplan.analyses.wording import Words
from relplan.errors import NoDataError
from relplan.models import REPLICA_LABELS, StrictModel
from relplan.values import resolve_time
from relplan.workspace.facts import latest_manifest

# The sentences of this analysis, worded by relplan/text/context.py (one function per code).
Said = Literal["adjacent_samples", "no_overlap"]
_say: Words[Said] = Words("relplan.text.context")

__all__ = [
    "SEGMENT_CASE_CUTS",
    "STEADY",
    "PhaseSpan",
    "RunContext",
    "SourceSpan",
    "Span",
    "Window",
    "resolve_context",
    "segments",
    "window_params",
]


class PhaseSpan(StrictModel):
    name: str
    start_s: float = Field(description="seconds from t0")
    end_s: float = Field(description="seconds from t0")


class SourceSpan(StrictModel):
    kind: str = Field(description="proxy | events | steps | stats | metrics")
    rows: int
    start_s: float | None = Field(description="first timestamp, seconds from t0")
    end_s: float | None = Field(description="last timestamp, seconds from t0")


class RunContext(StrictModel):
    """What every analysis is relative to. Times are epoch seconds unless named `_s`."""

    t0: float = Field(description="epoch seconds of the run's start")
    t_end: float = Field(description="epoch seconds of T, the end of the data")
    window_start: float = Field(description="epoch seconds: start of the analysed window")
    window_end: float = Field(description="epoch seconds: end of the analysed window")
    t0_source: str = Field(description="run.json | earliest proxy/engine record")
    phases: list[PhaseSpan]
    phases_source: str = Field(description="--phases | run.json | detected | none")
    steady: PhaseSpan | None = Field(
        default=None,
        description="overload end + D to the last phase's end (run.json names the overload)",
    )
    overload_phase: str | None
    overload_rule: str | None = Field(description="why this phase is the overload phase")
    capacity: float | None = Field(description="Ĉ, calls per second")
    capacity_source: str | None
    deadline_s: float | None = Field(description="D, client per-attempt deadline")
    deadline_source: str | None
    delivery_window_s: float | None = Field(description="W, from a call's planned arrival")
    delivery_window_source: str | None
    rolling_window_s: float
    rolling_step_s: float
    bin_s: float
    replica_labels: list[str]
    sources: list[SourceSpan]
    notes: list[str] = Field(description="clock-overlap and other warnings about the inputs")

    def rows(self, kind: str) -> int:
        return next((s.rows for s in self.sources if s.kind == kind), 0)

    @property
    def has_proxy(self) -> bool:
        return self.rows("proxy") > 0

    @property
    def has_events(self) -> bool:
        return self.rows("events") > 0

    @property
    def has_steps(self) -> bool:
        return self.rows("steps") > 0

    @property
    def has_metrics(self) -> bool:
        return self.rows("metrics") > 0

    def s(self, t: float) -> float:
        """Epoch seconds -> seconds from t0."""
        return t - self.t0

    def phase_windows(self) -> list[Window]:
        """The whole window (closed) followed by each phase (half-open), clipped."""
        out = [Window("run", self.window_start, self.window_end, True)]
        for p in self.phases:
            a = max(self.t0 + p.start_s, self.window_start)
            b = min(self.t0 + p.end_s, self.window_end)
            if b > a:
                out.append(Window(p.name, a, b, False))
        if self.steady is not None:
            a = max(self.t0 + self.steady.start_s, self.window_start)
            b = min(self.t0 + self.steady.end_s, self.window_end)
            if b > a:
                out.append(Window(STEADY, a, b, False))
        return out

    def rolling_bounds(self) -> tuple[float, float]:
        """The part of the window a rolling series over the metrics covers (rolling_bounds)."""
        m = next((x for x in self.sources if x.kind == "metrics"), None)
        span = (
            None
            if m is None or m.start_s is None or m.end_s is None
            else (self.t0 + m.start_s, self.t0 + m.end_s)
        )
        return rolling_bounds(self.window_start, self.window_end, span, self.rolling_window_s)

    def overload_end(self) -> float | None:
        for p in self.phases:
            if p.name == self.overload_phase:
                return self.t0 + p.end_s
        return None

    def bins(self, width: float, origin: float | None = None, tag: str = "bin") -> list[Window]:
        """Half-open bins of `width` from `origin` (default the window start) to its end,
        at most MAX_SERIES_BINS of them (the series bins never reach it: `bin_s` is sized
        for the window; bins from a later origin, such as the recovery search, stop there).
        Named `\x1f<tag><i>` so they can share one query with the phases without a clash."""
        start = self.window_start if origin is None else origin
        n = max(0, math.ceil((self.window_end - start) / width - 1e-9))
        n = min(n, MAX_SERIES_BINS)
        return [
            Window(f"\x1f{tag}{i}", start + i * width, start + (i + 1) * width, False)
            for i in range(n)
        ]


class Span(NamedTuple):
    """Rows of one input kind and its first and last timestamp (None when it has no rows)."""

    n: int
    t_min: float | None
    t_max: float | None

    @property
    def range(self) -> tuple[float, float] | None:
        """(first, last) timestamp, None when the kind has no rows."""
        if self.n == 0 or self.t_min is None or self.t_max is None:
            return None
        return float(self.t_min), float(self.t_max)


def resolve_context(con: duckdb.DuckDBPyConnection, opts: Any) -> RunContext:
    """Build the RunContext from run.json (manifests/phases tables) and the flags in `opts`
    (an AnalyzeOptions). Raises NoDataError when the workspace holds no proxy or engine data."""
    man = latest_manifest(con)
    man_phases = (
        [PhaseSpan(name=p.name, start_s=p.start_s, end_s=p.end_s) for p in man.phases]
        if man is not None
        else []
    )
    spans = {
        r["kind"]: Span(int(r["n"]), r["t_min"], r["t_max"])
        for r in sql.rows(con, "analyses/data_time_ranges")
    }
    data_kinds = ("proxy", "events", "steps", "stats", "stats line")
    ranges = [r for k in data_kinds if (r := spans[k].range) is not None]
    mins = [first for first, _ in ranges]
    maxs = [last for _, last in ranges]
    metrics_range = spans["metrics"].range
    notes: list[str] = []
    if ranges and metrics_range is not None and max(maxs) - min(mins) < INSTANT_S:
        # Every proxy/engine record lies at one instant (one abort line, one gateway line):
        # it cannot define the window alone; metrics adjacent to it (within ADJACENT_S)
        # extend it (coverage.py: an isolated line never defines the window).
        lo, hi = min(mins), max(maxs)
        wider = metrics_range[0] < lo or metrics_range[1] > hi
        if wider and metrics_range[0] - hi <= ADJACENT_S and lo - metrics_range[1] <= ADJACENT_S:
            mins, maxs = [min(lo, metrics_range[0])], [max(hi, metrics_range[1])]
            notes.append(_say("adjacent_samples", tolerance=ADJACENT_S))

    if man is not None and man.t0 is not None:
        t0, t0_source = float(man.t0), "run.json"
    elif mins:
        t0, t0_source = min(mins), "earliest proxy/engine record"
    elif metrics_range is not None:
        t0, t0_source = metrics_range[0], "earliest metric sample (no proxy or engine data)"
        notes.append("no proxy log or engine trace: t0 and T come from the metrics")
    else:
        raise NoDataError(
            "the workspace holds no proxy log, engine trace or metrics; run `relplan ingest` first"
        )

    if not maxs and metrics_range is not None:
        maxs = [metrics_range[1]]

    if opts.phases:
        phases = [
            PhaseSpan(name=name, start_s=resolve_time(a, t0) - t0, end_s=resolve_time(b, t0) - t0)
            for name, a, b in opts.phases
        ]
        phases_source = "--phases"
    elif man_phases:
        phases, phases_source = man_phases, "run.json"
    else:
        phases, phases_source = [], "none"
    phases = sorted(phases, key=lambda p: p.start_s)

    t_end = max([*(float(m) for m in maxs), *(t0 + p.end_s for p in phases), t0])
    detected = None
    if not phases and t_end > t0:
        detected = detect_overload(con, t0, t_end, opts.capacity)
        if detected is not None and detected.phases:
            phases = [PhaseSpan(name=n, start_s=a, end_s=b) for n, a, b in detected.phases]
            phases_source = "detected"

    window_start, window_end = t0, t_end
    if opts.t_from is not None:
        window_start = resolve_time(opts.t_from, t0)
    if opts.t_to is not None:
        window_end = resolve_time(opts.t_to, t0)
    data_lo = min([*mins, *([metrics_range[0]] if metrics_range else []), t0])
    window_start, window_end = window_in_data(
        window_start,
        window_end,
        (data_lo, t_end),
        t0,
        notes,
        given=(opts.t_from is not None, opts.t_to is not None),
    )

    def pick(flag: float | None, manifest: float | None) -> tuple[float | None, str | None]:
        if flag is not None:
            return float(flag), "flag"
        if manifest is not None:
            return float(manifest), "run.json"
        return None, None

    capacity, capacity_source = pick(opts.capacity, man.capacity_calls_per_s if man else None)
    deadline_s, deadline_source = pick(opts.deadline, man.deadline_s if man else None)
    window_w, window_w_source = pick(opts.delivery_window, man.delivery_window_s if man else None)

    overload, rule = overload_phase(
        con, man.overload_phase if man else None, [(p.name, p.start_s, p.end_s) for p in phases], t0
    )
    if detected is not None:
        if detected.phases:
            overload, rule = "overload", detected.rule
        if capacity is None and detected.capacity is not None:
            capacity = detected.capacity
            capacity_source = f"estimated: {detected.capacity_rule}"
    if deadline_s is None and spans["proxy"].n:
        deadline_s, deadline_source = deadline_from_attempts(con)
        if deadline_s is None:
            deadline_s, deadline_source = deadline_from_retries(con)

    steady_span = steady_window(
        [(p.name, p.start_s, p.end_s) for p in phases], overload, rule, deadline_s, notes
    )
    steady = (
        None
        if steady_span is None
        else PhaseSpan(name=STEADY, start_s=steady_span[0], end_s=steady_span[1])
    )
    sources = [
        SourceSpan(
            kind=k,
            rows=spans[k].n,
            start_s=None if (r := spans[k].range) is None else r[0] - t0,
            end_s=None if r is None else r[1] - t0,
        )
        for k in ("proxy", "events", "steps", "stats", "metrics")
    ]
    notes.extend(_clock_notes(spans))
    labels = [opts.replica_label] if opts.replica_label else list(REPLICA_LABELS)
    return RunContext(
        t0=t0,
        t_end=t_end,
        window_start=window_start,
        window_end=window_end,
        t0_source=t0_source,
        phases=phases,
        phases_source=phases_source,
        steady=steady,
        overload_phase=overload,
        overload_rule=rule,
        capacity=capacity,
        capacity_source=capacity_source,
        deadline_s=deadline_s,
        deadline_source=deadline_source,
        delivery_window_s=window_w,
        delivery_window_source=window_w_source,
        rolling_window_s=opts.window,
        rolling_step_s=bounded_step(
            opts.step, _rolling_span(spans, window_start, window_end, opts.window), notes
        ),
        bin_s=bounded_bin(opts.bin, window_end - window_start, notes),
        replica_labels=labels,
        sources=sources,
        notes=notes,
    )


def _rolling_span(spans: dict[str, Span], a: float, b: float, width: float) -> float:
    lo, hi = rolling_bounds(a, b, spans["metrics"].range, width)
    return max(0.0, hi - lo)


def _clock_notes(spans: dict[str, Span]) -> list[str]:
    """Say so when two sources' time ranges do not overlap (different clocks, wrong files);
    sources at most ADJACENT_S apart are adjacent, not disjoint (no note)."""
    labels = {"proxy": "proxy log", "events": "engine trace", "metrics": "metrics"}
    eng = [r for k in ("events", "steps") if (r := spans[k].range) is not None]
    ranges: dict[str, tuple[float, float]] = {}
    if (proxy := spans["proxy"].range) is not None:
        ranges["proxy"] = proxy
    if eng:
        ranges["events"] = (min(first for first, _ in eng), max(last for _, last in eng))
    if (metrics := spans["metrics"].range) is not None:
        ranges["metrics"] = metrics
    out = []
    keys = list(ranges)
    for i, a in enumerate(keys):
        for b in keys[i + 1 :]:
            (a0, a1), (b0, b1) = ranges[a], ranges[b]
            if a1 + ADJACENT_S < b0 or b1 + ADJACENT_S < a0:
                out.append(
                    _say(
                        "no_overlap",
                        first=labels[a],
                        first_span=(a0, a1),
                        second=labels[b],
                        second_span=(b0, b1),
                        tolerance=ADJACENT_S,
                    )
                )
    return out
