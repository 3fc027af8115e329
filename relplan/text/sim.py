"""The text `relplan simulate` prints: a run's summary, a calibration, an engine's step-cost fit,
and the notes those results carry (a calibration seed's, the step-cost fit's).

relplan.text never imports the simulator (docs/development.md, Layering rules), so the words
read the simulator's results by their shape: the `...Like` protocols below name the fields
they read of relplan/sim/summary.py's `SimSummary`, relplan/sim/calibrate.py's
`CalibrationResult` and relplan/sim/costfit.py's `EngineFit` (tests/test_text_sim.py checks
each model against its protocol). The simulator's modules name each sentence by a code with its
numbers (their `Said`) and reach this table by name through relplan/analyses/wording.py, as the
analyses do. Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from relplan.tables import format_table
from relplan.values import fixed, num, pct, short, sig

# --- the shapes read (the simulator's pydantic models have these fields) -------------------


class PhaseLike(Protocol):
    @property
    def start_s(self) -> float: ...
    @property
    def end_s(self) -> float: ...
    @property
    def calls(self) -> int: ...
    @property
    def delivered_share(self) -> float | None: ...
    @property
    def on_time_share(self) -> float | None: ...
    @property
    def accepted_rate_x_capacity(self) -> float | None: ...
    @property
    def completed_rate_x_capacity(self) -> float | None: ...


class AfterOverloadLike(Protocol):
    @property
    def arrival_rate_x_capacity(self) -> float | None: ...
    @property
    def accepted_rate_x_capacity(self) -> float | None: ...


class PrefillLike(Protocol):
    @property
    def aborted_share(self) -> float | None: ...
    @property
    def in_flight_share_of_aborted(self) -> float | None: ...
    @property
    def before_first_token_share(self) -> float | None: ...


class HoldQueueLike(Protocol):
    @property
    def deadline_saturation(self) -> float | None: ...


class SummaryLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def seed(self) -> int | None: ...
    @property
    def capacity_calls_per_s(self) -> float | None: ...
    @property
    def phases(self) -> Mapping[str, PhaseLike]: ...
    @property
    def steady(self) -> PhaseLike | None: ...
    @property
    def recovered_after_pulse_s(self) -> float | None: ...
    @property
    def drained_after_pulse_s(self) -> float | None: ...
    @property
    def drained_only_after_load_stopped(self) -> bool: ...
    @property
    def verdict(self) -> str: ...
    @property
    def after_overload(self) -> AfterOverloadLike: ...
    @property
    def retry_share_of_executions(self) -> float | None: ...
    @property
    def prefill(self) -> PrefillLike: ...
    @property
    def littles_law(self) -> HoldQueueLike: ...
    @property
    def counter_shortfall_hold(self) -> float | None: ...


class StageLike(Protocol):
    @property
    def waiting_slope_per_s(self) -> float: ...


class SeedLike(Protocol):
    @property
    def seed(self) -> int: ...
    @property
    def capacity_calls_per_s(self) -> float | None: ...
    @property
    def saturated_completion_calls_per_s(self) -> float | None: ...
    @property
    def note(self) -> str | None: ...
    @property
    def stages(self) -> Sequence[StageLike]: ...


class CalibrationLike(Protocol):
    @property
    def profile(self) -> str: ...
    @property
    def config(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def capacity_calls_per_s(self) -> float | None: ...
    @property
    def saturated_completion_calls_per_s(self) -> float | None: ...
    @property
    def seeds(self) -> Sequence[SeedLike]: ...
    @property
    def start_calls_per_s(self) -> float: ...
    @property
    def step_calls_per_s(self) -> float: ...
    @property
    def stage_seconds(self) -> float: ...
    @property
    def written_to(self) -> str | None: ...


class CoefficientLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def value_ms(self) -> float | None: ...
    @property
    def constrained(self) -> bool: ...
    @property
    def note(self) -> str | None: ...


class EngineFitLike(Protocol):
    @property
    def source(self) -> str: ...
    @property
    def steps_used(self) -> int: ...
    @property
    def coefficients(self) -> Sequence[CoefficientLike]: ...
    @property
    def median_abs_error_pct(self) -> float | None: ...
    @property
    def p90_abs_error_pct(self) -> float | None: ...
    @property
    def max_batch_seen(self) -> int | None: ...
    @property
    def max_tokens_seen(self) -> int | None: ...
    @property
    def notes(self) -> Sequence[str]: ...


# --- a run's summary (relplan/sim/summary.py) ----------------------------------------------


def summary(summary: SummaryLike) -> str:
    """The one-screen human summary of a simulated run."""
    s = summary
    rows = []
    windows = list(s.phases.items()) + ([("steady", s.steady)] if s.steady is not None else [])
    for name, p in windows:
        rows.append(
            [
                name,
                f"{short(p.start_s)}-{short(p.end_s)} s",
                num(p.calls),
                pct(p.delivered_share),
                pct(p.on_time_share),
                num(p.accepted_rate_x_capacity, 2),
                num(p.completed_rate_x_capacity, 2),
            ]
        )
    table = format_table(
        ["phase", "window", "calls", "delivered", "on time", "accepted xC", "completed xC"],
        rows,
        left=(0, 1),
    )
    rec = (
        f"recovered {short(s.recovered_after_pulse_s)} s after the overload"
        if s.recovered_after_pulse_s is not None
        else "not recovered"
    )
    rec += (
        f", drained after {fixed(s.drained_after_pulse_s, 0)} s"
        + (" (only once the load stopped)" if s.drained_only_after_load_stopped else "")
        if s.drained_after_pulse_s is not None
        else ", not drained"
    )
    ao = s.after_overload
    lines = [
        f"{s.name} (seed {s.seed}): capacity C^ = {num(s.capacity_calls_per_s, 2)} calls/s",
        "",
        table,
        "",
        f"verdict: {s.verdict} ({rec}; after the overload calls arrived at "
        f"{num(ao.arrival_rate_x_capacity, 2)} x C^, executions accepted at "
        f"{num(ao.accepted_rate_x_capacity, 2)} x C^)",
        f"executions created by retries: {pct(s.retry_share_of_executions)}",
        f"prefill: aborted {pct(s.prefill.aborted_share)} of computed prompt tokens; "
        f"{pct(s.prefill.in_flight_share_of_aborted)} of that in flight at the abort; "
        f"{pct(s.prefill.before_first_token_share)} aborted before the first token",
        f"hold: deadline saturation L/(lambda D) = {num(s.littles_law.deadline_saturation, 2)}; "
        f"prompt-token counter shortfall = {pct(s.counter_shortfall_hold)}",
    ]
    return "\n".join(lines)


# --- a calibration (relplan/sim/calibrate.py) ----------------------------------------------


def sweep(rows: Sequence[Mapping[str, Any]], keys: Sequence[str]) -> str:
    """`relplan simulate sweep`'s table: one summary row per run (relplan/sim/sweep.py's
    frame as dicts), the varied keys as columns after run and seed."""
    headers = ["run", "seed", *keys, "verdict", "recovered s", "hold on time", "retry share"]
    cells = [
        [
            r["run"],
            str(r["seed"]),
            *[str(r[k]) for k in keys],
            r["verdict"],
            num(r["recovered_after_pulse_s"]),
            pct(r.get("hold_on_time_share")),
            pct(r["retry_share_of_executions"]),
        ]
        for r in rows
    ]
    return format_table(headers, cells, left=tuple(range(2 + len(keys) + 1)))


def config_label(scenario: str, step_tokens: int, seqs: int, blocks: int) -> str:
    """The calibrated configuration in short: the scenario's engine settings."""
    return f"{scenario}: {step_tokens} tokens/step, {seqs} seqs, {blocks} blocks"


