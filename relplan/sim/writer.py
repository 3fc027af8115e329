"""Writes a finished simulation in the canonical formats (docs/formats.md; docs/simulate.md, Files written).

- `proxy.parquet`: one row per attempt, in the order attempts were sent;
- `engine.parquet`: ONE file with a `type` column: `event` rows (time order), then `step` rows
  (one per (step, execution), ordered by step then execution), then `stats` rows (one per
  step); the union of their columns, null where a column does not apply;
- `metrics.om.txt`: OpenMetrics text (metrics.py);
- `run.json`: the run manifest (RunManifest) with provenance under `meta`.
All times are epoch seconds: the simulation's seconds plus the run's fixed t0 (T0 below,
2025-11-30T00:00:00Z). No wall-clock time, host name or random value goes into any file, so
the same scenario and seed give the same bytes.

Decoding executions are kept by the engine as spans (first step, end step); they are expanded
here into per-step rows with polars, vectorised, which is what keeps a reference run's
million (step, execution) records cheap.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import polars as pl

from relplan import __version__
from relplan.errors import InputError, check_utf8_path
from relplan.ingest.columns import ENGINE_TRACE, PROXY_LOG
from relplan.models import Phase, RunManifest
from relplan.sim.execution import EVENT_NAMES
from relplan.sim.metrics import render_openmetrics
from relplan.sim.scenario import PhaseSpec
from relplan.sim.simulator import Simulation

T0 = 1764460800.0  # 2025-11-30T00:00:00Z

FILES = ("proxy.parquet", "engine.parquet", "metrics.om.txt", "run.json")

_POLARS: dict[str, Any] = {
    "string": pl.String,
    "integer": pl.Int64,
    "number": pl.Float64,
    "time": pl.Float64,
    "boolean": pl.Boolean,
}
_PROXY_SCHEMA: dict[str, Any] = {c.name: _POLARS[c.kind] for c in PROXY_LOG}
_ENGINE_SCHEMA: dict[str, Any] = {c.name: _POLARS[c.kind] for c in ENGINE_TRACE}


def proxy_frame(sim: Simulation, t0: float = T0) -> pl.DataFrame:
    atts = sim.clients.attempts
    t_stop = sim.now
    model = sim.profile.model_name
    rows_t_end = [a.t_end if a.t_end is not None else t_stop for a in atts]
    outcome = [a.outcome if a.outcome is not None else "client_gone" for a in atts]
    return pl.DataFrame(
        {
            "call_id": [a.call.call_id for a in atts],
            "attempt": [a.number for a in atts],
            "t_planned": [a.call.t_planned + t0 for a in atts],
            "t_sent": [a.t_sent + t0 for a in atts],
            "t_end": [t + t0 for t in rows_t_end],
            "outcome": outcome,
            "execution_id": [None if a.ex is None else a.ex.execution_id for a in atts],
            "attached": [a.attached for a in atts],
            "t_cancel": [None if a.t_cancel is None else a.t_cancel + t0 for a in atts],
            "status": [a.status for a in atts],
            "model": [model] * len(atts),
            "replica": [None] * len(atts),
            "prompt_tokens": [a.call.prompt_tokens for a in atts],
            "max_tokens": [a.call.max_tokens for a in atts],
        },
        schema=_PROXY_SCHEMA,
    )


def event_frame(sim: Simulation, t0: float = T0) -> pl.DataFrame:
    """The engine trace's `event` rows alone (time order), in their own columns: what
    `engine_frame` puts first, and all that the what-if replay measures of the engine."""
    e = sim.engine
    execution_ids = pl.Series(
        "execution_id", [x.execution_id for x in sim.executions], dtype=pl.String
    )
    names = pl.Series("names", list(EVENT_NAMES), dtype=pl.String)
    recorded = pl.DataFrame(
        {
            "t": e.event_t,
            "execution": e.event_execution,
            "kind": e.event_kind,
            "prompt_tokens": e.event_prompt_tokens,
        },
        schema={
            "t": pl.Float64,
            "execution": pl.Int64,
            "kind": pl.Int64,
            "prompt_tokens": pl.Int64,
        },
    )
    # How each execution ended, for its `finished` event (and max_tokens for `arrived`): the
    # simulator knows its output length, max_tokens and preemptions; a finish at max_tokens
    # is vLLM's `length`, before it `stop`. An `aborted` event carries finish_reason `abort`
    # and its preemptions (its generated count is not kept per execution); cached_tokens is
    # not written (the simulator keeps the cached prompt of the latest admission only).
    ex_output = pl.Series([x.output_tokens for x in sim.executions], dtype=pl.Int64)
    ex_max = pl.Series([x.max_tokens for x in sim.executions], dtype=pl.Int64)
    ex_preempted = pl.Series([x.preemptions for x in sim.executions], dtype=pl.Int64)
    return recorded.select(
        pl.lit("event").alias("type"),
        (pl.col("t") + t0).alias("t"),
        execution_ids.gather(recorded["execution"]).alias("execution_id"),
        names.gather(recorded["kind"]).alias("event"),
        pl.col("prompt_tokens"),
        ex_output.gather(recorded["execution"]).alias("_output"),
        ex_max.gather(recorded["execution"]).alias("_max"),
        ex_preempted.gather(recorded["execution"]).alias("_preempted"),
    ).select(
        "type",
        "t",
        "execution_id",
        "event",
        "prompt_tokens",
        pl.when(pl.col("event") == "finished")
        .then(
            pl.when(pl.col("_output") >= pl.col("_max"))
            .then(pl.lit("length"))
            .otherwise(pl.lit("stop"))
        )
        .when(pl.col("event") == "aborted")
        .then(pl.lit("abort"))
        .alias("finish_reason"),
        pl.when(pl.col("event") == "finished").then(pl.col("_output")).alias("output_tokens"),
        pl.when(pl.col("event").is_in(["finished", "aborted"]))
        .then(pl.col("_preempted"))
        .alias("preemptions"),
        pl.when(pl.col("event") == "arrived").then(pl.col("_max")).alias("max_tokens"),
    )


def engine_frame(sim: Simulation, t0: float = T0) -> pl.DataFrame:
    e = sim.engine
    if not e.record_steps:
        raise ValueError("the simulation kept no step records (record_steps=False)")
    execution_ids = pl.Series(
        "execution_id", [x.execution_id for x in sim.executions], dtype=pl.String
    )
    events = event_frame(sim, t0)

    t_issue = pl.Series("t_issue", e.step_t_issue, dtype=pl.Float64) + t0
    t_done = pl.Series("t_done", e.step_t_done, dtype=pl.Float64) + t0
    prefills = pl.DataFrame(
        {
            "step": e.prefill_step,
            "execution": e.prefill_execution,
            "prompt_computed": e.prefill_computed,
            "prompt_cached": e.prefill_cached,
            "decode_tokens": e.prefill_decode_tokens,
        },
        schema={
            "step": pl.Int64,
            "execution": pl.Int64,
            "prompt_computed": pl.Int64,
            "prompt_cached": pl.Int64,
            "decode_tokens": pl.Int64,
        },
    )
    spans = pl.DataFrame(
        {
            "execution": e.span_execution,
            "first_step": e.span_first_step,
            "end_step": e.span_end_step,
        },
        schema={"execution": pl.Int64, "first_step": pl.Int64, "end_step": pl.Int64},
    )
    decodes = (
        spans.select(
            pl.col("execution"),
            pl.int_ranges("first_step", "end_step", dtype=pl.Int64).alias("step"),
        )
        .explode("step")
        .select(
            pl.col("step"),
            pl.col("execution"),
            pl.lit(0, dtype=pl.Int64).alias("prompt_computed"),
            pl.lit(0, dtype=pl.Int64).alias("prompt_cached"),
            pl.lit(1, dtype=pl.Int64).alias("decode_tokens"),
        )
    )
    pairs = pl.concat([prefills, decodes]).sort(["step", "execution"])
    steps = pairs.select(
        pl.lit("step").alias("type"),
        execution_ids.gather(pairs["execution"]).alias("execution_id"),
        pl.col("step"),
        t_issue.gather(pairs["step"]).alias("t_issue"),
        t_done.gather(pairs["step"]).alias("t_done"),
        pl.col("prompt_computed"),
        pl.col("prompt_cached"),
        pl.col("decode_tokens"),
    )
    n = len(e.step_t_issue)

    def per_step(totals: list[int]) -> pl.Series:
        """Each step's share of a counter from its totals after each step."""
        s = pl.Series(totals, dtype=pl.Int64)
        return s.diff().fill_null(s.head(1).item() if n else 0)

    stats = pl.DataFrame(
        {
            "type": ["stats"] * n,
            "step": range(n),
            "t_issue": t_issue,
            "num_running": e.step_running,
            "num_waiting": e.step_waiting,
            "num_batched_tokens": e.step_batched_tokens,
            "kv_usage": e.step_kv_usage,
            # the split and the step's own cost (its GPU time, without waiting for the GPU)
            "prompt_computed": e.step_prefill_tokens,
            "decode_tokens": e.step_decodes,
            "elapsed_ms": pl.Series(e.step_cost_s, dtype=pl.Float64) * 1000.0,
            "num_preempted": per_step(e.step_preemptions_total),
            "prefix_queries": per_step(e.step_prefix_queries_total),
            "prefix_hits": per_step(e.step_prefix_hits_total),
        },
        schema={
            "type": pl.String,
            "step": pl.Int64,
            "t_issue": pl.Float64,
            "num_running": pl.Int64,
            "num_waiting": pl.Int64,
            "num_batched_tokens": pl.Int64,
            "kv_usage": pl.Float64,
            "prompt_computed": pl.Int64,
            "decode_tokens": pl.Int64,
            "elapsed_ms": pl.Float64,
            "num_preempted": pl.Int64,
            "prefix_queries": pl.Int64,
            "prefix_hits": pl.Int64,
        },
    )
    full = [
        df.select(
            [
                pl.col(c).cast(dt) if c in df.columns else pl.lit(None, dtype=dt).alias(c)
                for c, dt in _ENGINE_SCHEMA.items()
            ]
        )
        for df in (events, steps, stats)
    ]
    return pl.concat(full, how="vertical")


