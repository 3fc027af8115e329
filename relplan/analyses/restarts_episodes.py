"""From restart signals to restart episodes (docs/analyses.md, `restarts`): pure functions over
the rows of queries/analyses/restarts_*.sql, so that each rule is tested on its own.

A restart is found in one of two ways, and one found both ways is one restart:
- a rise of kube-state-metrics' `kube_pod_container_status_restarts_total` between two samples
  (a rise of n is n restarts inside that bracket; `..._last_terminated_timestamp`, when it
  falls in the bracket, gives the exact time, `..._last_terminated_reason` the reason);
- a kubelet `Killing` event (an event object with count n is n kills between its first and
  last time). A `Killing` inside a rise's bracket (widened by the tolerance) on the same pod is
  that rise's kill: it gives the time and the cause.

Kinds: *planned* when the kill is the kubelet's "Stopping container" (a deletion: rollout,
eviction, scale-down) or the last termination reason is `Completed`; *crash* otherwise. The
cause of a crash: `liveness` / `startup` (the Killing message, or those probes failing in the
lookback before it), `oom` (OOMKilled), `error` (any other reason), else `unknown`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

PROBE_TYPES = ("Liveness", "Readiness", "Startup")


@dataclass
class Episode:
    pod: str
    namespace: str | None
    container: str | None
    lo: float  # bracket of the termination time, epoch s
    hi: float
    t: float  # best estimate of the termination time
    time_from: str  # kill event | terminated timestamp | counter samples
    count: int
    kind: str = "crash"  # crash | planned
    cause: str = "unknown"
    reason: str | None = None  # last_terminated_reason
    killed_by_event: bool = False
    probes_failed_before: list[str] = field(default_factory=list)
    crash_loop: bool = False
    rollout: int | None = None


def _key(r: dict[str, Any]) -> tuple[str, str, str]:
    return (r.get("namespace") or "", r["pod"], r.get("container") or "")


SeriesKey = tuple[Any, ...]  # namespace, pod, container, reason, probe_type, result, condition


class Samples:
    """The rows of queries/analyses/restarts_pod_samples.sql, grouped once per metric by
    their label key, each group in time order."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows
        self._series: dict[str, dict[SeriesKey, list[dict[str, Any]]]] = {}

    def series(self, name: str) -> dict[SeriesKey, list[dict[str, Any]]]:
        if name not in self._series:
            out: dict[SeriesKey, list[dict[str, Any]]] = defaultdict(list)
            for r in self.rows:
                if r["name"] == name:
                    labels = (
                        r.get("reason"),
                        r.get("probe_type"),
                        r.get("result"),
                        r.get("condition"),
                    )
                    out[(*_key(r), *labels)].append(r)
            for rows in out.values():
                rows.sort(key=lambda r: r["t"])
            self._series[name] = dict(out)
        return self._series[name]

    def by_container(
        self, name: str
    ) -> dict[tuple[str, str, str], list[tuple[SeriesKey, list[dict[str, Any]]]]]:
        """The series of one metric grouped by (namespace, pod, container)."""
        out: dict[tuple[str, str, str], list[tuple[SeriesKey, list[dict[str, Any]]]]] = defaultdict(
            list
        )
        for k, rows in self.series(name).items():
            out[(k[0], k[1], k[2])].append((k, rows))
        return out


def counter_rises(rows: list[dict[str, Any]]) -> list[tuple[float, float, int]]:
    """(t_prev, t, n) for each rise of a counter series; a drop is a reset (the value after it
    counts from zero)."""
    out = []
    for a, b in pairwise(rows):
        d = b["value"] - a["value"]
        n = round(b["value"] if d < 0 else d)
        if n > 0:
            out.append((float(a["t"]), float(b["t"]), n))
    return out


def kill_kind(message: str | None) -> str:
    m = (message or "").lower()
    if "liveness probe" in m:
        return "liveness"
    if "startup probe" in m:
        return "startup"
    return "stop"


