"""`relplan analyze`: every analysis of analyses.md (A-G) that the workspace supports.

Public API (the simulator's --json summary and the HTML report build on it):
- `AnalyzeOptions`: flags (phases, capacity, deadline, delivery window, rolling window and
  step, bin width, --from/--to, replica label, --only).
- `resolve_context(con, opts) -> RunContext`: t0, T, phases, overload phase, Ĉ, D, W.
- `analyze(con, opts) -> AnalyzeResult`: one optional field per analysis, `skipped` naming
  the missing input of each analysis not run, `health` left for section J (relplan/alerts).
- `render_analysis(result) -> str`: the human output (one table and a finding per analysis).

Time series for charts live in the result as lists of rows (`series` fields), all with
`start_s`/`t_s` in seconds from t0: amplification.series (calls / accepted / completed /
completed for a waiting client per bin), delivery.series and delivery.recovery.bins
(on-time share per planned-arrival bin), counters.series (rolling rises and shortfall per
replica), littles_law.series (L vs λ·D per bin).
"""

from __future__ import annotations

from typing import Literal, get_args

import duckdb
from pydantic import Field, field_validator

from relplan.alerts.health import HealthResult, evaluate_health, render_health
from relplan.analyses.amplification import (
    Amplification,
    analyze_amplification,
    render_amplification,
)
from relplan.analyses.capacity import (
    CapacityCalibration,
    analyze_capacity,
    render_capacity,
    stage_phases,
)
from relplan.analyses.common import SkippedAnalysis, run_query
from relplan.analyses.context import RunContext, resolve_context
from relplan.analyses.counters import Counters, analyze_counters, counter_names, render_counters
from relplan.analyses.delivery import Delivery, analyze_delivery, render_delivery
from relplan.analyses.littles_law import GAUGE, LittlesLaw, analyze_littles_law, render_littles_law
from relplan.analyses.retry_timing import RetryTiming, analyze_retry_timing, render_retry_timing
from relplan.analyses.wasted_prefill import (
    WastedPrefill,
    analyze_wasted_prefill,
    render_wasted_prefill,
)
from relplan.errors import NoDataError, UsageError
from relplan.models import StrictModel
from relplan.tables import format_table
from relplan.values import num

__all__ = [
    "ANALYSES",
    "AnalyzeOptions",
    "AnalyzeResult",
    "DataChecks",
    "RunContext",
    "analyze",
    "render_analysis",
    "resolve_context",
]

AnalysisName = Literal[
    "amplification",
    "delivery",
    "wasted_prefill",
    "counters",
    "littles_law",
    "retry_timing",
    "capacity",
    "health",
]
ANALYSES: tuple[str, ...] = get_args(AnalysisName)


class AnalyzeOptions(StrictModel):
    phases: str | None = Field(
        default=None, description="NAME=START:END,... (seconds from t0 or epoch)"
    )
    capacity: float | None = Field(default=None, gt=0, description="Ĉ, calls per second")
    deadline: float | None = Field(default=None, gt=0, description="D, seconds")
    delivery_window: float | None = Field(default=None, gt=0, description="W, seconds")
    window: float = Field(default=60.0, gt=0, description="rolling window length (D), seconds")
    step: float = Field(default=15.0, gt=0, description="rolling evaluation step, seconds")
    bin: float | None = Field(
        default=None,
        gt=0,
        description="series bin width, seconds; default 30 s, widened for long windows",
    )
    t_from: float | None = None
    t_to: float | None = None
    replica_label: str | None = None
    only: list[str] = Field(default_factory=list)

    @field_validator("only")
    @classmethod
    def _known(cls, v: list[str]) -> list[str]:
        bad = [n for n in v if n not in ANALYSES]
        if bad:
            raise UsageError(
                "--only",
                f"unknown analysis {', '.join(bad)}; expected one of {', '.join(ANALYSES)}",
            )
        return v


class DataChecks(StrictModel):
    """Edge cases counted, not guessed (queries/analyses/data_edge_cases.sql)."""

    executions_no_terminal: int
    executions_no_arrived: int
    attempts_no_execution: int
    attempts_unmatched: int
    steps_unknown_execution: int | None = Field(
        default=None,
        description="steps (in the analysed window) of executions with no lifecycle event;"
        " counted by wasted prefill, null when steps exist but it did not run (--only)",
    )
    execution_ids_on_several_replicas: int


class AnalyzeResult(StrictModel):
    context: RunContext
    data_checks: DataChecks
    amplification: Amplification | None = None
    delivery: Delivery | None = None
    wasted_prefill: WastedPrefill | None = None
    counters: Counters | None = None
    littles_law: LittlesLaw | None = None
    retry_timing: RetryTiming | None = None
    capacity: CapacityCalibration | None = None
    health: HealthResult | None = Field(
        default=None,
        description="J. engine health signals: firing intervals per replica (relplan.alerts)",
    )
    skipped: list[SkippedAnalysis] = Field(default_factory=list)