def trace_overload(sim: Simulation) -> bool | None:
    """For a trace workload, whether its overload phase really overloads: the calls planned
    in it arrive faster than C^ (False without a C^). None for synthetic workloads, whose
    phases state their rates."""
    scn = sim.scenario
    if scn.workload.trace is None or scn.overload_phase is None:
        return None
    a, b = next((a, b) for n, a, b in sim.phases if n == scn.overload_phase)
    n = sum(1 for c in sim.calls if a <= c.t_planned < b)
    return sim.capacity is not None and n / (b - a) > sim.capacity


def manifest(sim: Simulation, meta: dict[str, Any], t0: float = T0) -> RunManifest:
    scn = sim.scenario
    deadline = scn.client.deadline_s
    overload = trace_overload(sim)
    return RunManifest(
        name=scn.name,
        capacity_calls_per_s=sim.capacity,
        deadline_s=None if deadline == float("inf") else deadline,
        delivery_window_s=scn.client.delivery_window_s,
        overload_phase=None if overload is False else scn.overload_phase,
        phases=[Phase(name=n, start=a, end=b) for n, a, b in sim.phases],
        t0=t0,
        notes=scn.description or None,
        meta={
            "generator": f"relplan {__version__} simulate",
            "seed": sim.seed,
            "profile": sim.profile.name,
            "speed": sim.profile.speed,
            "calls": len(sim.calls),
            "attempts": len(sim.clients.attempts),
            "executions": len(sim.executions),
            "steps": sim.engine.next_step,
            "end_s": sim.now,
            "trace_overload": overload,
            "phase_rates_calls_per_s": {
                p.name: _rate(p, sim.capacity) for p in scn.workload.phases
            },
            **meta,
        },
    )


