"""The summary `relplan simulate` prints: `relplan analyze` run on the files the run WROTE.

The four files are ingested into an in-memory workspace by `relplan ingest`'s readers and
`relplan.analyses.analyze` runs on it with its defaults, so every figure has one
implementation, the analyses' (docs/analyses.md: amplification, delivery, wasted_prefill, counters, littles_law), and the summary of a simulated run is what
an analysis of its files says. This module only picks the figures and renames them:

- `capacity_calls_per_s`, `deadline_s`, `delivery_window_s`: Ĉ, D, W (from run.json);
- `phases.<name>`: `calls`, `delivered_share`, `on_time_share` (delivery, B),
  `accepted_rate_x_capacity`, `completed_rate_x_capacity`, `retry_share_of_executions`
  (amplification, A), `l_waiting`, `consistency`, `deadline_saturation` (littles_law, E) and
  `retry_gap_median_s`, `retry_slack_median_s` (retry_timing), per phase;
- `steady`: the same figures for the steady-state window (docs/analyses.md, conventions):
  from the overload's end plus D to the last phase's end (null without an overload phase);
- `recovered_after_pulse_s`, `drained_after_pulse_s` (relplan.analyses.drain: the backlog
  back at its pre-pulse level), `verdict` (B's recovery), and `after_overload` with the figures
  behind the verdict;
- `retry_share_of_executions` (A, whole run);
- `prefill.computed_tokens`, `aborted_share`, `in_flight_share_of_aborted`,
  `before_first_token_share` (C, whole run);
- `littles_law` for the hold phase (E): `l_waiting`, `lambda_per_s`, `wq_s`, `consistency`,
  `deadline_saturation`;
- `counter_shortfall_hold` (D): 1 - rise(prompt tokens) / rise(prefix-cache queries) over the
  hold phase, all replicas summed.
The hold phase is the phase named `hold`, else the first phase after the overload.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import duckdb
from pydantic import Field, ValidationError

from relplan import sql
from relplan.errors import InputError
from relplan.models import RunManifest, StrictModel
from relplan.sim.pool import duckdb_config
from relplan.wording import Words

if TYPE_CHECKING:
    from relplan.analyses.context import PhaseSpan

# The summary's text, worded by relplan/text/sim.py.
Said = Literal["summary"]


_say: Words[Said] = Words("relplan.text.sim")


class PhaseFigures(StrictModel):
    start_s: float
    end_s: float
    calls: int
    delivered_share: float | None
    on_time_share: float | None
    accepted_rate_x_capacity: float | None
    completed_rate_x_capacity: float | None
    retry_share_of_executions: float | None = None
    l_waiting: float | None = None
    consistency: float | None = None
    deadline_saturation: float | None = None
    retry_gap_median_s: float | None = None
    retry_slack_median_s: float | None = None


class PrefillFigures(StrictModel):
    computed_tokens: int
    aborted_share: float | None
    in_flight_share_of_aborted: float | None
    before_first_token_share: float | None


class HoldQueueFigures(StrictModel):
    """Little's law on the hold phase, as `relplan analyze` computes it (littles_law)."""

    phase: str | None
    l_waiting: float | None
    lambda_per_s: float | None
    wq_s: float | None
    consistency: float | None
    deadline_saturation: float | None


class AfterOverload(StrictModel):
    from_s: float | None
    to_s: float
    arrival_rate_x_capacity: float | None
    accepted_rate_x_capacity: float | None
    bins_with_calls: int


class SimSummary(StrictModel):
    name: str
    seed: int | None = None
    capacity_calls_per_s: float | None
    deadline_s: float | None
    delivery_window_s: float | None
    phases: dict[str, PhaseFigures]
    steady: PhaseFigures | None = None
    recovered_after_pulse_s: float | None
    drained_after_pulse_s: float | None = Field(
        default=None,
        description="seconds from the end of the overload to the engine's backlog back at its"
        " pre-pulse level (relplan.analyses.drain)",
    )
    drained_only_after_load_stopped: bool = Field(
        default=False, description="the backlog drained only after the last phase ended"
    )
    verdict: str = Field(
        description="recovered | metastable | draining | overloaded | insufficient data | "
        "no overload (a trace whose named overload phase arrives below C^)"
    )
    after_overload: AfterOverload
    retry_share_of_executions: float | None
    prefill: PrefillFigures
    littles_law: HoldQueueFigures
    counter_shortfall_hold: float | None


RUN_FILES = ("proxy.parquet", "engine.parquet", "metrics.om.txt", "run.json")


