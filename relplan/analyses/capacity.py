"""Capacity calibration from a staged ramp (docs/analyses.md, `capacity`).

Stages are the phases named `stage-1`, `stage-2`, ... (also `stage_1`, `stage1`), in
number order. Per stage (queries/analyses/capacity_stages.sql): offered rate (calls by t_planned per
second; engine arrivals without a proxy log), completed rate (engine `finished` per second),
and the least-squares slope of the waiting count over the stage's second half (from the
engine trace's lifecycle events on a 1 s grid; else from vllm:num_requests_waiting).
A stage *grows* when that slope exceeds the tolerance (0.05 /s) and the stage ends with more
than 20 waiting (the simulator's rule, docs/simulate.md; the second condition keeps noise on a short queue
from counting as growth). Ĉ is the offered rate of the last stage before the first growing
one (= docs/analyses.md's "highest stage rate at which the queue does not grow" when growth is
monotone, which a ramp that carries its backlog forward makes it). When the first stage
already grows Ĉ lies below it; when no stage grows Ĉ is at least the last stage's rate.
"""

from __future__ import annotations

import re
from typing import Literal

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses.common import FINDING
from relplan.analyses.context import RunContext, Window, window_params
from relplan.analyses.inputs import Inputs
from relplan.analyses.wording import Words
from relplan.models import StrictModel

# The sentences of this analysis, worded by relplan/text/capacity.py (one function per code).
Said = Literal["needs_trace_or"]
_say: Words[Said] = Words("relplan.text.capacity")

STAGE = re.compile(r"^stage[-_ ]?(\d+)$")
SLOPE_TOLERANCE = 0.05
MIN_END_WAITING = 20
GRID_S = 1.0
GAUGE = "vllm:num_requests_waiting"


class CapacityStage(StrictModel):
    stage: str
    start_s: float
    end_s: float
    offered_per_s: float | None
    completed_per_s: float | None
    waiting_slope_per_s: float | None = Field(description="slope of the waiting count, second half")
    waiting_at_end: float | None
    grows: bool | None


class CapacityCalibration(StrictModel):
    offered_source: str
    waiting_source: str
    slope_tolerance: float
    min_end_waiting: int
    stages: list[CapacityStage]
    capacity_calls_per_s: float | None = Field(
        description="Ĉ estimate (a lower bound when no stage grows)"
    )
    bound: str = Field(description="within | below_first_stage | at_or_above_last_stage | unknown")
    saturated_completed_per_s: float | None = Field(
        description="completed rate of the first growing stage"
    )
    finding: str = Field(default="", description=FINDING)


def stage_phases(ctx: RunContext) -> list[Window]:
    found = []
    for p in ctx.phases:
        m = STAGE.match(p.name)
        if m:
            found.append(
                (int(m.group(1)), Window(p.name, ctx.t0 + p.start_s, ctx.t0 + p.end_s, False))
            )
    return [w for _, w in sorted(found, key=lambda x: x[0])]


def analyze_capacity(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, stages: list[Window]
) -> CapacityCalibration:
    params = window_params(stages) | {"t_end": ctx.t_end, "grid_s": GRID_S, "gauge_name": GAUGE}
    rows = {r["win_name"]: r for r in sql.rows(con, "analyses/capacity_stages", params)}
    offered_src = "proxy log calls" if ctx.has_proxy else "engine arrivals"
    waiting_src = "engine trace" if ctx.has_events else GAUGE
    out = []
    for w in stages:
        r = rows[w.name]
        dur = w.b - w.a
        offered = (r["calls"] if ctx.has_proxy else r["engine_arrivals"]) / dur
        if ctx.has_events:
            slope, end = r["slope_events"], r["waiting_end_events"]
        else:
            slope, end = r["slope_metrics"], r["waiting_end_metrics"]
        grows = (
            None
            if slope is None or end is None
            else bool(slope > SLOPE_TOLERANCE and end > MIN_END_WAITING)
        )
        out.append(
            CapacityStage(
                stage=w.name,
                start_s=ctx.s(w.a),
                end_s=ctx.s(w.b),
                offered_per_s=offered if (ctx.has_proxy or ctx.has_events) else None,
                completed_per_s=r["finished"] / dur if ctx.has_events else None,
                waiting_slope_per_s=None if slope is None else float(slope),
                waiting_at_end=None if end is None else float(end),
                grows=grows,
            )
        )
    first_growing = next((i for i, s in enumerate(out) if s.grows), None)
    cap: float | None
    if any(s.grows is None for s in out):
        cap, bound = None, "unknown"
    elif first_growing is None:
        cap, bound = out[-1].offered_per_s, "at_or_above_last_stage"
    elif first_growing == 0:
        cap, bound = None, "below_first_stage"
    else:
        cap, bound = out[first_growing - 1].offered_per_s, "within"
    sat = out[first_growing].completed_per_s if first_growing is not None else None
    return CapacityCalibration(
        offered_source=offered_src,
        waiting_source=waiting_src,
        slope_tolerance=SLOPE_TOLERANCE,
        min_end_waiting=MIN_END_WAITING,
        stages=out,
        capacity_calls_per_s=cap,
        bound=bound,
        saturated_completed_per_s=sat,
    )


def missing(i: Inputs) -> str | None:
    if not stage_phases(i.ctx):
        return "capacity calibration needs a staged ramp: phases named stage-1, stage-2, ..."
    if not (i.ctx.has_events or GAUGE in i.metric_names):
        return _say("needs_trace_or", gauge=GAUGE)
    return None


def run(i: Inputs) -> CapacityCalibration:
    return analyze_capacity(i.con, i.ctx, stage_phases(i.ctx))