def _rate(p: PhaseSpec, capacity: float | None) -> float | None:
    """A phase's offered rate in calls/s (null for a multiple of an unknown capacity)."""
    if p.rate_per_s is not None:
        return p.rate_per_s
    if capacity is None or p.rate_x is None:
        return None
    return p.rate_x * capacity


def write_outputs(sim: Simulation, out: Path, meta: dict[str, Any], t0: float = T0) -> list[Path]:
    """Write the four files into `out` (created if needed); returns their paths."""
    check_out_dir(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f for f in FILES]
    tmp = [p.with_name(p.name + ".tmp") for p in paths]
    try:
        proxy_frame(sim, t0).write_parquet(tmp[0], compression="zstd", statistics=True)
        engine_frame(sim, t0).write_parquet(tmp[1], compression="zstd", statistics=True)
        tmp[2].write_text(
            render_openmetrics(sim.samples, t0, sim.profile.model_name), encoding="utf-8"
        )
        man = manifest(sim, meta, t0)
        tmp[3].write_text(
            json.dumps(man.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8"
        )
        for a, b in zip(tmp, paths, strict=True):
            a.replace(b)
    except (OSError, pl.exceptions.ComputeError) as exc:
        # A full disk or a file-size limit (polars says it as "(os error 28)").
        code = re.search(r"os error (\d+)", str(exc))
        if isinstance(exc, pl.exceptions.ComputeError) and code is None:
            raise
        if code is not None:
            why = os.strerror(int(code.group(1)))
        else:
            why = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
        raise InputError(
            f"cannot write the simulation's files: {why}; nothing written", str(out)
        ) from None
    finally:
        for a in tmp:
            a.unlink(missing_ok=True)
    return paths


def check_out_dir(out: Path) -> None:
    """Refuse an output path that cannot be a directory, before any work is done."""
    check_utf8_path(out)
    if out.exists() and not out.is_dir():
        raise InputError("--out must be a directory, but this is a file", str(out))
    parent = next((p for p in [out, *out.parents] if p.exists()), None)
    if parent is not None and not os.access(parent, os.W_OK):
        raise InputError("--out: cannot write here (permission denied)", str(parent))