def load_run(con: duckdb.DuckDBPyConnection, out: Path) -> RunManifest:
    """Ingest a run's four files into the (schema-initialised) workspace `con` with the same
    readers `relplan ingest` uses, so a simulated run takes the road a real incident takes."""
    from relplan.ingest.base import IngestOptions
    from relplan.ingest.driver import ingest_files

    for name in RUN_FILES:
        if not (out / name).is_file():
            raise InputError(f"missing {name} of a simulated run", str(out))
    ingest_files(con, [out / name for name in RUN_FILES], IngestOptions())
    try:
        return RunManifest.model_validate_json((out / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValidationError) as exc:
        raise InputError(f"cannot read run manifest: {exc}", str(out / "run.json")) from None


def _row(rows: list[Any], window: str) -> Any | None:
    """The all-replicas row of a window (rows without a replica field count as such)."""
    for r in rows:
        if r.window == window and getattr(r, "replica", None) is None:
            return r
    return None


def summarize(out: Path, seed: int | None = None) -> SimSummary:
    """Figures of a run from the four files in `out`, computed by `relplan analyze`."""
    from relplan.analyses import AnalyzeOptions, analyze

    con = duckdb.connect(config=duckdb_config())
    try:
        sql.run(con, "schema")
        man = load_run(con, out)
        res = analyze(
            con,
            AnalyzeOptions(
                only=[
                    "amplification",
                    "delivery",
                    "wasted_prefill",
                    "counters",
                    "littles_law",
                    "retry_timing",
                ]
            ),
        )
        from relplan.analyses import drain

        dr = drain.measure(con, res.context)
        drained, stopped = dr.drained_after_s, dr.after_load_ended
    finally:
        con.close()
    ctx = res.context
    amp = res.amplification.windows if res.amplification is not None else []
    dlv = res.delivery
    little = res.littles_law.windows if res.littles_law is not None else []
    timing = res.retry_timing.windows if res.retry_timing is not None else []

    def figures(p: PhaseSpan) -> PhaseFigures:
        d = _row(dlv.windows, p.name) if dlv is not None else None
        a = _row(amp, p.name)
        lw = _row(little, p.name)
        rt = _row(timing, p.name)
        return PhaseFigures(
            start_s=p.start_s,
            end_s=p.end_s,
            calls=d.calls if d is not None else (a.calls if a is not None else 0),
            delivered_share=None if d is None else d.delivered_share,
            on_time_share=None if d is None else d.on_time_share,
            accepted_rate_x_capacity=None if a is None else a.accepted_x_capacity,
            completed_rate_x_capacity=None if a is None else a.completed_x_capacity,
            retry_share_of_executions=None if a is None else a.retry_share,
            l_waiting=None if lw is None else lw.waiting_l,
            consistency=None if lw is None else lw.consistency,
            deadline_saturation=None if lw is None else lw.deadline_saturation,
            retry_gap_median_s=None if rt is None else rt.gap_median_s,
            retry_slack_median_s=None if rt is None else rt.slack_median_s,
        )

    phases = {p.name: figures(p) for p in ctx.phases}
    steady = None if ctx.steady is None else figures(ctx.steady)
    rec = dlv.recovery if dlv is not None else None
    after = AfterOverload(
        from_s=None if rec is None else rec.overload_end_s,
        to_s=ctx.t_end - ctx.t0,
        arrival_rate_x_capacity=None if rec is None else rec.calls_x_capacity_after,
        accepted_rate_x_capacity=None if rec is None else rec.accepted_x_capacity_after,
        bins_with_calls=0 if rec is None else rec.bins_with_enough_calls,
    )
    verdict = "insufficient data" if rec is None else rec.verdict
    if man.meta.get("trace_overload") is False:
        # a trace whose named overload phase does not overload: no verdict from names alone
        rec, verdict = None, "no overload"

    run_amp = _row(amp, "run")
    wp = _row(res.wasted_prefill.windows, "run") if res.wasted_prefill is not None else None
    prefill = PrefillFigures(
        computed_tokens=0 if wp is None else wp.computed_tokens,
        aborted_share=None if wp is None else wp.aborted_share,
        in_flight_share_of_aborted=None if wp is None else wp.inflight_share_of_aborted,
        before_first_token_share=None if wp is None else wp.before_first_output_share,
    )

    hold = next((p for p in ctx.phases if p.name == "hold"), None)
    if hold is None and rec is not None:
        later = [p for p in ctx.phases if p.start_s >= rec.overload_end_s]
        hold = later[0] if later else None
    lw = None
    if hold is not None and res.littles_law is not None:
        lw = _row(res.littles_law.windows, hold.name)
    littles = HoldQueueFigures(
        phase=None if hold is None else hold.name,
        l_waiting=None if lw is None else lw.waiting_l,
        lambda_per_s=None if lw is None else lw.lambda_per_s,
        wq_s=None if lw is None else lw.wq_s,
        consistency=None if lw is None else lw.consistency,
        deadline_saturation=None if lw is None else lw.deadline_saturation,
    )
    cw = None
    if hold is not None and res.counters is not None:
        cw = _row(res.counters.windows, hold.name)

    return SimSummary(
        name=man.name,
        seed=seed if seed is not None else man.meta.get("seed"),
        capacity_calls_per_s=ctx.capacity,
        deadline_s=ctx.deadline_s,
        delivery_window_s=ctx.delivery_window_s,
        phases=phases,
        steady=steady,
        recovered_after_pulse_s=None if rec is None else rec.recovery_s,
        drained_after_pulse_s=drained,
        drained_only_after_load_stopped=stopped,
        verdict=verdict,
        after_overload=after,
        retry_share_of_executions=None if run_amp is None else run_amp.retry_share,
        prefill=prefill,
        littles_law=littles,
        counter_shortfall_hold=None if cw is None else cw.shortfall,
    )


def render_summary(s: SimSummary) -> str:
    """The one-screen human summary (relplan/text/sim.py words it)."""
    return _say("summary", summary=s)


def summary_json(s: SimSummary) -> str:
    return json.dumps(s.model_dump(mode="json"), indent=2)