def episodes_from_counters(samples: Samples, t_from: float, t_to: float) -> list[Episode]:
    stamps = samples.by_container("kube_pod_container_status_last_terminated_timestamp")
    reasons = samples.by_container("kube_pod_container_status_last_terminated_reason")
    out = []
    for k, rows in samples.series("kube_pod_container_status_restarts_total").items():
        here = (k[0], k[1], k[2])
        for lo, hi, n in counter_rises(rows):
            if hi < t_from or hi > t_to:
                continue
            ep = Episode(k[1], k[0] or None, k[2] or None, lo, hi, hi, "counter samples", n)
            exact = [
                float(r["value"])
                for _, rs in stamps.get(here, [])
                for r in rs
                if r["t"] >= hi and lo - 1 <= r["value"] <= hi + 1
            ]
            if exact and n == 1:
                ep.t = ep.lo = ep.hi = exact[0]
                ep.time_from = "terminated timestamp"
            seen = [
                (r["t"], rk[3])
                for rk, rs in reasons.get(here, [])
                for r in rs
                if r["value"] >= 1 and r["t"] >= hi
            ]
            if seen:
                ep.reason = min(seen)[1]
            out.append(ep)
    return out


def merge_kills(
    episodes: list[Episode], events: list[dict[str, Any]], tol: float, t_from: float, t_to: float
) -> list[Episode]:
    """Attach each Killing event to the counter rise it explains, or make it a restart of its own."""
    out = list(episodes)
    for ev in events:
        if ev["reason"] != "Killing" or ev["t_first"] > t_to or ev["t_last"] < t_from:
            continue
        kind = kill_kind(ev["message"])
        match = next(
            (
                e
                for e in out
                if e.pod == ev["pod"]
                and (e.container is None or ev["container"] in (None, e.container))
                and e.lo - tol <= ev["t_first"] <= e.hi + tol
                and not e.killed_by_event
            ),
            None,
        )
        if match is None:
            match = Episode(
                ev["pod"],
                ev["namespace"],
                ev["container"],
                float(ev["t_first"]),
                float(ev["t_last"]),
                float(ev["t_first"]),
                "kill event",
                int(ev["count"]),
            )
            out.append(match)
        elif match.count == 1:
            match.t = match.lo = match.hi = float(ev["t_first"])
            match.time_from = "kill event"
        match.killed_by_event = True
        match.cause = kind
    return sorted(out, key=lambda e: (e.t, e.pod))


def probe_failures(
    samples: Samples, events: list[dict[str, Any]]
) -> dict[str, list[tuple[float, float, str]]]:
    """Per pod, the spans (first, last, probe type) in which a probe failed: Unhealthy events
    ("Liveness probe failed: ...") and rises of prober_probe_total{result="failed"}."""
    out: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
    for ev in events:
        if ev["reason"] == "Unhealthy":
            kind = next((p for p in PROBE_TYPES if (ev["message"] or "").startswith(p)), None)
            if kind is not None:
                out[ev["pod"]].append((float(ev["t_first"]), float(ev["t_last"]), kind))
    for k, rows in samples.series("prober_probe_total").items():
        if k[5] == "failed" and k[4] in PROBE_TYPES:
            for lo, hi, _ in counter_rises(rows):
                out[k[1]].append((lo, hi, str(k[4])))
    return out


def classify(
    episodes: list[Episode],
    failures: dict[str, list[tuple[float, float, str]]],
    lookback: float,
) -> None:
    for e in episodes:
        seen = {
            kind for a, b, kind in failures.get(e.pod, []) if b >= e.lo - lookback and a <= e.hi
        }
        e.probes_failed_before = [p for p in PROBE_TYPES if p in seen]
        if e.cause == "stop" or (e.reason == "Completed" and not e.killed_by_event):
            e.kind, e.cause = "planned", "stop" if e.cause == "stop" else "completed"
            continue
        e.kind = "crash"
        if e.cause in ("liveness", "startup"):
            continue
        if e.reason == "OOMKilled":
            e.cause = "oom"
        elif "Liveness" in seen:
            e.cause = "liveness"
        elif "Startup" in seen:
            e.cause = "startup"
        elif e.reason:
            e.cause = "error"


