"""The text of `relplan analyze` (and of `relplan alerts eval`): one function per analysis.

Compute, then render: the analyses return models (relplan.analyses) and this module turns
them into aligned tables and sentences, and nothing else does. Every analysis's renderer has
the signature `(model, ctx) -> str` and is named by its registry row
(relplan/analyses/registry.py); `render_analysis` prints the run context, the edge cases,
each analysis that ran, in registry order, and the skipped ones.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from relplan.alerts.health import HealthResult
from relplan.analyses import registry
from relplan.analyses.amplification import Amplification
from relplan.analyses.capacity import CapacityCalibration
from relplan.analyses.context import RunContext
from relplan.analyses.counters import Counters
from relplan.analyses.delivery import Delivery
from relplan.analyses.littles_law import LittlesLaw
from relplan.analyses.result import AnalyzeResult
from relplan.analyses.retry_timing import RetryTiming
from relplan.analyses.wasted_prefill import FATES, WastedPrefill
from relplan.tables import format_table
from relplan.text.verdict import given_value, phase_list
from relplan.values import MISSING, clock, clock_span, fixed, human_duration, num, pct, short, sig

Renderer = Callable[[Any, RunContext], str]


def render_default(model: BaseModel, ctx: RunContext | None = None) -> str:
    """The text of an analysis without a renderer of its own: its title, a table of its
    `windows` (their numbers and strings), then its `finding`, when the model has them."""
    del ctx
    a = registry.by_model(type(model))
    lines = [a.title[0].upper() + a.title[1:]]
    windows = getattr(model, "windows", None)
    if isinstance(windows, list) and windows and isinstance(windows[0], BaseModel):
        cols = [
            k
            for k, v in windows[0]
            if isinstance(v, int | float | str | None) and k not in ("start_s", "end_s")
        ]
        rows = [[_cell(getattr(w, k)) for k in cols] for w in windows]
        lines.append(format_table([c.replace("_", " ") for c in cols], rows))
    finding = getattr(model, "finding", None)
    if isinstance(finding, str):
        lines.append(finding)
    return "\n".join(lines)


def _cell(v: object) -> str:
    if v is None:
        return MISSING
    if isinstance(v, int | float) and not isinstance(v, bool):
        return num(v, 0 if isinstance(v, int) else 3)
    return str(v)


def render_analysis(result: AnalyzeResult) -> str:
    ctx = result.context
    lines = [
        f"Run: t0 {clock(ctx.t0, frac=True)} ({ctx.t0_source}; epoch {fixed(ctx.t0, 3)}),"
        f" data until {clock(ctx.t_end)} ({short(ctx.s(ctx.t_end))} s),"
        f" window {clock_span(ctx.window_start, ctx.window_end)};"
        f" Ĉ {given_value(ctx.capacity, 'calls/s', ctx.capacity_source, 3)},"
        f" D {given_value(ctx.deadline_s, 's', ctx.deadline_source)},"
        f" W {given_value(ctx.delivery_window_s, 's', ctx.delivery_window_source)}",
        f"Phases ({ctx.phases_source}): "
        + phase_list(ctx)
        + (
            f"; overload phase {ctx.overload_phase} ({ctx.overload_rule})"
            if ctx.overload_phase
            else ""
        ),
    ]
    lines += [f"Note: {n}" for n in ctx.notes]
    checks = result.data_checks.model_dump()
    odd = [f"{k.replace('_', ' ')}: {num(v)}" for k, v in checks.items() if v]
    if odd:
        lines.append("Edge cases: " + "; ".join(odd))
    blocks = ["\n".join(lines)]
    if result.verdict is not None:
        from relplan.text.verdict import render_verdict

        blocks.insert(0, render_verdict(result.verdict, ctx.t0))
    for a in registry.analyses():
        model = getattr(result, a.name, None)
        if model is not None:
            render: Renderer = registry.resolve(a.render)
            blocks.append(render(model, ctx))
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


def render_amplification(a: Amplification, ctx: RunContext | None = None) -> str:
    del ctx  # the same signature for every analysis; this one needs only its model
    headers = [
        "window",
        "calls",
        "×Ĉ",
        "attempts",
        "retries",
        "att/call",
        "exec/call",
        "accepted",
        "×Ĉ",
        "completed",
        "×Ĉ",
        "for waiting",
        "×Ĉ",
        "retry share",
        "shed",
        "attached",
        "abort delay p50",
    ]
    rows = [
        [
            w.window,
            num(w.calls),
            num(w.calls_x_capacity, 2),
            num(w.attempts),
            num(w.retries),
            num(w.attempts_per_call, 2),
            num(w.executions_per_call, 2),
            num(w.executions_accepted),
            num(w.accepted_x_capacity, 2),
            num(w.executions_completed),
            num(w.completed_x_capacity, 2),
            num(w.completed_for_waiting),
            num(w.completed_for_waiting_x_capacity, 2),
            pct(w.retry_share),
            num(w.shed),
            num(w.attached),
            num(w.abort_delay_median_s, 3),
        ]
        for w in a.windows
    ]
    src = a.windows[0].accepted_source or "no source"
    text = (
        f"Load and retry amplification (executions from the {src})\n"
        + format_table(headers, rows)
        + f"\n{a.finding}"
    )
    if a.by_replica:
        heads = ["window", "replica", "accepted", "×Ĉ", "refused", "completed", "×Ĉ",
                 "for waiting", "for nobody"]  # fmt: skip
        reps = [
            [
                r.window,
                r.replica,
                num(r.executions_accepted),
                num(r.accepted_x_capacity, 2),
                num(r.executions_rejected),
                num(r.executions_completed),
                num(r.completed_x_capacity, 2),
                num(r.completed_for_waiting),
                num(r.completed_for_nobody),
            ]
            for r in a.by_replica
        ]
        text += "\nPer replica (engine trace):\n" + format_table(heads, reps, left=(0, 1))
    return text


def render_delivery(d: Delivery, ctx: RunContext | None = None) -> str:
    del ctx  # the same signature for every analysis; this one needs only its model
    headers = ["window", "calls", "delivered", "on time", "open at end", "p50 s", "p99 s"]
    rows = [
        [
            w.window,
            num(w.calls),
            pct(w.delivered_share),
            pct(w.on_time_share),
            num(w.window_open_at_end),
            num(w.delivery_median_s, 1),
            num(w.delivery_p99_s, 1),
        ]
        for w in d.windows
    ]
    w, dd = ("unknown" if v is None else f"{num(v)} s" for v in (d.delivery_window_s, d.deadline_s))
    head = f"Delivery and recovery (W = {w}, D = {dd})"
    return head + "\n" + format_table(headers, rows) + f"\n{d.finding}"


def render_wasted_prefill(c: WastedPrefill, ctx: RunContext | None = None) -> str:
    del ctx  # the same signature for every analysis; this one needs only its model
    headers = [
        "window",
        "replica",
        "computed",
        "delivered",
        "for nobody",
        "finished",
        "aborted",
        "unfinished",
        "unknown",
        "in flight/aborted",
        "before 1st out",
        "recomputed",
    ]
    rows = [
        [
            w.window,
            w.replica or "all",
            num(w.computed_tokens),
            *(pct(w.share_by_fate[f]) for f in FATES),
            pct(w.inflight_share_of_aborted),
            pct(w.before_first_output_share),
            pct(w.recomputed_share),
        ]
        for w in c.windows
    ]
    return (
        "Wasted prefill: computed prompt tokens by fate of their execution (engine trace)\n"
        + format_table(headers, rows, left=(0, 1))
        + f"\n{c.finding}"
    )


def render_counters(c: Counters, ctx: RunContext | None = None) -> str:
    del ctx  # the same signature for every analysis; this one needs only its model
    headers = [
        "window",
        "replica",
        "prompt rise",
        "query rise",
        "shortfall",
        "resets",
        "trace shortfall",
        "trace prefilled",
        "counter/prefilled",
    ]
    rows = [
        [
            w.window,
            w.replica or "all",
            num(w.prompt_rise),
            num(w.query_rise),
            pct(w.shortfall),
            num(w.resets),
            pct(w.truth_shortfall),
            num(w.trace_computed_tokens),
            pct(w.counter_share_of_computed),
        ]
        for w in c.windows
    ]
    head = f"Counters: {c.prompt_metric} vs {c.query_metric}"
    return head + "\n" + format_table(headers, rows, left=(0, 1)) + f"\n{c.finding}"


def render_littles_law(e: LittlesLaw, ctx: RunContext | None = None) -> str:
    del ctx  # the same signature for every analysis; this one needs only its model
    headers = [
        "window",
        "replica",
        "L",
        "λ /s",
        "Wq s",
        "L/(λ·Wq)",
        "L/(λ·D)",
        "open at T",
        "L metrics",
    ]
    rows = [
        [
            w.window,
            w.replica or "all",
            num(w.waiting_l, 2),
            num(w.lambda_per_s, 3),
            num(w.wq_s, 1),
            num(w.consistency, 2),
            num(w.deadline_saturation, 2),
            num(w.open_at_end),
            num(w.waiting_l_metrics, 2),
        ]
        for w in e.windows
    ]
    return (
        f"Little's law on the waiting queue ({e.source})\n"
        + format_table(headers, rows, left=(0, 1))
        + f"\n{e.finding}"
    )


def render_retry_timing(f: RetryTiming, ctx: RunContext | None = None) -> str:
    del ctx  # the same signature for every analysis; this one needs only its model
    headers = [
        "window",
        "retries",
        "with exec",
        "after abort",
        "never sched",
        "gap p10",
        "gap p50",
        "gap p90",
        "slack p10",
        "slack p50",
        "slack p90",
        "slack < 0",
    ]
    rows = [
        [
            w.window,
            num(w.retries),  # every retry of the attempts table, as amplification counts them
            num(w.retries_with_execution),
            num(w.retries_after_abort),
            num(w.never_scheduled),
            num(w.gap_p10_s, 1),
            num(w.gap_median_s, 1),
            num(w.gap_p90_s, 1),
            num(w.slack_p10_s, 1),
            num(w.slack_median_s, 1),
            num(w.slack_p90_s, 1),
            num(w.slack_negative),
        ]
        for w in f.windows
    ]
    return "Retry timing (seconds)\n" + format_table(headers, rows) + f"\n{f.finding}"


def render_capacity(g: CapacityCalibration, ctx: RunContext | None = None) -> str:
    del ctx  # the same signature for every analysis; this one needs only its model
    headers = ["stage", "offered /s", "completed /s", "waiting slope /s", "waiting at end", "grows"]
    rows = [
        [
            s.stage,
            num(s.offered_per_s, 3),
            num(s.completed_per_s, 3),
            num(s.waiting_slope_per_s, 3),
            num(s.waiting_at_end),
            "-" if s.grows is None else ("yes" if s.grows else "no"),
        ]
        for s in g.stages
    ]
    return (
        f"Capacity calibration (waiting from the {g.waiting_source})\n"
        + format_table(headers, rows)
        + f"\n{g.finding}"
    )


def _fmt_value(v: float | None) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    return sig(v, 3)


def render_health(result: HealthResult, ctx: RunContext | None = None) -> str:
    """Firing intervals as an aligned table (wall-clock times, in `--tz`'s zone)."""
    del ctx
    head = (
        f"Engine health: {result.evaluations} evaluations every {human_duration(result.step_s)}"
        f" over {clock_span(result.start, result.end)};"
        f" replica label: {result.replica_label or '(none)'}"
    )
    rows: list[list[str]] = []
    for s in result.signals:
        if not s.evaluated:
            rows.append([s.signal, "-", "-", "-", "-", f"skipped: {s.skipped_reason}"])
            continue
        if not s.intervals:
            rows.append([s.signal, "-", "-", "-", "-", "never fired"])
        for i in s.intervals:
            who = (
                i.replica
                if i.replica is not None
                else ",".join(f"{k}={v}" for k, v in i.labels.items()) or "-"
            )
            rows.append(
                [
                    s.signal,
                    who,
                    clock(i.start),
                    clock(i.end) + (" (ongoing)" if i.ongoing else ""),
                    _fmt_value(i.peak_value),
                    f"{num(i.end - i.start)} s firing",
                ]
            )
    table = format_table(
        ["signal", "replica", "from", "to", "peak", "note"], rows, left=(0, 1, 2, 3, 5)
    )
    fired = sorted({s.signal for s in result.signals if s.intervals})
    finding = (
        "No engine health signal fired."
        if not fired
        else f"Fired: {', '.join(fired)} (intervals are [from, to))."
    )
    return "\n".join([head, table, finding])
