"""The analysis window the verdict speaks for (docs/analyses.md, "The analysis window").

The window is the span where the sources that carry load data overlap:
- a gateway log (attempts), engine lifecycle events, step records, stats records, vLLM's
  stats log lines and metric scrapes each form one source family, with its first and last
  timestamp;
- an isolated event line never defines the window: lifecycle events at fewer than
  MIN_EVENT_TIMES distinct instants (one `Aborted request` line) carry no load data;
- two sources whose spans are at most ADJACENT_S apart are adjacent, not disjoint: the
  window then runs from the first's start to the second's end;
- sources further apart than that are disjoint: the window is the span of the source with
  the most timestamps, and the others are named as outside it.
The window says which source bounds its start and which its end.
"""

from __future__ import annotations

from typing import Literal

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses.wording import Words
from relplan.models import StrictModel

# The window's sentences, worded by relplan/text/coverage.py (one function per code).
Said = Literal["isolated_events", "only_source", "overlap", "adjacent", "disjoint"]
_say: Words[Said] = Words("relplan.text.coverage")

ADJACENT_S = 30.0
MIN_EVENT_TIMES = 2

LABELS = {
    "proxy": "the gateway log",
    "engine": "the engine trace",
    "events": "the engine log's lifecycle events",
    "steps": "the engine trace's step records",
    "stats": "the engine trace's stats records",
    "stats line": "vLLM's stats log lines",
    "metrics": "the metric scrapes",
}

Relation = Literal["overlap", "adjacent", "disjoint", "one source", "no load data"]


class SourceCoverage(StrictModel):
    family: str = Field(description="proxy | engine | events | stats line | metrics")
    label: str
    rows: int
    instants: int = Field(description="distinct timestamps")
    start: float | None = Field(description="epoch seconds")
    end: float | None = Field(description="epoch seconds")
    carries_load: bool
    why_not: str | None = Field(default=None, description="why it does not bound the window")


class DataWindow(StrictModel):
    start: float | None = Field(description="epoch seconds")
    end: float | None = Field(description="epoch seconds")
    start_bound_by: str | None = Field(description="the source whose start bounds the window")
    end_bound_by: str | None = Field(description="the source whose end bounds the window")
    relation: Relation
    tolerance_s: float = Field(description="sources at most this far apart are adjacent")
    sources: list[SourceCoverage]
    note: str = Field(description="the window in one sentence: which sources, which bound it")

    @property
    def seconds(self) -> float | None:
        return None if self.start is None or self.end is None else self.end - self.start


ENGINE = ("events", "steps", "stats")


def sources(con: duckdb.DuckDBPyConnection) -> list[SourceCoverage]:
    """One row per source family; the engine trace's events, steps and stats records are one
    source (one file, one clock), spanning all three."""
    rows = [r for r in sql.rows(con, "analyses/source_spans") if int(r["n"])]
    eng = [r for r in rows if r["family"] in ENGINE]
    rows = [r for r in rows if r["family"] not in ENGINE]
    if eng:
        rows.insert(
            0,
            {
                "family": "events" if len(eng) == 1 and eng[0]["family"] == "events" else "engine",
                "n": sum(int(r["n"]) for r in eng),
                "n_t": sum(int(r["n_t"]) for r in eng),
                "t_min": min(float(r["t_min"]) for r in eng),
                "t_max": max(float(r["t_max"]) for r in eng),
            },
        )
    out = []
    for r in rows:
        n = int(r["n"])
        fam = str(r["family"])
        n_t = int(r["n_t"])
        why = None
        if fam == "events" and n_t < MIN_EVENT_TIMES:
            why = _say("isolated_events", lines=n)
        out.append(
            SourceCoverage(
                family=fam,
                label=LABELS[fam],
                rows=n,
                instants=n_t,
                start=float(r["t_min"]),
                end=float(r["t_max"]),
                carries_load=why is None,
                why_not=why,
            )
        )
    # one fixed order (LABELS'), so the window's sentence never depends on the query's row order
    order = list(LABELS)
    out.sort(key=lambda s: order.index(s.family))
    return out


def window(con: duckdb.DuckDBPyConnection) -> DataWindow:
    return window_of(sources(con))


def window_of(srcs: list[SourceCoverage]) -> DataWindow:
    load = [s for s in srcs if s.carries_load and s.start is not None and s.end is not None]
    if not load:
        return DataWindow(
            start=None,
            end=None,
            start_bound_by=None,
            end_bound_by=None,
            relation="no load data",
            tolerance_s=ADJACENT_S,
            sources=srcs,
            note="no source carries load data (calls, lifecycle events, stats lines or metrics)",
        )
    if len(load) == 1:
        s = load[0]
        return DataWindow(
            start=s.start,
            end=s.end,
            start_bound_by=s.label,
            end_bound_by=s.label,
            relation="one source",
            tolerance_s=ADJACENT_S,
            sources=srcs,
            note=_say("only_source", label=s.label),
        )
    first = max(load, key=lambda s: s.start or 0.0)
    last = min(load, key=lambda s: s.end or 0.0)
    a, b = float(first.start or 0.0), float(last.end or 0.0)
    if b >= a:
        return DataWindow(
            start=a,
            end=b,
            start_bound_by=first.label,
            end_bound_by=last.label,
            relation="overlap",
            tolerance_s=ADJACENT_S,
            sources=srcs,
            note=_say("overlap", labels=_labels(load), first=first.label, last=last.label),
        )
    if a - b <= ADJACENT_S:
        lo = min(load, key=lambda s: s.start or 0.0)
        hi = max(load, key=lambda s: s.end or 0.0)
        return DataWindow(
            start=float(lo.start or 0.0),
            end=float(hi.end or 0.0),
            start_bound_by=lo.label,
            end_bound_by=hi.label,
            relation="adjacent",
            tolerance_s=ADJACENT_S,
            sources=srcs,
            note=_say(
                "adjacent",
                labels=_labels(load),
                gap=a - b,
                tolerance=ADJACENT_S,
                first=lo.label,
                last=hi.label,
            ),
        )
    main = max(load, key=lambda s: (s.instants, s.rows))
    others = [s for s in load if s is not main]
    return DataWindow(
        start=main.start,
        end=main.end,
        start_bound_by=main.label,
        end_bound_by=main.label,
        relation="disjoint",
        tolerance_s=ADJACENT_S,
        sources=srcs,
        note=_say(
            "disjoint",
            labels=_labels(load),
            gap=a - b,
            tolerance=ADJACENT_S,
            main=main.label,
            others=_labels(others),
        ),
    )


def _labels(srcs: list[SourceCoverage]) -> list[str]:
    return [s.label for s in srcs]