def first_stage_grows(rate: float, lower: float) -> str:
    return (
        f"the first stage ({fixed(rate, 2)} calls/s) already grows: C^ is below the "
        f"ramp; try --start {fixed(lower, 2)}"
    )


def no_stage_grew(top: float, next_start: float) -> str:
    return f"no stage grew up to {fixed(top, 2)} calls/s; try --start {fixed(next_start, 2)}"


def calibration(result: CalibrationLike) -> str:
    r = result
    rows = []
    for sr in r.seeds:
        last = sr.stages[-1] if sr.stages else None
        rows.append(
            [
                str(sr.seed),
                num(sr.capacity_calls_per_s, 2),
                num(sr.saturated_completion_calls_per_s, 3),
                str(len(sr.stages)),
                "-" if last is None else fixed(last.waiting_slope_per_s, 3),
                sr.note or "",
            ]
        )
    table = format_table(
        ["seed", "C^ calls/s", "saturated completions/s", "stages", "slope at stop", "note"],
        rows,
        left=(5,),
    )
    lines = [
        f"profile {r.profile}, configuration {r.config} ({r.label})",
        f"ramp: {short(r.stage_seconds)} s stages from {short(r.start_calls_per_s)} calls/s, "
        f"+{short(r.step_calls_per_s)} per stage; patient clients",
        "",
        table,
        "",
        f"C^ (median over seeds) = {num(r.capacity_calls_per_s, 2)} calls/s; saturated "
        f"completion rate = {num(r.saturated_completion_calls_per_s, 3)} calls/s",
    ]
    if r.capacity_calls_per_s is None:
        hint = next((s.note for s in r.seeds if s.note), None)
        lines.append(f"no C^ found{': ' + hint if hint else ''}")
    if r.written_to:
        lines.append(f"stored in {r.written_to}")
    return "\n".join(lines)


