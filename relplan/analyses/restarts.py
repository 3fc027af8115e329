"""Crashes, restarts and rollouts (docs/analyses.md, `restarts`).

Inputs: kube-state-metrics (restart counter, last terminated reason/timestamp, readiness,
`kube_pod_info` for pod -> node and pod IP), kubelet `prober_probe_total`, Kubernetes events
(`kube_events`), dcgm-exporter Xid / row-remap gauges, and the gateway log for the streams each
restart cut. Episodes are assembled in relplan/analyses/restarts_episodes.py; this module adds
the node, the GPU signals, the gateway's view and the totals.

Rules (each a constant below, documented in docs/analyses.md):
- a Killing event's streams die within the termination grace (GRACE_S, Kubernetes' default
  terminationGracePeriodSeconds) after it; streams are matched within TOL_S of a bracket;
- probes that failed within LOOKBACK_S before a restart are its probe failures;
- a crash loop: BackOff, CrashLoopBackOff, or LOOP_RESTARTS crashes within LOOP_WINDOW_S;
- a rollout: planned restarts of >= 2 pods, each within ROLLOUT_GAP_S of the previous;
  it drained when no stream was cut; readiness failing first when each pod's readiness
  probe failed in the lookback before its stop;
- a node is a cordon candidate with >= 2 crashes on it, a row-remap failure, or an Xid
  seen on it together with at least one crash.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses.common import FINDING
from relplan.analyses.context import RunContext
from relplan.analyses.inputs import Inputs
from relplan.analyses.restarts_episodes import (
    Episode,
    Samples,
    classify,
    crash_loops,
    episodes_from_counters,
    group_rollouts,
    merge_kills,
    probe_failures,
    ready_again,
    xid_codes,
)
from relplan.models import StrictModel

GRACE_S = 30.0
TOL_S = 5.0
LOOKBACK_S = 300.0
LOOP_WINDOW_S = 600.0
LOOP_RESTARTS = 3
ROLLOUT_GAP_S = 600.0
MARGIN_S = 600.0  # samples and events read this far outside the window (brackets, lookback)
# The budget figures shown with the restarts are at relplan budget's defaults.
BUDGET_WINDOW_S = 30 * 86_400.0
BUDGET_SLO = 0.999


class Restart(StrictModel):
    pod: str
    namespace: str | None
    container: str | None
    node: str | None
    t_s: float = Field(description="termination time, seconds from t0 (best estimate)")
    bracket_s: tuple[float, float] = Field(description="the termination lies in this span")
    time_from: str = Field(description="kill event | terminated timestamp | counter samples")
    count: int = Field(
        description="restarts this row stands for (a counter rise > 1, a repeated event)"
    )
    kind: str = Field(description="crash | planned")
    cause: str = Field(description="liveness | startup | oom | error | unknown | stop | completed")
    last_terminated_reason: str | None
    probes_failed_before: list[str]
    crash_loop: bool
    rollout: int | None
    streams_killed: int | None = Field(description="attempts of the replica cut at the restart")
    streams_finished: int | None = Field(description="attempts in flight at it that delivered")
    down_to_ready_s: float | None
    down_to_first_served_s: float | None


class ReplicaRestarts(StrictModel):
    pod: str
    node: str | None
    crashes: int
    planned: int
    crash_loop: bool
    streams_killed: int | None


class NodeRestarts(StrictModel):
    node: str
    crashes: int
    pods_crashed: int
    xid_codes: list[int] = Field(description="non-zero Xid values seen (last-value gauge)")
    row_remap_failure: bool
    cordon_candidate: bool
    why: str


class Rollout(StrictModel):
    start_s: float
    end_s: float
    pods: int
    restarts: int
    streams_dropped: int | None
    readiness_failed_first: int = Field(description="pods whose readiness failed before the stop")
    drained: bool | None = Field(description="no stream cut (None without a gateway log)")


class Restarts(StrictModel):
    window_s: float
    replicas_seen: int = Field(description="pods with restart signals in the window")
    crashes: int
    planned: int
    crashes_per_replica: float
    planned_per_replica: float
    streams_killed_per_crash: float | None
    streams_dropped_per_rollout: float | None
    mean_down_to_ready_s: float | None = Field(
        description="down to ready (readiness gauge), else to first served (gateway), mean over crashes"
    )
    crashes_per_replica_per_30d: float = Field(
        description="crashes per replica scaled from the window to 30 days (budget's C)"
    )
    planned_per_replica_per_30d: float = Field(description="the same for planned restarts (P)")
    break_even_stream_s: float | None = Field(
        description="(1 - 0.999) * 30 d / C: streams longer than this blow a 99.9 % budget"
        " on crashes alone; null without crashes"
    )
    crash_loops: list[str]
    restarts: list[Restart]
    replicas: list[ReplicaRestarts]
    nodes: list[NodeRestarts]
    rollouts: list[Rollout]
    inputs: list[str]
    finding: str = Field(default="", description=FINDING)


def missing(i: Inputs) -> str | None:
    row = sql.one(i.con, "analyses/restarts_inputs_present") or {}
    if row.get("pod_events") or row.get("restart_samples"):
        return None
    return (
        "restart analysis needs kube-state-metrics restart counters or Kubernetes events"
        " (kubectl get events -o json)"
    )


def run(i: Inputs) -> Restarts:
    return analyze_restarts(i.con, i.ctx)


def analyze_restarts(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> Restarts:
    a, b = ctx.window_start, ctx.window_end
    p = {"t_from": a, "t_to": b, "margin_s": MARGIN_S}
    samples = Samples(sql.rows(con, "analyses/restarts_pod_samples", p))
    events = sql.rows(con, "analyses/restarts_kube_events", p)
    gpu = sql.rows(con, "analyses/restarts_gpu_samples", p)
    eps = merge_kills(episodes_from_counters(samples, a, b), events, TOL_S, a, b)
    classify(eps, probe_failures(samples, events), LOOKBACK_S)
    loops = crash_loops(eps, samples, events, a, b, LOOP_WINDOW_S, LOOP_RESTARTS)
    rollouts = group_rollouts(eps, ROLLOUT_GAP_S)
    nodes, ips = _pod_nodes(samples, events, gpu)
    seen = _gateway(con, eps, ips) if ctx.has_proxy else {}
    restarts = [_restart(e, ctx, nodes, seen.get(n), samples) for n, e in enumerate(eps)]
    pods = {k[1] for k in samples.series("kube_pod_container_status_restarts_total")}
    pods |= {e.pod for e in eps}
    n_pods = max(len(pods), 1)
    crashes = [r for r in restarts if r.kind == "crash"]
    crash_n = sum(r.count for r in crashes)
    planned_n = sum(r.count for r in restarts if r.kind == "planned")
    killed = [r.streams_killed for r in crashes if r.streams_killed is not None]
    downs = [
        d
        for r in crashes
        if (d := r.down_to_ready_s if r.down_to_ready_s is not None else r.down_to_first_served_s)
        is not None
    ]
    ro = [_rollout(g, restarts, ctx) for g in rollouts]
    dropped = [x.streams_dropped for x in ro if x.streams_dropped is not None]
    scale = BUDGET_WINDOW_S / (b - a) if b > a else 0.0
    c30 = crash_n / n_pods * scale
    res = Restarts(
        window_s=b - a,
        crashes_per_replica_per_30d=c30,
        planned_per_replica_per_30d=planned_n / n_pods * scale,
        break_even_stream_s=(1 - BUDGET_SLO) * BUDGET_WINDOW_S / c30 if c30 > 0 else None,
        replicas_seen=len(pods),
        crashes=crash_n,
        planned=planned_n,
        crashes_per_replica=crash_n / n_pods,
        planned_per_replica=planned_n / n_pods,
        streams_killed_per_crash=sum(killed) / crash_n if killed and crash_n else None,
        streams_dropped_per_rollout=sum(dropped) / len(dropped) if dropped else None,
        mean_down_to_ready_s=sum(downs) / len(downs) if downs else None,
        crash_loops=sorted(loops),
        restarts=restarts,
        replicas=_replicas(restarts, pods, nodes, ctx.has_proxy),
        nodes=_nodes(restarts, gpu),
        rollouts=ro,
        inputs=_inputs(samples, events, gpu, ctx.has_proxy),
    )
    return res


def _pod_nodes(
    samples: Samples, events: list[dict[str, Any]], gpu: list[dict[str, Any]]
) -> tuple[dict[str, str], dict[str, set[str]]]:
    """pod -> node (kube_pod_info, else kubelet events, else dcgm-exporter's pod label) and
    pod -> its IPs (kube_pod_info), for matching gateway upstreams."""
    nodes: dict[str, str] = {}
    ips: dict[str, set[str]] = defaultdict(set)
    for r in gpu:
        if r["pod"] and r["node"]:
            nodes[r["pod"]] = r["node"]
    for ev in events:
        if ev["node"]:
            nodes[ev["pod"]] = ev["node"]
    for r in samples.rows:
        if r["name"] == "kube_pod_info":
            if r["node"]:
                nodes[r["pod"]] = r["node"]
            if r["pod_ip"]:
                ips[r["pod"]].add(r["pod_ip"])
    return nodes, ips


def _bracket(e: Episode) -> tuple[float, float]:
    hi = e.hi + GRACE_S if e.time_from == "kill event" else e.hi
    return e.lo, hi


def _gateway(
    con: duckdb.DuckDBPyConnection, eps: list[Episode], ips: dict[str, set[str]]
) -> dict[int, dict[str, Any]]:
    ids: list[int] = []
    keys: list[str] = []
    los: list[float] = []
    his: list[float] = []
    for n, e in enumerate(eps):
        lo, hi = _bracket(e)
        for key in sorted({e.pod} | ips.get(e.pod, set())):
            ids.append(n)
            keys.append(key)
            los.append(lo)
            his.append(hi)
    if not ids:
        return {}
    params = {"ids": ids, "keys": keys, "los": los, "his": his, "tol_s": TOL_S}
    got = {int(r["id"]): r for r in sql.rows(con, "analyses/restarts_streams_at", params)}
    empty = {"cut": 0, "finished": 0, "first_served": None}
    return {n: got.get(n, empty) for n in range(len(eps))}


def _restart(
    e: Episode,
    ctx: RunContext,
    nodes: dict[str, str],
    seen: dict[str, Any] | None,
    samples: Samples,
) -> Restart:
    ready = ready_again(samples, e)
    first = seen.get("first_served") if seen else None
    return Restart(
        pod=e.pod,
        namespace=e.namespace,
        container=e.container,
        node=nodes.get(e.pod),
        t_s=ctx.s(e.t),
        bracket_s=(ctx.s(e.lo), ctx.s(e.hi)),
        time_from=e.time_from,
        count=e.count,
        kind=e.kind,
        cause=e.cause,
        last_terminated_reason=e.reason,
        probes_failed_before=e.probes_failed_before,
        crash_loop=e.crash_loop,
        rollout=e.rollout,
        streams_killed=int(seen["cut"]) if seen else None,
        streams_finished=int(seen["finished"]) if seen else None,
        down_to_ready_s=ready - e.t if ready is not None else None,
        down_to_first_served_s=float(first) - e.t if first is not None else None,
    )


def _rollout(group: list[Episode], restarts: list[Restart], ctx: RunContext) -> Rollout:
    idx = group[0].rollout
    rs = [r for r in restarts if r.rollout == idx]
    cut = [r.streams_killed for r in rs if r.streams_killed is not None]
    return Rollout(
        start_s=ctx.s(group[0].t),
        end_s=ctx.s(group[-1].t),
        pods=len({e.pod for e in group}),
        restarts=sum(e.count for e in group),
        streams_dropped=sum(cut) if cut else None,
        readiness_failed_first=len({r.pod for r in rs if "Readiness" in r.probes_failed_before}),
        drained=(sum(cut) == 0) if cut else None,
    )


def _replicas(
    restarts: list[Restart], pods: set[str], nodes: dict[str, str], gateway: bool
) -> list[ReplicaRestarts]:
    out = []
    for pod in sorted(pods):
        rs = [r for r in restarts if r.pod == pod]
        crashes = [r for r in rs if r.kind == "crash"]
        out.append(
            ReplicaRestarts(
                pod=pod,
                node=nodes.get(pod),
                crashes=sum(r.count for r in crashes),
                planned=sum(r.count for r in rs if r.kind == "planned"),
                crash_loop=any(r.crash_loop for r in rs),
                streams_killed=sum(r.streams_killed or 0 for r in crashes) if gateway else None,
            )
        )
    return out


def _nodes(restarts: list[Restart], gpu: list[dict[str, Any]]) -> list[NodeRestarts]:
    xids = xid_codes(gpu)
    remap = {
        r["node"] for r in gpu if r["name"] == "DCGM_FI_DEV_ROW_REMAP_FAILURE" and r["value"] >= 1
    }
    names = {r.node for r in restarts if r.node} | set(xids) | {n for n in remap if n}
    out = []
    for node in sorted(names):
        crashes = [r for r in restarts if r.node == node and r.kind == "crash"]
        n = sum(r.count for r in crashes)
        why = []
        if n >= 2:
            why.append(f"{n} crashes on it")
        if node in remap:
            why.append("row remapping failed")
        if xids.get(node) and n >= 1:
            why.append(f"Xid {', '.join(str(x) for x in sorted(xids[node]))} with a crash")
        out.append(
            NodeRestarts(
                node=node,
                crashes=n,
                pods_crashed=len({r.pod for r in crashes}),
                xid_codes=sorted(xids.get(node, set())),
                row_remap_failure=node in remap,
                cordon_candidate=bool(why),
                why="; ".join(why),
            )
        )
    return out


def _inputs(
    samples: Samples,
    events: list[dict[str, Any]],
    gpu: list[dict[str, Any]],
    gateway: bool,
) -> list[str]:
    names = {r["name"] for r in samples.rows}
    out = sorted(names)
    if events:
        out.append("kube_events")
    if gpu:
        out.append("dcgm-exporter")
    if gateway:
        out.append("gateway log")
    return out
