"""Counters that miss the problem (docs/analyses.md, `counters`).

vLLM's prompt-token counter moves when an execution produces its first output; the
prefix-cache query counter moves when it is scheduled from the waiting queue. Prefill
aborted before its first token shows up only in the second. The shortfall
1 - rise(prompt tokens) / rise(prefix-cache queries) measures the gap, per window and
replica (queries/analyses/counter_rise_by_window.sql) and as a rolling series
(queries/analyses/counter_rise_rolling.sql: windows of `rolling_window_s` evaluated every
`rolling_step_s`, aligned on t0; the first evaluation is the first whose window lies
wholly inside the analysed window). An alarm is two or more consecutive evaluations with
the shortfall above the threshold (default 0.2) while the query counter rises; it is
reported from the first to the last firing evaluation time.

Metric names accepted, first present wins: vllm:prompt_tokens_total, vllm:prompt_tokens;
vllm:prefix_cache_queries_total, vllm:prefix_cache_queries, then the older
vllm:gpu_prefix_cache_queries_total / vllm:gpu_prefix_cache_queries (early V1 counted
blocks there, not tokens: the finding says so). With an engine trace, the truth is the
prompt tokens of executions first scheduled in the window vs those that reached their
first token in it (queries/analyses/prompt_tokens_truth_by_window.sql); with step records,
the prompt tokens it prefilled, computed plus prefix-cache hits
(queries/analyses/computed_prefill_by_window.sql), beside the counter's rise: the share of
the GPU's prefill a dashboard of the counter would show.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses.common import FINDING, WindowRow, ratio
from relplan.analyses.context import RunContext, window_params
from relplan.analyses.inputs import Inputs
from relplan.analyses.wording import Words
from relplan.errors import NoDataError
from relplan.models import StrictModel

# The sentences of this analysis, worded by relplan/text/counters.py (one function per code).
Said = Literal["no_execution", "needs_metrics"]
_say: Words[Said] = Words("relplan.text.counters")

PROMPT_NAMES = ("vllm:prompt_tokens_total", "vllm:prompt_tokens")
QUERY_NAMES = (
    "vllm:prefix_cache_queries_total",
    "vllm:prefix_cache_queries",
    "vllm:gpu_prefix_cache_queries_total",
    "vllm:gpu_prefix_cache_queries",
)
DEFAULT_THRESHOLD = 0.2


class CounterWindow(WindowRow):
    replica: str | None = Field(description="null: all replicas summed")
    prompt_rise: float
    query_rise: float
    shortfall: float | None = Field(description="1 - prompt_rise / query_rise")
    resets: int = Field(description="counter drops (restarts) seen in the window")
    truth_scheduled_tokens: int | None = Field(
        description="engine trace: prompt tokens first scheduled"
    )
    truth_first_output_tokens: int | None = Field(
        description="engine trace: prompt tokens reaching first output"
    )
    truth_shortfall: float | None
    trace_computed_tokens: int | None = Field(
        default=None,
        description="engine trace (step records): prompt tokens prefilled in the window"
        " (computed + prefix-cache hits, as the counter counts them); null without steps",
    )
    counter_share_of_computed: float | None = Field(
        default=None,
        description="prompt_rise / trace_computed_tokens: how much of the computed prefill"
        " the prompt-token counter shows",
    )


class CounterPoint(StrictModel):
    t_s: float = Field(description="evaluation time (window end), seconds from t0")
    replica: str | None
    prompt_rise: float
    query_rise: float
    shortfall: float | None
    firing: bool


class AlarmInterval(StrictModel):
    replica: str | None
    start_s: float = Field(description="first firing evaluation, seconds from t0")
    end_s: float = Field(description="last firing evaluation, seconds from t0")
    evaluations: int
    max_shortfall: float


class Counters(StrictModel):
    prompt_metric: str
    query_metric: str
    query_counts_blocks: bool = Field(
        description="only the old gpu_prefix_cache name exists (early V1: blocks)"
    )
    threshold: float
    rolling_window_s: float
    rolling_step_s: float
    truth_source: str | None = Field(description="engine trace when present")
    windows: list[CounterWindow]
    series: list[CounterPoint]
    alarms: list[AlarmInterval]
    finding: str = Field(default="", description=FINDING)


def counter_names(con: duckdb.DuckDBPyConnection) -> tuple[str | None, str | None]:
    present = frozenset(r["name"] for r in sql.rows(con, "analyses/metric_names_present"))
    return pick_counter_names(present)


def _labels(ctx: RunContext) -> dict[str, str]:
    ls = (ctx.replica_labels * 3)[:3]
    return {"label1": ls[0], "label2": ls[1], "label3": ls[2]}


def analyze_counters(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    prompt: str,
    query: str,
    threshold: float = DEFAULT_THRESHOLD,
    *,
    detail: bool = True,
) -> Counters:
    """The analysis; `detail=False` leaves out the engine trace's cross-checks (the
    `truth_*`, `trace_computed_tokens` and `counter_share_of_computed` columns stay null)."""
    windows = ctx.phase_windows()
    names = {"prompt_name": prompt, "query_name": query} | _labels(ctx)
    rows = sql.rows(con, "analyses/counter_rise_by_window", window_params(windows) | names)
    by: dict[tuple[str, str | None], dict[str, Any]] = {}
    replicas: set[str] = set()
    for r in rows:
        rep = None if r["all_replicas"] else (r["replica"] or "")
        if rep is not None:
            replicas.add(rep)
        by[(r["win_name"], rep)] = r
    truth: dict[tuple[str, str | None], dict[str, Any]] = {}
    if ctx.has_events and detail:
        for r in sql.rows(con, "analyses/prompt_tokens_truth_by_window", window_params(windows)):
            rep = None if r["all_replicas"] else (r["replica"] or "")
            truth[(r["win_name"], rep)] = r
    computed: dict[tuple[str, str | None], int] = {}
    if ctx.has_steps and detail:
        for r in sql.rows(con, "analyses/computed_prefill_by_window", window_params(windows)):
            rep = None if r["all_replicas"] else (r["replica"] or "")
            computed[(r["win_name"], rep)] = int(r["computed_tokens"])
    per_replica = bool(replicas - {""})
    keys: list[str | None] = [None, *(sorted(replicas) if per_replica else [])]
    out = []
    for rep in keys:
        for w in windows:
            r = by.get((w.name, rep), {"prompt_rise": 0.0, "query_rise": 0.0, "resets": 0})
            why: dict[str, str] = {}
            t = truth.get((w.name, rep))
            if not detail:
                why["truth_shortfall"] = why["counter_share_of_computed"] = "not computed"
            elif not ctx.has_events:
                why["truth_shortfall"] = "needs an engine trace"
            elif t is None:
                why["truth_shortfall"] = _say("no_execution", replica=rep)
            done = computed.get((w.name, rep), 0 if ctx.has_steps and detail else None)
            if done is None and detail:
                why["counter_share_of_computed"] = "needs an engine trace with step records"
            out.append(
                CounterWindow(
                    window=w.name,
                    start_s=ctx.s(w.a),
                    end_s=ctx.s(w.b),
                    replica=rep,
                    prompt_rise=float(r["prompt_rise"]),
                    query_rise=float(r["query_rise"]),
                    shortfall=_shortfall(
                        float(r["prompt_rise"]), float(r["query_rise"]), why, "shortfall"
                    ),
                    resets=int(r["resets"]),
                    truth_scheduled_tokens=None if t is None else int(t["scheduled_tokens"]),
                    truth_first_output_tokens=None if t is None else int(t["first_output_tokens"]),
                    truth_shortfall=(
                        None
                        if t is None
                        else _shortfall(
                            float(t["first_output_tokens"]),
                            float(t["scheduled_tokens"]),
                            why,
                            "truth_shortfall",
                        )
                    ),
                    trace_computed_tokens=done,
                    counter_share_of_computed=None
                    if done is None
                    else ratio(
                        float(r["prompt_rise"]),
                        float(done),
                        why,
                        "counter_share_of_computed",
                        "the engine trace computed no prefill in this window",
                    ),
                    null_reasons=why,
                )
            )
    series, alarms = _rolling(con, ctx, names, keys, threshold)
    blocks = query.startswith("vllm:gpu_prefix_cache")
    return Counters(
        prompt_metric=prompt,
        query_metric=query,
        query_counts_blocks=blocks,
        threshold=threshold,
        rolling_window_s=ctx.rolling_window_s,
        rolling_step_s=ctx.rolling_step_s,
        truth_source="engine trace" if ctx.has_events else None,
        windows=out,
        series=series,
        alarms=alarms,
    )


def _shortfall(prompt: float, queries: float, why: dict[str, str], field: str) -> float | None:
    r = ratio(prompt, queries, why, field, "the query counter did not rise in this window")
    return None if r is None else 1.0 - r


def _rolling(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    names: dict[str, str],
    keys: list[str | None],
    threshold: float,
) -> tuple[list[CounterPoint], list[AlarmInterval]]:
    w, s = ctx.rolling_window_s, ctx.rolling_step_s
    lo, hi = ctx.rolling_bounds()  # bounded by the metrics' span (docs: context.py)
    k_first = math.ceil((lo + w - ctx.t0) / s - 1e-9)
    k_last = math.floor((hi - ctx.t0) / s + 1e-9)
    if k_last < k_first:
        return [], []
    params = names | {"origin": ctx.t0, "step": s, "width": w, "k_first": k_first, "k_last": k_last}
    got: dict[tuple[int, str | None], dict[str, Any]] = {}
    for r in sql.rows(con, "analyses/counter_rise_rolling", params):
        rep = None if r["all_replicas"] else (r["replica"] or "")
        k = round((r["e"] - ctx.t0) / s)
        got[(k, rep)] = r
    series: list[CounterPoint] = []
    alarms: list[AlarmInterval] = []
    for rep in keys:
        run: list[CounterPoint] = []
        for k in range(k_first, k_last + 1):
            r = got.get((k, rep), {"prompt_rise": 0.0, "query_rise": 0.0})
            p, q = float(r["prompt_rise"]), float(r["query_rise"])
            sf = None if q <= 0 else 1.0 - p / q
            pt = CounterPoint(
                t_s=k * s,
                replica=rep,
                prompt_rise=p,
                query_rise=q,
                shortfall=sf,
                firing=sf is not None and sf > threshold,
            )
            series.append(pt)
            if pt.firing:
                run.append(pt)
            else:
                _close(run, alarms)
                run = []
        _close(run, alarms)
    return series, alarms


def _close(run: list[CounterPoint], alarms: list[AlarmInterval]) -> None:
    if len(run) >= 2:
        alarms.append(
            AlarmInterval(
                replica=run[0].replica,
                start_s=run[0].t_s,
                end_s=run[-1].t_s,
                evaluations=len(run),
                max_shortfall=max(p.shortfall or 0.0 for p in run),
            )
        )


def pick_counter_names(present: frozenset[str]) -> tuple[str | None, str | None]:
    """The prompt-token and prefix-cache query counters present (first name that exists)."""
    prompt = next((n for n in PROMPT_NAMES if n in present), None)
    query = next((n for n in QUERY_NAMES if n in present), None)
    return prompt, query


def missing(i: Inputs) -> str | None:
    prompt, query = pick_counter_names(i.metric_names)
    lacking = [n for n, ok in ((PROMPT_NAMES[0], prompt), (QUERY_NAMES[0], query)) if not ok]
    if not lacking:
        return None
    return _say("needs_metrics", lacking=lacking)


def run(i: Inputs) -> Counters:
    prompt, query = pick_counter_names(i.metric_names)
    if prompt is None or query is None:
        raise NoDataError(missing(i) or "counter divergence needs the counter metrics")
    return analyze_counters(i.con, i.ctx, prompt, query, detail=i.detail)