# --- the engine's step-cost fit (relplan/sim/costfit.py) -----------------------------------


def iteration_durations(source: str) -> str:
    return (
        f"durations are the iterations' own elapsed times ({source}); b is per context "
        "(prefill) token computed, cached prompt tokens excluded; bd per generation request"
        + (
            " (the trace's decode tokens: one per decoding request without speculative decoding)"
            if "engine trace" in source
            else ""
        )
    )


def stats_durations(max_gap_s: float) -> str:
    return (
        "no step records: durations are the gaps between scheduler-stats records "
        f"(<= {short(max_gap_s)} s), tokens are batched tokens (prefill and decode together)"
    )


def too_few_steps(steps: int, needed: int) -> str:
    return f"{steps} usable steps; at least {needed} are needed for a fit"


def kv_unknown() -> str:
    return (
        "KV capacity: not constrained (no vllm:cache_config_info; a trace alone would "
        "need the contexts at each preemption)"
    )


def kv_capacity(tokens: int, blocks: int, block_size: int) -> str:
    return f"KV capacity {num(tokens)} tokens: {blocks} blocks of {block_size} (vllm:cache_config_info)"


def batch_not_held(held: int, most: int) -> str:
    return (
        f"batch limit: at most {held} ran while work waited, {most} at "
        "another time: not held at a limit, not constrained"
    )


def batch_limit(limit: int, scrapes: int) -> str:
    return (
        f"batch limit {limit}: the most requests running while others waited "
        f"(vllm:num_requests_running over {scrapes} scrapes with waiting > 0)"
    )


def coefficient_constant() -> str:
    return "its column does not vary across the steps"


def coefficient_collinear() -> str:
    return "columns are collinear: the split is arbitrary"


def coefficient_negative() -> str:
    return "negative: the data cannot separate it from the other terms"


def engine_fit(fit: EngineFitLike) -> str:
    """The fit as text for the terminal."""
    lines = [f"Engine step-cost fit from {fit.source} ({num(fit.steps_used)} steps)"]
    for c in fit.coefficients:
        v = "not constrained" if c.value_ms is None else f"{sig(c.value_ms, 6)} ms"
        tail = "" if c.constrained else " (not constrained" + (f": {c.note})" if c.note else ")")
        lines.append(f"  {c.name.ljust(22)} {v}{tail if c.value_ms is not None else ''}")
    if fit.median_abs_error_pct is not None and fit.p90_abs_error_pct is not None:
        lines.append(
            f"  error: median {fixed(fit.median_abs_error_pct, 1)} %,"
            f" p90 {fixed(fit.p90_abs_error_pct, 1)} %"
        )
    lines.append(f"  largest batch seen: {fit.max_batch_seen} (lower bound of --max-num-seqs)")
    lines.append(
        f"  most tokens in a step: {fit.max_tokens_seen} (lower bound of --max-num-batched-tokens)"
    )
    lines.extend(f"  note: {n}" for n in fit.notes)
    return "\n".join(lines)


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        summary,
        config_label,
        first_stage_grows,
        no_stage_grew,
        calibration,
        iteration_durations,
        stats_durations,
        too_few_steps,
        kv_unknown,
        kv_capacity,
        batch_not_held,
        batch_limit,
        engine_fit,
        coefficient_constant,
        coefficient_collinear,
        coefficient_negative,
    )
}
