"""Metric scenarios shared by the alerts tests: SeriesStores and a workspace filler."""

from __future__ import annotations

import math
import random
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from relplan import workspace
from relplan.alerts.promql_series import SeriesStore, make_labels

T0 = 1_764_460_800_000  # the simulator's epoch, in ms
STEP_MS = 15_000


def fill_workspace(path: Path, store: SeriesStore) -> None:
    """Write a store's samples into a workspace's metric_samples (one fake source)."""
    con = workspace.connect(path)
    try:
        fill(con, store)
    finally:
        con.close()


def fill(con: duckdb.DuckDBPyConnection, store: SeriesStore) -> None:
    con.execute(
        "insert into sources (source_id, path, kind, format, sha256, rows, ingested_at)"
        " values (nextval('source_ids'), 'fixture.om.txt', 'metrics', 'openmetrics', ?, 0, now())",
        [f"fixture-{id(store)}-{len(store.series)}"],
    )
    (sid,) = con.execute("select max(source_id) from sources").fetchone() or (1,)
    cols: dict[str, list[object]] = {k: [] for k in ("t", "name", "keys", "vals", "value")}
    for labels, s in store.series.items():
        d = dict(labels)
        name = d.pop("__name__")
        for t, v in zip(s.t.tolist(), s.v.tolist(), strict=True):
            cols["t"].append(t / 1000)
            cols["name"].append(name)
            cols["keys"].append(list(d))
            cols["vals"].append(list(d.values()))
            cols["value"].append(v)
    frame = pa.table(cols)  # noqa: F841  (scanned by DuckDB below)
    con.execute(
        "insert into metric_samples select t, name, map(keys, vals), value, ?,"
        " row_number() over () from frame",
        [sid],
    )


HEALTH_NAMES = (
    "vllm:num_preemptions_total",
    "vllm:kv_cache_usage_perc",
    "vllm:num_requests_waiting",
    "vllm:num_requests_running",
    "vllm:generation_tokens_total",
    "vllm:prompt_tokens_total",
    "vllm:prefix_cache_queries_total",
)


def storm_store() -> SeriesStore:
    """Three replicas scraped every 15 s for 15 minutes (t = 0..900 s):
    - a: overloaded from 120 s: waiting grows by 1 per scrape, KV cache at 0.99, 2
      preemptions per scrape (0.133/s), prompt tokens rise 60 per scrape while prefix-cache
      queries rise 100 (shortfall 0.4);
    - b: healthy: 5 waiting, cache at 0.6, tokens and queries rise 100 per scrape together;
    - c: stuck: 2 running, generation tokens flat for the samples at 300..600 s."""
    s = SeriesStore()
    times = [T0 + STEP_MS * i for i in range(61)]
    for pod in ("a", "b", "c"):
        lab = {"pod": pod, "model_name": "llama", "engine": "0"}
        pre, kv, waiting, running, gen, prompt, queries = [], [], [], [], [], [], []
        p = g = pt = q = 0.0
        for i in range(61):
            sec = 15 * i
            over = pod == "a" and sec >= 120
            p += 2 if over else 0
            pre.append(p)
            kv.append(0.99 if over else 0.6)
            waiting.append(float(5 + (i - 8) if over else 5))
            running.append(2.0)
            if not (pod == "c" and 300 < sec <= 600):
                g += 40
            gen.append(g)
            q += 100
            pt += 60 if over else 100
            queries.append(q)
            prompt.append(pt)
        for name, vals in zip(
            HEALTH_NAMES, (pre, kv, waiting, running, gen, prompt, queries), strict=True
        ):
            s.add(make_labels(name, lab), times, vals)
    return s


def healthy_store() -> SeriesStore:
    s = SeriesStore()
    times = [T0 + STEP_MS * i for i in range(61)]
    for pod in ("a", "b"):
        lab = {"pod": pod}
        n = np.arange(61, dtype=float)
        for name, vals in zip(
            HEALTH_NAMES,
            (0 * n, 0.5 + 0 * n, 3 + 0 * n, 4 + 0 * n, 50 * n, 100 * n, 100 * n),
            strict=True,
        ):
            s.add(make_labels(name, lab), times, vals.tolist())
    return s


def random_store(seed: int) -> SeriesStore:
    """Jittered scrape times (100 ms resolution), failed scrapes, a 6-minute scrape gap
    (longer than the lookback), counter resets, a replica that appears late, NaN gauges."""
    rng = random.Random(seed)
    s = SeriesStore()
    for pod in ("a", "b", "c"):
        start = 0 if pod != "c" else rng.choice([0, 200, 400])
        gap = (rng.randint(100, 500), 0) if pod == "b" else (0, 0)
        gap = (gap[0], gap[0] + 360) if gap[0] else gap
        state = dict.fromkeys(HEALTH_NAMES, 0.0)
        lab = {"pod": pod, "engine": "0"}
        pts: dict[str, list[tuple[int, float]]] = {n: [] for n in HEALTH_NAMES}
        level = rng.uniform(0.3, 1.0)
        for i in range(start // 15, 80):
            sec = 15 * i
            if gap[0] <= sec < gap[1] or rng.random() < 0.08:
                continue
            t = T0 + sec * 1000 + rng.randint(-20, 20) * 100
            if rng.random() < 0.03:
                for n in (
                    "vllm:num_preemptions_total",
                    "vllm:generation_tokens_total",
                    "vllm:prompt_tokens_total",
                    "vllm:prefix_cache_queries_total",
                ):
                    state[n] = 0.0  # replica restart
            state["vllm:num_preemptions_total"] += rng.choice([0, 0, 1, 3, 12])
            level = min(1.0, max(0.0, level + rng.uniform(-0.08, 0.1)))
            state["vllm:kv_cache_usage_perc"] = math.nan if rng.random() < 0.03 else round(level, 3)
            state["vllm:num_requests_waiting"] = max(
                0.0, state["vllm:num_requests_waiting"] + rng.randint(-3, 4)
            )
            state["vllm:num_requests_running"] = float(rng.choice([0, 1, 4, 8]))
            state["vllm:generation_tokens_total"] += rng.choice([0, 0, 0, 25, 300])
            q = rng.randint(0, 400)
            state["vllm:prefix_cache_queries_total"] += q
            state["vllm:prompt_tokens_total"] += rng.choice([q, q, int(q * rng.random())])
            for n in HEALTH_NAMES:
                pts[n].append((t, state[n]))
        for n, series in pts.items():
            s.add(make_labels(n, lab), [t for t, _ in series], [v for _, v in series])
    return s


def openmetrics_text(store: SeriesStore) -> str:
    """The store as OpenMetrics text with a timestamp (epoch seconds, ms) on every sample."""
    by_name: dict[str, list[str]] = {}
    for labels, s in sorted(store.series.items()):
        d = dict(labels)
        name = d.pop("__name__")
        inner = ",".join(f'{k}="{v}"' for k, v in sorted(d.items()))
        for t, v in zip(s.t.tolist(), s.v.tolist(), strict=True):
            value = "NaN" if math.isnan(v) else repr(v)
            by_name.setdefault(name, []).append(
                f"{name}{{{inner}}} {value} {t // 1000}.{t % 1000:03d}"
            )
    lines: list[str] = []
    for name, samples in by_name.items():
        lines.append(f"# TYPE {name} gauge")
        lines.extend(samples)
    lines.append("# EOF")
    return "\n".join(lines) + "\n"
