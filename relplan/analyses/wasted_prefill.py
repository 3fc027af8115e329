"""Wasted prefill by abort cause (docs/analyses.md, `wasted_prefill`), from step records.

queries/analyses/wasted_prefill_by_fate.sql splits every step's computed prompt tokens by the fate of
its execution (decided over all the data; the earlier of finished/aborted wins, a tie counts
as finished), per window of t_done (read once, in disjoint time segments summed into the
windows here), for all replicas and per replica. Every computed token
lands in exactly one fate: delivered, finished_for_nobody, finished (no proxy log: delivery
unknown), aborted, unfinished, unknown (steps of an execution with no lifecycle event).
Shares are of all computed prompt tokens in the window, except the in-flight share, which is
of the aborted executions' computed prompt tokens (docs/analyses.md, wasted_prefill).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses.common import FINDING, WindowRow, ratio
from relplan.analyses.context import RunContext, segments
from relplan.analyses.inputs import Inputs
from relplan.models import StrictModel

FATES = ("delivered", "finished_for_nobody", "finished", "aborted", "unfinished", "unknown")


class WastedPrefillWindow(WindowRow):
    replica: str | None = Field(description="null: all replicas")
    steps_by_fate: dict[str, int] = Field(description="step records per fate (same keys)")
    computed_tokens: int = Field(description="prompt tokens computed (prefix-cache hits excluded)")
    cached_tokens: int
    decode_tokens: int
    tokens_by_fate: dict[str, int] = Field(description=f"keys: {', '.join(FATES)}")
    share_by_fate: dict[str, float | None]
    aborted_share: float | None = Field(
        description="share of computed prompt tokens that went to aborted executions"
    )
    inflight_prompt_tokens: int = Field(
        description="aborted executions' prompt tokens in steps in flight at the abort"
    )
    inflight_decode_tokens: int
    inflight_share_of_aborted: float | None
    before_first_output_tokens: int
    before_first_output_share: float | None = Field(
        description="of all computed: never counted by vllm:prompt_tokens_total"
    )
    recomputed_tokens: int
    recomputed_share: float | None


class WastedPrefill(StrictModel):
    source: str = Field(description="always the engine trace (step records)")
    windows: list[WastedPrefillWindow] = Field(
        description="whole run and phases (replica null), then per replica"
    )
    finding: str = Field(default="", description=FINDING)


def analyze_wasted_prefill(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> WastedPrefill:
    windows = ctx.phase_windows()
    params, members = segments(windows)
    rows = sql.rows(con, "analyses/wasted_prefill_by_fate", params | {"has_proxy": ctx.has_proxy})
    # Sum the disjoint segments into each window, for all replicas and per replica.
    groups: dict[tuple[str, str | None], list[dict[str, Any]]] = defaultdict(list)
    replicas: set[str] = {r["replica"] or "" for r in rows}
    for w in windows:
        inside = set(members[w.name])
        for r in rows:
            if r["k"] in inside:
                groups[(w.name, None)].append(r)
                groups[(w.name, r["replica"] or "")].append(r)
    per_replica = bool(replicas - {""})
    out: list[WastedPrefillWindow] = []
    keys: list[str | None] = [None, *(sorted(replicas) if per_replica else [])]
    for rep in keys:
        for w in windows:
            out.append(_row(ctx, w.name, w.a, w.b, rep, groups.get((w.name, rep), [])))
    return WastedPrefill(source="engine trace", windows=out)


def _row(
    ctx: RunContext, name: str, a: float, b: float, rep: str | None, rs: list[dict[str, Any]]
) -> WastedPrefillWindow:
    why: dict[str, str] = {}
    tok = dict.fromkeys(FATES, 0)
    nsteps = dict.fromkeys(FATES, 0)
    for r in rs:
        tok[r["fate"]] += int(r["prompt_computed"])
        nsteps[r["fate"]] += int(r["steps"])
    total = sum(tok.values())
    aborted = tok["aborted"]
    inflight = sum(int(r["inflight_prompt"]) for r in rs)
    bfo = sum(int(r["before_first_output"]) for r in rs)
    rec = sum(int(r["recomputed"]) for r in rs)
    none = "no prompt tokens computed in this window"
    shares = {f: ratio(tok[f], total, why, f"share_by_fate.{f}", none) for f in FATES}
    if not ctx.has_proxy:
        why["tokens_by_fate.delivered"] = (
            "no proxy log: finished executions are counted as `finished`, delivery unknown"
        )
    return WastedPrefillWindow(
        window=name,
        start_s=ctx.s(a),
        end_s=ctx.s(b),
        replica=rep,
        steps_by_fate=nsteps,
        computed_tokens=total,
        cached_tokens=sum(int(r["prompt_cached"]) for r in rs),
        decode_tokens=sum(int(r["decode_tokens"]) for r in rs),
        tokens_by_fate=tok,
        share_by_fate=shares,
        aborted_share=ratio(aborted, total, why, "aborted_share", none),
        inflight_prompt_tokens=inflight,
        inflight_decode_tokens=sum(int(r["inflight_decode"]) for r in rs),
        inflight_share_of_aborted=ratio(
            inflight,
            aborted,
            why,
            "inflight_share_of_aborted",
            "no prompt tokens computed for aborted executions",
        ),
        before_first_output_tokens=bfo,
        before_first_output_share=ratio(bfo, total, why, "before_first_output_share", none),
        recomputed_tokens=rec,
        recomputed_share=ratio(rec, total, why, "recomputed_share", none),
        null_reasons=why,
    )


def missing(i: Inputs) -> str | None:
    return None if i.ctx.has_steps else "wasted prefill needs an engine trace with step records"


def run(i: Inputs) -> WastedPrefill:
    return analyze_wasted_prefill(i.con, i.ctx)


def data_checks(w: WastedPrefill) -> dict[str, int]:
    """The steps of executions with no lifecycle event, counted on the way (DataChecks)."""
    return {"steps_unknown_execution": w.windows[0].steps_by_fate["unknown"]}
