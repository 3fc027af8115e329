"""Fit the step-cost model from a recorded engine trace (docs/simulate.md, Fitting the engine
from a trace: `relplan simulate fit-engine --db FILE`; `relplan whatif` uses it too).

Sources, the first the workspace holds: step records (`steps`), the iterations' own elapsed
times with their prefill/decode split (queries/sim/iteration_costs.sql) from vLLM's
iteration-detail lines (`--enable-logging-iteration-details`: each line gives the iteration's
elapsed time and its context tokens and generation requests apart) or from an engine trace's
`stats` records that carry `elapsed_ms`, `prompt_computed` and `decode_tokens` (the relplan
vLLM plugin's, with iteration details on), scheduler stats (`engine_stats` without those).
With iterations: step_ms = a + b * context (prefill) tokens + bd * generation requests (a
trace's decode tokens: one per decoding request without speculative decoding), by least
squares over the iterations; the fit's error is given per step (median and p90 of
|fit - measured| / measured). KV capacity is read from
vllm:cache_config_info (block_size x num_gpu_blocks) when the metrics hold it; the batch
limit is the most requests running while others waited, a limit only when it was held there.

With step records (`steps`, what the simulator writes): the plain linear part of the model
(relplan/sim/costmodel.py), step_ms = a + b * prefill tokens + bd * decoding executions, by
least squares over the steps. Without them but with scheduler stats (`engine_stats`, what the
vLLM plugin writes): step_ms = a + b * batched tokens + bd * running executions, with a step's
duration taken as the time to the next stats record (gaps over `max_gap_s`, i.e. idle time, are
left out). Each coefficient is reported as constrained only when its column varies across the
steps and the fit's design has full rank; the prefix-cache and attention terms (c, f) and the
memory floor are not fitted (a trace's token counts cannot separate them from b at these
sizes). Batch limits are the largest batch and token count seen: lower bounds of
--max-num-seqs and --max-num-batched-tokens, not the settings. KV capacity is not constrained
by either table (it needs per-execution context lengths at the moment of a preemption): only
vllm:cache_config_info gives it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field

from relplan import sql
from relplan.models import StrictModel
from relplan.wording import Words

if TYPE_CHECKING:
    import duckdb

MIN_STEPS = 20

# The fit's notes and its text, worded by relplan/text/sim.py.
Said = Literal[
    "iteration_durations",
    "stats_durations",
    "too_few_steps",
    "kv_unknown",
    "kv_capacity",
    "batch_not_held",
    "batch_limit",
    "engine_fit",
    "coefficient_constant",
    "coefficient_collinear",
    "coefficient_negative",
]


_say: Words[Said] = Words("relplan.text.sim")


class FittedCoefficient(StrictModel):
    name: str = Field(description="a_ms, b_ms_per_token or b_ms_per_decode_seq")
    value_ms: float | None = Field(description="null when the data cannot constrain it")
    constrained: bool
    note: str | None = None


class EngineFit(StrictModel):
    source: str = Field(
        description="steps (step records), iteration lines (vLLM's log), engine trace (stats"
        " records with elapsed_ms) or engine_stats (scheduler stats, gaps between records)"
    )
    steps_used: int
    coefficients: list[FittedCoefficient]
    median_abs_error_pct: float | None = Field(description="|fit - measured| / measured, median")
    p90_abs_error_pct: float | None
    max_batch_seen: int | None = Field(description="lower bound of the engine's --max-num-seqs")
    max_tokens_seen: int | None = Field(
        description="lower bound of the engine's --max-num-batched-tokens"
    )
    kv_capacity_tokens: int | None = Field(
        description="block_size x num_gpu_blocks from vllm:cache_config_info; null without it"
    )
    notes: list[str]
    block_size: int | None = None
    num_blocks: int | None = None
    max_running_held: int | None = Field(
        default=None,
        description="requests running while others waited, when held there (the batch limit)",
    )


def fit_engine(con: duckdb.DuckDBPyConnection, max_gap_s: float = 1.0) -> EngineFit:
    """The fit from the workspace's `steps`, else its `engine_stats`."""
    import numpy as np

    notes: list[str] = []
    batch: int | None
    tokens: int | None
    rows = sql.rows(con, "sim/step_costs")
    its = [] if rows else sql.rows(con, "sim/iteration_costs")
    if rows:
        source = "steps"
        x1 = [float(r["prefill_tokens"]) for r in rows]
        x2 = [float(r["decodes"]) for r in rows]
        y = [1000.0 * float(r["seconds"]) for r in rows]
        batch = max(int(r["executions"]) for r in rows)
        tokens = max(int(r["prefill_tokens"]) + int(r["decodes"]) for r in rows)
        names = ("a_ms", "b_ms_per_token", "b_ms_per_decode_seq")
    elif its:
        source = " and ".join(sorted({str(r["origin"]) for r in its}))
        x1 = [float(r["context_tokens"]) for r in its]
        x2 = [float(r["generation_requests"]) for r in its]
        y = [1000.0 * float(r["seconds"]) for r in its]
        batch = max(
            max(int(r["generation_requests"] + (r["context_requests"] or 0)) for r in its),
            max(int(r["num_running"] or 0) for r in its),
        )
        tokens = max(int(r["context_tokens"] + (r["generation_tokens"] or 0)) for r in its)
        names = ("a_ms", "b_ms_per_token", "b_ms_per_decode_seq")
        notes.append(_say("iteration_durations", source=source))
    else:
        source = "engine_stats"
        st = [
            r
            for r in sql.rows(con, "sim/stats_step_costs")
            if r["seconds"] is not None
            and 0.0 < float(r["seconds"]) <= max_gap_s
            and (r["num_running"] or 0) > 0
        ]
        x1 = [float(r["num_batched_tokens"] or 0) for r in st]
        x2 = [float(r["num_running"] or 0) for r in st]
        y = [1000.0 * float(r["seconds"]) for r in st]
        batch = max((int(v) for v in x2), default=0) or None
        tokens = max((int(v) for v in x1), default=0) or None
        names = ("a_ms", "b_ms_per_token", "b_ms_per_decode_seq")
        notes.append(_say("stats_durations", max_gap_s=max_gap_s))
    n = len(y)
    if n < MIN_STEPS:
        notes.append(_say("too_few_steps", steps=n, needed=MIN_STEPS))
        return EngineFit(
            source=source,
            steps_used=n,
            coefficients=[
                FittedCoefficient(name=m, value_ms=None, constrained=False) for m in names
            ],
            median_abs_error_pct=None,
            p90_abs_error_pct=None,
            max_batch_seen=batch if n else None,
            max_tokens_seen=tokens if n else None,
            kv_capacity_tokens=None,
            notes=notes,
        )
    a = np.column_stack([np.ones(n), np.asarray(x1), np.asarray(x2)])
    yv = np.asarray(y)
    varies = [True, bool(np.ptp(a[:, 1]) > 0), bool(np.ptp(a[:, 2]) > 0)]
    cols = [i for i, v in enumerate(varies) if v]
    coef, _, rank, _ = np.linalg.lstsq(a[:, cols], yv, rcond=None)
    full = int(rank) == len(cols)
    values: dict[int, float] = dict(zip(cols, (float(c) for c in coef), strict=True))
    pred = a[:, cols] @ coef
    rel = np.abs(pred - yv) / np.maximum(yv, 1e-9) * 100.0
    out: list[FittedCoefficient] = []
    for i, name in enumerate(names):
        if not varies[i]:
            out.append(
                FittedCoefficient(
                    name=name,
                    value_ms=None,
                    constrained=False,
                    note=_say("coefficient_constant"),
                )
            )
        else:
            note = None if full else _say("coefficient_collinear")
            if full and values[i] < 0:
                note = _say("coefficient_negative")
            out.append(
                FittedCoefficient(
                    name=name, value_ms=values[i], constrained=note is None, note=note
                )
            )
    kv = _kv(con, notes)
    held = _held(con, notes)
    return EngineFit(
        source=source,
        steps_used=n,
        coefficients=out,
        median_abs_error_pct=float(np.median(rel)),
        p90_abs_error_pct=float(np.percentile(rel, 90)),
        max_batch_seen=batch,
        max_tokens_seen=tokens,
        kv_capacity_tokens=kv[0],
        notes=notes,
        block_size=kv[1],
        num_blocks=kv[2],
        max_running_held=held,
    )