def crash_loops(
    episodes: list[Episode],
    samples: Samples,
    events: list[dict[str, Any]],
    t_from: float,
    t_to: float,
    loop_window: float,
    loop_restarts: int,
) -> set[str]:
    """Pods in a crash loop: a BackOff event, a CrashLoopBackOff waiting reason, or at least
    `loop_restarts` crashes within `loop_window` seconds."""
    pods = {
        ev["pod"]
        for ev in events
        if ev["reason"] == "BackOff"
        and "restarting failed container" in (ev["message"] or "")
        and ev["t_last"] >= t_from
        and ev["t_first"] <= t_to
    }
    for k, rows in samples.series("kube_pod_container_status_waiting_reason").items():
        if k[3] == "CrashLoopBackOff" and any(
            r["value"] >= 1 and t_from <= r["t"] <= t_to for r in rows
        ):
            pods.add(k[1])
    by_pod: dict[str, list[Episode]] = defaultdict(list)
    for e in episodes:
        if e.kind == "crash":
            by_pod[e.pod].append(e)
    for pod, eps in by_pod.items():
        for i, e in enumerate(eps):
            n = sum(x.count for x in eps[i:] if x.t - e.t <= loop_window)
            if n >= loop_restarts:
                pods.add(pod)
    for e in episodes:
        e.crash_loop = e.pod in pods and e.kind == "crash"
    return pods


def group_rollouts(episodes: list[Episode], gap: float) -> list[list[Episode]]:
    """Planned restarts of at least two pods, each within `gap` seconds of the previous one:
    a rollout. Numbers each rollout's episodes (Episode.rollout)."""
    planned = sorted((e for e in episodes if e.kind == "planned"), key=lambda e: e.t)
    groups: list[list[Episode]] = []
    for e in planned:
        if groups and e.t - groups[-1][-1].t <= gap:
            groups[-1].append(e)
        else:
            groups.append([e])
    rollouts = [g for g in groups if len({e.pod for e in g}) >= 2]
    for i, g in enumerate(rollouts):
        for e in g:
            e.rollout = i
    return rollouts


def ready_again(samples: Samples, e: Episode) -> float | None:
    """When the pod was ready again after the restart: the first ready sample (value 1) after
    a not-ready one (value 0) seen at or after the termination; the container's readiness
    when kube-state-metrics exports it, else the pod's Ready condition. None when no
    not-ready sample was seen (the restart fell between two scrapes)."""
    for name, cond in (
        ("kube_pod_container_status_ready", None),
        ("kube_pod_status_ready", "true"),
    ):
        for k, rows in samples.series(name).items():
            if k[1] != e.pod or (
                name.endswith("container_status_ready") and e.container not in (None, k[2])
            ):
                continue
            if cond is not None and k[6] != cond:
                continue
            down = False
            for r in rows:
                if r["t"] < e.lo:
                    continue
                if r["value"] < 1:
                    down = True
                elif down:
                    return float(r["t"])
    return None


def xid_codes(gpu: list[dict[str, Any]]) -> dict[str, set[int]]:
    """Non-zero Xid codes per node: a value that appears (the gauge holds the last Xid, so a
    repeat of the same code is not visible)."""
    out: dict[str, set[int]] = defaultdict(set)
    last: dict[tuple[str, str], float] = {}
    for r in gpu:
        if r["name"] != "DCGM_FI_DEV_XID_ERRORS" or not r["node"]:
            continue
        k = (r["node"], r["gpu"] or "")
        if r["value"] and last.get(k) != r["value"]:
            out[r["node"]].add(int(r["value"]))
        last[k] = r["value"]
    return out
