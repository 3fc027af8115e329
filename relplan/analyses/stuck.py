"""Stuck replicas and hung GPUs as episodes (docs/analyses.md, `stuck`).

The definition is the health signal `stuck_replica` of relplan/alerts/rules.py, evaluated as
relplan.alerts does (relplan/alerts/health.py): requests running (vllm:num_requests_running
> 0) and the generation-token counter (vllm:generation_tokens_total) not risen over the
rule's range (1m), per replica. An episode is one run of consecutive evaluations at which
that expression holds, whether or not it lasted the rule's `for:` (then `alerted`):
- start: the first such evaluation minus the rule's range: the counter did not move from
  then on (relplan.alerts reads a range [t - 1m, t], so this is a sample time at which the
  counter already stood still; the last token came after the sample before it);
- end: the first evaluation at which it no longer holds (tokens again, or nothing running),
  or the last evaluation + step when it still held there (`ongoing`);
- node: the node label of the replica's running-requests series (`NODE_LABELS`, first
  present), where one is there (queries/analyses/stuck_replica_nodes.sql);
- streams caught: proxy attempts on that replica in flight during it
  (queries/analyses/stuck_streams_caught.sql), unknown when the proxy log names no replica
  by the metrics' replica label value.
Evaluations are every `--step` seconds over the analysed window, so start and end are exact
to a step (and to a scrape interval of the counter).

Without those two metrics, the engine trace (step records) gives the episodes
(queries/analyses/stuck_from_trace.sql): stretches of at least the rule's range during which
an execution was running (first `scheduled` to its end) and no token came (no `first_token`,
no step with decode tokens) on its replica. They are exact to the trace's times; `alerted`
then means the stretch outlasted the range plus the rule's `for:`; the node is unknown.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from pydantic import Field

from relplan import sql
from relplan.alerts import promql_ast, promql_eval, promql_parser
from relplan.alerts.health import (
    bounded_window,
    evaluate_rules,
    grid,
    metrics_info,
    pick_names,
    pick_replica_label,
)
from relplan.alerts.rules import AlertRule, health_rules
from relplan.alerts.samples import load_store
from relplan.analyses.common import FINDING
from relplan.analyses.inputs import Inputs
from relplan.analyses.wording import Words
from relplan.errors import NoDataError, UsageError
from relplan.models import StrictModel

# The sentences of this analysis, worded by relplan/text/stuck.py (one function per code).
Said = Literal["needs_metrics", "no_node_label", "gateway_names_differ"]
_say: Words[Said] = Words("relplan.text.stuck")

SIGNAL = "stuck_replica"
# Where a node is named: `node` / `kubernetes_node`, the usual relabelings of
# __meta_kubernetes_pod_node_name in Kubernetes scrape configs; `Hostname`, the DCGM exporter's.
NODE_LABELS = ("node", "kubernetes_node", "Hostname")


class StuckEpisode(StrictModel):
    replica: str | None
    node: str | None = Field(description="from a node label of the replica's series")
    start_s: float = Field(description="seconds from t0")
    end_s: float
    duration_s: float
    ongoing: bool = Field(description="still stuck at the last evaluation")
    alerted: bool = Field(description="lasted the rule's `for:`, so the alert fired")
    peak_running: float | None = Field(description="most requests running (metrics road)")
    executions: int | None = Field(
        default=None, description="executions running during it (engine-trace road)"
    )
    streams_caught: int | None = Field(description="proxy attempts in flight on it")
    streams_failed: int | None = Field(description="of them, those not delivered")
    null_reasons: dict[str, str] = Field(default_factory=dict)


class StuckEpisodes(StrictModel):
    source: str = Field(description="metrics (the stuck_replica rule) | engine trace")
    expr: str = Field(description="the rule's expression")
    range_s: float = Field(description="the rule's range: no token for this long")
    for_s: float
    step_s: float
    replica_label: str | None
    episodes: list[StuckEpisode]
    finding: str = Field(default="", description=FINDING)


def stuck_rule(label: str, names: dict[str, str]) -> AlertRule:
    """The stuck_replica rule of the health signals, for `label` and the names present."""
    return next(r for r in health_rules(label, names=names, proxy=False) if r.signal == SIGNAL)


def _needed(i: Inputs) -> tuple[str, str]:
    names = pick_names(metrics_info(i.con))
    return names["running"], names["generation_tokens"]


def missing(i: Inputs) -> str | None:
    need = _needed(i)
    if all(n in i.metric_names for n in need) or i.ctx.has_steps:
        return None
    return _say("needs_metrics", first=need[0], second=need[1])


def run(i: Inputs) -> StuckEpisodes:
    if all(n in i.metric_names for n in _needed(i)):
        return _from_metrics(i)
    return _from_trace(i)


def _from_trace(i: Inputs) -> StuckEpisodes:
    ctx = i.ctx
    rule = stuck_rule("replica", {})
    range_s = promql_ast.max_lookback_ms(promql_parser.parse(rule.expr), 0) / 1000
    params = {"t_from": ctx.window_start, "t_to": ctx.window_end, "range_s": range_s}
    episodes = [
        StuckEpisode(
            replica=r["replica"] or None,
            node=None,
            start_s=ctx.s(r["t_start"]),
            end_s=ctx.s(r["t_end"]),
            duration_s=r["t_end"] - r["t_start"],
            ongoing=r["t_end"] >= ctx.window_end,
            alerted=r["t_end"] - r["t_start"] >= range_s + rule.for_s,
            peak_running=None,
            executions=int(r["executions"]),
            streams_caught=None,
            streams_failed=None,
            null_reasons={
                "node": "the engine trace names no node",
                "peak_running": "no running-requests gauge: see executions",
            },
        )
        for r in sql.rows(i.con, "analyses/stuck_from_trace", params)
    ]
    _add_streams(i, episodes)
    return StuckEpisodes(
        source="engine trace",
        expr=rule.expr,
        range_s=range_s,
        for_s=rule.for_s,
        step_s=i.opts.step,
        replica_label=None,
        episodes=episodes,
    )


def _from_metrics(i: Inputs) -> StuckEpisodes:
    ctx, con = i.ctx, i.con
    info = metrics_info(con)
    label = i.opts.replica_label or pick_replica_label(info)
    names = pick_names(info)
    rule = stuck_rule(label or "replica", names)
    node = promql_parser.parse(rule.expr)
    range_s = promql_ast.max_lookback_ms(node, 0) / 1000
    lookback = promql_ast.max_lookback_ms(node, promql_eval.LOOKBACK_DELTA_MS) / 1000
    present = [info.present[n] for n in promql_ast.metric_names(node)]
    t_min, t_max = min(p[0] for p in present), max(p[1] for p in present)
    step = i.opts.step
    try:
        start, end = bounded_window(ctx.window_start, ctx.window_end, step, t_min, t_max, lookback)
    except UsageError as exc:
        raise NoDataError(f"stuck-replica episodes not evaluated: {exc}") from exc
    ts = grid(start, end, step)
    store = load_store(con, sorted(promql_ast.metric_names(node)), start - lookback, end)
    timeline = evaluate_rules(store, ts, [rule])[0]
    step_ms = round(step * 1000)
    episodes: list[StuckEpisode] = []
    for key in sorted(timeline.firing):
        fire, values = timeline.firing[key]
        holds = fire | timeline.pending[key]
        replica = dict(key).get(label) if label else None
        idx = np.nonzero(holds)[0]
        if len(idx) == 0:
            continue
        breaks = np.nonzero(np.diff(idx) > 1)[0]
        for a, b in zip(
            np.concatenate(([idx[0]], idx[breaks + 1])),
            np.concatenate((idx[breaks], [idx[-1]])),
            strict=True,
        ):
            ongoing = int(b) == len(ts) - 1
            end_ms = int(ts[b]) + step_ms if ongoing else int(ts[b + 1])
            t_a, t_b = int(ts[a]) / 1000 - range_s, end_ms / 1000
            vals = values[a : b + 1]
            finite = vals[np.isfinite(vals)]
            episodes.append(
                StuckEpisode(
                    replica=replica,
                    node=None,
                    start_s=ctx.s(t_a),
                    end_s=ctx.s(t_b),
                    duration_s=t_b - t_a,
                    ongoing=ongoing,
                    alerted=bool(fire[a : b + 1].any()),
                    peak_running=float(finite.max()) if len(finite) else None,
                    streams_caught=None,
                    streams_failed=None,
                )
            )
    episodes.sort(key=lambda e: (e.start_s, e.replica or ""))
    _add_nodes(i, episodes, label, names["running"])
    _add_streams(i, episodes)
    return StuckEpisodes(
        source="metrics",
        expr=rule.expr,
        range_s=range_s,
        for_s=rule.for_s,
        step_s=step,
        replica_label=label,
        episodes=episodes,
    )


def _add_nodes(i: Inputs, episodes: list[StuckEpisode], label: str | None, name: str) -> None:
    if not episodes or label is None:
        return
    params = {"name": name, "replica_label": label}
    params |= {f"node_{k + 1}": n for k, n in enumerate(NODE_LABELS)}
    nodes = {
        r["replica"]: r["nodes"] for r in sql.rows(i.con, "analyses/stuck_replica_nodes", params)
    }
    for e in episodes:
        seen = nodes.get(e.replica) or []
        if seen:
            e.node = ", ".join(seen)
        else:
            e.null_reasons["node"] = _say("no_node_label", labels=list(NODE_LABELS), series=name)


def _add_streams(i: Inputs, episodes: list[StuckEpisode]) -> None:
    if not episodes:
        return
    if not i.ctx.has_proxy:
        for e in episodes:
            e.null_reasons["streams_caught"] = "no proxy log"
        return
    params = {
        "ep_ids": list(range(len(episodes))),
        "ep_replicas": [e.replica for e in episodes],
        "ep_starts": [i.ctx.t0 + e.start_s for e in episodes],
        "ep_ends": [i.ctx.t0 + e.end_s for e in episodes],
    }
    for r in sql.rows(i.con, "analyses/stuck_streams_caught", params):
        e = episodes[int(r["id"])]
        if r["replica_named"]:
            e.streams_caught, e.streams_failed = int(r["caught"]), int(r["caught_failed"])
        else:
            e.null_reasons["streams_caught"] = _say("gateway_names_differ", replica=e.replica)