def _kv(con: duckdb.DuckDBPyConnection, notes: list[str]) -> tuple[int | None, ...]:
    r = sql.one(con, "sim/kv_capacity")
    if r is None or r["block_size"] is None or r["num_blocks"] is None:
        notes.append(_say("kv_unknown"))
        return (None, None, None)
    size = int(r["block_size"]) * int(r["num_blocks"])
    notes.append(
        _say("kv_capacity", tokens=size, blocks=r["num_blocks"], block_size=r["block_size"])
    )
    return (size, int(r["block_size"]), int(r["num_blocks"]))


def _held(con: duckdb.DuckDBPyConnection, notes: list[str]) -> int | None:
    """The batch limit when the scrapes show running held at its most while work waited."""
    r = sql.one(con, "sim/running_while_waiting")
    if r is None or r["max_running_while_waiting"] is None:
        return None
    n = int(r["max_running_while_waiting"])
    if r["max_running"] is not None and int(r["max_running"]) > n:
        notes.append(_say("batch_not_held", held=n, most=int(r["max_running"])))
        return None
    notes.append(_say("batch_limit", limit=n, scrapes=r["scrapes_waiting"]))
    return n


def render_fit(fit: EngineFit) -> str:
    """The fit as text for the terminal (relplan/text/sim.py words it)."""
    return _say("engine_fit", fit=fit)
