"""A small built incident with crashes, a crash loop and a rollout, checked by hand.

Four pods behind a gateway; times are seconds after T0 (the first proxy record is at 0, the
last ends at 1200, so the analysed window is [0, 1200] s and t0 = T0). kube-state-metrics is
scraped every 30 s. Event messages follow the kubelet's published forms (SOURCES.md §8:
"Liveness probe failed: ", "Container X failed liveness probe, will be restarted", "Stopping
container X", "Readiness probe failed: ").

| pod    | node | IP       | what happens                                                      |
| ------ | ---- | -------- | ----------------------------------------------------------------- |
| vllm-a | n1   | 10.0.0.1 | OOMKilled at 310 (restart counter 0 -> 1 between the samples at   |
|        |      |          | 300 and 330, last_terminated_timestamp = 310); again twice in     |
|        |      |          | (450, 480] (counter 1 -> 3): 3 crashes within 600 s, a crash loop |
| vllm-b | n1   | 10.0.0.2 | liveness fails 560..590 (one event, count 3), Killing at 600      |
|        |      |          | (counter 0 -> 1 in (600, 630], last reason Error)                 |
| vllm-c | n2   | 10.0.0.3 | rollout: readiness fails at 880, "Stopping container" at 900      |
| vllm-d | n2   | 10.0.0.4 | rollout: "Stopping container" at 960                              |

Node n1's GPU reports Xid 79 from 330 on (DCGM_FI_DEV_XID_ERRORS, a last-value gauge).

Readiness (kube_pod_container_status_ready): vllm-a 0 at 330, 360, 1 at 390; 0 at 480, 510,
1 at 540; vllm-b 0 at 630, 1 at 660; 1 otherwise.

Gateway attempts (replica = pod name, except vllm-a's upstream written as IP:port):
- vllm-a: a1 290->310.5 error, a2 300->312 error (cut at 310: window [305, 315]); a3 200->305
  delivered (ended before); a4 400->420 delivered (first served after 310: +90 s); a5 430->460
  error (cut in (450, 480] widened by 5 s); a6 560->570 delivered (first served after 480).
- vllm-b: b1 590->601 error, b2 595->630 client_gone (cut: Killing at 600 + 30 s grace + 5 s);
  b4 650->700 delivered (first served +50 s); z2 1190->1200 delivered.
- vllm-c: z1 0->10 delivered; c1 880->910 delivered (in flight at the stop, finished: drained).
- vllm-d: d1 950->962 error (cut at the stop at 960: not drained).

By hand:
- crashes: vllm-a 1 + 2, vllm-b 1 = 4; planned: 2 (vllm-c, vllm-d); pods with restart signals
  4 -> 1.0 crashes and 0.5 planned restarts per replica in the window.
- streams killed: 2 (a@310) + 1 (a@480) + 2 (b@600) = 5 -> 5 / 4 = 1.25 per crash.
- down to ready: a@310 390 - 310 = 80; a@(450,480] 540 - 480 = 60 (time = the sample at 480);
  b@600 660 - 600 = 60 -> mean over the three crash rows 200 / 3 = 66.7 s.
- causes: a oom (OOMKilled), b liveness (the Killing message; liveness failed before it).
- rollout: 2 pods, 60 s apart; streams dropped 0 + 1 = 1 -> not drained; readiness failed first
  on 1 pod (vllm-c).
- node n1: 4 crashes on 2 pods and Xid 79 -> cordon candidate; n2: no crash -> not.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from relplan import workspace
from tests.helpers.templates import from_template

T0 = 1_764_460_800.0
PODS = {"vllm-a": ("n1", "10.0.0.1"), "vllm-b": ("n1", "10.0.0.2")}
PODS |= {"vllm-c": ("n2", "10.0.0.3"), "vllm-d": ("n2", "10.0.0.4")}
SCRAPES = range(0, 1201, 30)

ATTEMPTS = [
    ("a1", "10.0.0.1:8000", 290, 310.5, "error"),
    ("a2", "10.0.0.1:8000", 300, 312, "error"),
    ("a3", "10.0.0.1:8000", 200, 305, "delivered"),
    ("a4", "10.0.0.1:8000", 400, 420, "delivered"),
    ("a5", "10.0.0.1:8000", 430, 460, "error"),
    ("a6", "10.0.0.1:8000", 560, 570, "delivered"),
    ("b1", "vllm-b", 590, 601, "error"),
    ("b2", "vllm-b", 595, 630, "client_gone"),
    ("b4", "vllm-b", 650, 700, "delivered"),
    ("z2", "vllm-b", 1190, 1200, "delivered"),
    ("z1", "vllm-c", 0, 10, "delivered"),
    ("c1", "vllm-c", 880, 910, "delivered"),
    ("d1", "vllm-d", 950, 962, "error"),
]

EVENTS = [  # t_first, t_last, count, reason, type, message, pod, node
    (560, 590, 3, "Unhealthy", "Warning", "Liveness probe failed: ", "vllm-b", "n1"),
    (
        600,
        600,
        1,
        "Killing",
        "Normal",
        "Container vllm failed liveness probe, will be restarted",
        "vllm-b",
        "n1",
    ),
    (880, 880, 1, "Unhealthy", "Warning", "Readiness probe failed: ", "vllm-c", "n2"),
    (900, 900, 1, "Killing", "Normal", "Stopping container vllm", "vllm-c", "n2"),
    (960, 960, 1, "Killing", "Normal", "Stopping container vllm", "vllm-d", "n2"),
]


def _restarts(pod: str, t: int) -> int:
    if pod == "vllm-a":
        return 0 if t <= 300 else 1 if t <= 450 else 3
    if pod == "vllm-b":
        return 0 if t <= 600 else 1
    return 0


def _ready(pod: str, t: int) -> int:
    down = {"vllm-a": (330, 360, 480, 510), "vllm-b": (630,)}
    return 0 if t in down.get(pod, ()) else 1


def samples() -> list[tuple[float, str, dict[str, str], float]]:
    out: list[tuple[float, str, dict[str, str], float]] = []
    for pod, (node, ip) in PODS.items():
        c = {"namespace": "serving", "pod": pod, "container": "vllm", "uid": f"uid-{pod}"}
        for t in SCRAPES:
            at = T0 + t
            out.append((at, "kube_pod_container_status_restarts_total", c, _restarts(pod, t)))
            out.append((at, "kube_pod_container_status_ready", c, _ready(pod, t)))
            info = {"namespace": "serving", "pod": pod, "node": node, "pod_ip": ip}
            out.append((at, "kube_pod_info", info, 1.0))
            if pod == "vllm-a" and t >= 330:
                out.append(
                    (
                        at,
                        "kube_pod_container_status_last_terminated_reason",
                        c | {"reason": "OOMKilled"},
                        1.0,
                    )
                )
                stamp = T0 + (310 if t < 480 else 470)
                out.append((at, "kube_pod_container_status_last_terminated_timestamp", c, stamp))
            if pod == "vllm-b" and t >= 630:
                out.append(
                    (
                        at,
                        "kube_pod_container_status_last_terminated_reason",
                        c | {"reason": "Error"},
                        1.0,
                    )
                )
    for t in SCRAPES:
        for node, xid in (("n1", 79.0 if t >= 330 else 0.0), ("n2", 0.0)):
            gpu = {"gpu": "0", "Hostname": node, "UUID": f"GPU-{node}"}
            out.append((T0 + t, "DCGM_FI_DEV_XID_ERRORS", gpu | {"err_code": str(int(xid))}, xid))
            out.append((T0 + t, "DCGM_FI_DEV_ROW_REMAP_FAILURE", gpu, 0.0))
    return out


def build(db: Path, *, with_gateway: bool = True) -> Path:
    """`db` holding the incident (without the gateway's attempts unless `with_gateway`): built
    once per test run by row inserts, then copied (tests/helpers/templates.py)."""
    return from_template(
        db, f"restarts incident, gateway {with_gateway}", lambda t: _build(t, with_gateway)
    )


def _build(db: Path, with_gateway: bool) -> Path:
    with workspace.open_workspace(db) as con:
        if with_gateway:
            con.executemany(
                "insert into attempts (call_id, attempt, t_planned, t_sent, t_end, outcome,"
                " attached, replica, source_id, source_row) values (?, 0, ?, ?, ?, ?, false, ?, 1, ?)",
                [
                    (cid, T0 + a, T0 + a, T0 + b, outcome, rep, n + 1)
                    for n, (cid, rep, a, b, outcome) in enumerate(ATTEMPTS)
                ],
            )
        # One insert of a list of structs: executemany costs about 1 ms of CPU a row here.
        rows: list[Any] = [
            {"t": t, "name": name, "k": list(labels), "v": list(labels.values())}
            | {"value": float(value), "row": n + 1}
            for n, (t, name, labels, value) in enumerate(samples())
        ]
        con.execute(
            "insert into metric_samples select s.t, s.name, map(s.k, s.v), s.value, 2, s.row"
            " from (select unnest($rows) as s)",
            {"rows": rows},
        )
        con.executemany(
            "insert into kube_events values (?, ?, ?, ?, ?, ?, 'Pod', 'serving', ?, 'vllm', ?,"
            " 'kubelet', 3, ?)",
            [
                (T0 + a, T0 + b, n, reason, typ, msg, pod, node, i + 1)
                for i, (a, b, n, reason, typ, msg, pod, node) in enumerate(EVENTS)
            ],
        )
    return db


def _iso(t: float) -> str:
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_files(folder: Path) -> list[Path]:
    """The same incident as input files in the real formats: the gateway's attempts as the
    proxy JSON Lines log, the metrics as an OpenMetrics dump (what `promtool tsdb
    dump-openmetrics` writes), the events as `kubectl get events -o json` prints them."""
    folder.mkdir(parents=True, exist_ok=True)
    proxy = folder / "proxy.jsonl"
    proxy.write_text(
        "".join(
            json.dumps(
                {"call_id": cid, "attempt": 0, "t_sent": T0 + a, "t_end": T0 + b}
                | {"outcome": outcome, "replica": rep}
            )
            + "\n"
            for cid, rep, a, b, outcome in ATTEMPTS
        ),
        encoding="utf-8",
    )
    lines = []
    for t, name, labels, value in sorted(samples(), key=lambda s: (s[1], s[0])):
        body = ",".join(f'{k}="{v}"' for k, v in labels.items())
        lines.append(f"{name}{{{body}}} {value} {t:.3f}")
    metrics = folder / "cluster.om.txt"
    metrics.write_text("\n".join([*lines, "# EOF"]) + "\n", encoding="utf-8")
    items = [
        {
            "apiVersion": "v1",
            "kind": "Event",
            "count": n,
            "eventTime": None,
            "firstTimestamp": _iso(T0 + a),
            "lastTimestamp": _iso(T0 + b),
            "involvedObject": {
                "apiVersion": "v1",
                "fieldPath": "spec.containers{vllm}",
                "kind": "Pod",
                "name": pod,
                "namespace": "serving",
            },
            "message": msg,
            "metadata": {"name": f"{pod}.{i:016x}", "namespace": "serving"},
            "reason": reason,
            "reportingComponent": "",
            "reportingInstance": "",
            "source": {"component": "kubelet", "host": node},
            "type": typ,
        }
        for i, (a, b, n, reason, typ, msg, pod, node) in enumerate(EVENTS)
    ]
    events = folder / "events.json"
    doc = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    events.write_text(json.dumps(doc, indent=4) + "\n", encoding="utf-8")
    return [proxy, metrics, events]