def analyze(con: duckdb.DuckDBPyConnection, opts: AnalyzeOptions) -> AnalyzeResult:
    ctx = resolve_context(con, opts)
    checks = DataChecks(**run_query(con, "analyses/data_edge_cases", {})[0])
    if not ctx.has_steps:
        checks.steps_unknown_execution = 0
    res = AnalyzeResult(context=ctx, data_checks=checks)
    wanted = set(opts.only or ANALYSES)

    def skip(name: str, reason: str) -> None:
        res.skipped.append(SkippedAnalysis(analysis=name, reason=reason))

    if "amplification" in wanted:
        if ctx.has_proxy or ctx.has_events:
            res.amplification = analyze_amplification(con, ctx)
        else:
            skip("amplification", "load amplification needs a proxy log or an engine trace")
    if "delivery" in wanted:
        if ctx.has_proxy:
            res.delivery = analyze_delivery(con, ctx)
        else:
            skip("delivery", "delivery and recovery need a proxy log (attempt outcomes)")
    if "wasted_prefill" in wanted:
        if ctx.has_steps:
            res.wasted_prefill = analyze_wasted_prefill(con, ctx)
            checks.steps_unknown_execution = res.wasted_prefill.windows[0].steps_by_fate["unknown"]
        else:
            skip("wasted_prefill", "wasted prefill needs an engine trace with step records")
    names = {r["name"] for r in run_query(con, "analyses/metric_names_present", {})}
    if "counters" in wanted:
        prompt, query = counter_names(con)
        if prompt and query:
            res.counters = analyze_counters(con, ctx, prompt, query)
        else:
            missing = [
                n
                for n, ok in (
                    ("vllm:prompt_tokens_total", prompt),
                    ("vllm:prefix_cache_queries_total", query),
                )
                if not ok
            ]
            skip("counters", f"counter divergence needs the metrics {' and '.join(missing)}")
    if "littles_law" in wanted:
        gauge = GAUGE in names
        if ctx.has_events or gauge:
            res.littles_law = analyze_littles_law(con, ctx, gauge)
        else:
            skip(
                "littles_law",
                f"Little's law needs an engine trace (lifecycle events) or the {GAUGE} metric",
            )
    if "retry_timing" in wanted:
        if ctx.has_proxy and ctx.has_events:
            res.retry_timing = analyze_retry_timing(con, ctx)
        else:
            skip("retry_timing", "retry timing needs both a proxy log and an engine trace")
    if "capacity" in wanted:
        stages = stage_phases(ctx)
        if not stages:
            skip(
                "capacity",
                "capacity calibration needs a staged ramp: phases named stage-1, stage-2, ...",
            )
        elif not (ctx.has_events or GAUGE in names):
            skip("capacity", f"capacity calibration needs an engine trace or the {GAUGE} metric")
        else:
            res.capacity = analyze_capacity(con, ctx, stages)
    if "health" in wanted:
        # J is evaluated by relplan.alerts with Prometheus's semantics, so that the rule file
        # `relplan alerts export` writes fires where this says it does.
        try:
            res.health = evaluate_health(
                con,
                start=ctx.window_start,
                end=ctx.window_end,
                step=opts.step,
                replica_label=opts.replica_label,
            )
        except NoDataError as exc:
            skip("health", f"engine health signals need vLLM metrics: {exc}")
    return res


def render_analysis(result: AnalyzeResult) -> str:
    ctx = result.context
    lines = [
        f"Run: t0 {ctx.t0:.3f} ({ctx.t0_source}), T = {ctx.s(ctx.t_end):g} s,"
        f" window {ctx.s(ctx.window_start):g}..{ctx.s(ctx.window_end):g} s;"
        f" Ĉ {num(ctx.capacity, 3)} calls/s ({ctx.capacity_source or 'unknown'}),"
        f" D {num(ctx.deadline_s)} s ({ctx.deadline_source or 'unknown'}),"
        f" W {num(ctx.delivery_window_s)} s ({ctx.delivery_window_source or 'unknown'})",
        f"Phases ({ctx.phases_source}): "
        + (", ".join(f"{p.name} {p.start_s:g}-{p.end_s:g} s" for p in ctx.phases) or "none")
        + (
            f"; overload phase {ctx.overload_phase} ({ctx.overload_rule})"
            if ctx.overload_phase
            else ""
        ),
    ]
    lines += [f"Note: {n}" for n in ctx.notes]
    checks = result.data_checks.model_dump()
    odd = [f"{k.replace('_', ' ')}: {v:,}" for k, v in checks.items() if v]
    if odd:
        lines.append("Edge cases: " + "; ".join(odd))
    blocks = ["\n".join(lines)]
    if result.amplification:
        blocks.append(render_amplification(result.amplification))
    if result.delivery:
        blocks.append(render_delivery(result.delivery))
    if result.wasted_prefill:
        blocks.append(render_wasted_prefill(result.wasted_prefill))
    if result.counters:
        blocks.append(render_counters(result.counters))
    if result.littles_law:
        blocks.append(render_littles_law(result.littles_law))
    if result.retry_timing:
        blocks.append(render_retry_timing(result.retry_timing))
    if result.capacity:
        blocks.append(render_capacity(result.capacity))
    if result.health:
        blocks.append(render_health(result.health, ctx.t0))
    if result.skipped:
        blocks.append(
            "Skipped\n"
            + format_table(
                ["analysis", "missing input"],
                [[s.analysis, s.reason] for s in result.skipped],
                left=(0, 1),
            )
        )
    return "\n\n".join(blocks)
