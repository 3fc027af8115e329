"""Benchmark: the health signals pushed down to Prometheus against a raw pull of the same
metrics, bytes fetched side by side.

Writes an OpenMetrics file of R replicas x H hours of the seven vLLM metrics the health
rules read (scraped every 15 s, one replica in ten stuck for its last 20 minutes), backfills
Debian's Prometheus with `promtool tsdb create-blocks-from openmetrics`, serves it on
loopback, then over the whole window at a 15 s step:
- pushed down: `evaluate_health_remote` (one query_range per rule, results only);
- raw pull: every series of the same metrics fetched as `relplan ingest --prometheus-url`
  fetches them (query_range of each name on the same grid), what an offline evaluation
  needs first.

    python bench/pushdown.py --replicas 50 --hours 6
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from relplan.alerts import pushdown
from relplan.tables import format_table
from tests.helpers.prometheus import backfilled_prometheus

T0 = 1_764_460_800  # epoch seconds
NAMES = (
    "vllm:num_preemptions_total",
    "vllm:kv_cache_usage_perc",
    "vllm:num_requests_waiting",
    "vllm:num_requests_running",
    "vllm:generation_tokens_total",
    "vllm:prompt_tokens_total",
    "vllm:prefix_cache_queries_total",
)


def write_openmetrics(path: Path, replicas: int, hours: float) -> int:
    """The fleet's samples as OpenMetrics text (gauges, a timestamp on every sample)."""
    points = int(hours * 240)
    rng = random.Random(0)
    samples = 0
    with path.open("w", encoding="utf-8") as out:
        for name in NAMES:
            out.write(f"# TYPE {name} gauge\n")
            for r in range(replicas):
                stuck_from = points - 80 if r % 10 == 0 else points
                labels = f'{{model_name="llama",pod="pod-{r}"}}'
                gen = 0.0
                for i in range(points):
                    u = rng.random()
                    if name == "vllm:num_preemptions_total":
                        v = float(i // 4)
                    elif name == "vllm:kv_cache_usage_perc":
                        v = round(0.5 + 0.5 * u, 3)
                    elif name == "vllm:num_requests_waiting":
                        v = float(int(20 * u))
                    elif name == "vllm:num_requests_running":
                        v = 8.0
                    elif name == "vllm:generation_tokens_total":
                        gen += 400.0 if i < stuck_from else 0.0
                        v = gen
                    elif name == "vllm:prompt_tokens_total":
                        v = i * 900.0
                    else:
                        v = i * 1000.0
                    out.write(f"{name}{labels} {v!r} {T0 + 15 * i}.000\n")
                    samples += 1
        out.write("# EOF\n")
    return samples


def run(replicas: int, hours: float, prometheus: str, promtool: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        om = work / "fleet.om.txt"
        t = time.perf_counter()
        samples = write_openmetrics(om, replicas, hours)
        written = time.perf_counter() - t
        t = time.perf_counter()
        with backfilled_prometheus(om, work, prometheus, promtool) as url:
            served = time.perf_counter() - t
            start, end = float(T0), float(T0 + int(hours * 3600) - 15)
            pushed = pushdown.Remote(url)
            t = time.perf_counter()
            result = pushdown.evaluate_health_remote(pushed, start=start, end=end, step=15.0)
            pushed_s = time.perf_counter() - t
            raw = pushdown.Remote(url)
            t = time.perf_counter()
            pushdown.raw_pull(raw, sorted(raw.names(start, end)), start - 600, end, 15.0)
            raw_s = time.perf_counter() - t
    return {
        "samples": samples,
        "write_s": written,
        "backfill_s": served,
        "pushed_bytes": pushed.stats.bytes_fetched,
        "pushed_requests": pushed.stats.requests,
        "pushed_points": pushed.stats.points,
        "pushed_s": pushed_s,
        "raw_bytes": raw.stats.bytes_fetched,
        "raw_requests": raw.stats.requests,
        "raw_points": raw.stats.points,
        "raw_s": raw_s,
        "intervals": sum(len(s.intervals) for s in result.signals),
        "stuck": sum(len(s.intervals) for s in result.signals if s.signal == "stuck_replica"),
    }


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicas", type=int, default=50)
    ap.add_argument("--hours", type=float, default=6)
    ap.add_argument("--prometheus", default=shutil.which("prometheus"))
    ap.add_argument("--promtool", default=shutil.which("promtool"))
    args = ap.parse_args(argv)
    if not args.prometheus or not args.promtool:
        sys.exit(
            "bench/pushdown.py needs Debian's prometheus and promtool (apt install prometheus)"
        )
    m = run(args.replicas, args.hours, args.prometheus, args.promtool)
    rows = [
        ["requests", f"{m['pushed_requests']:,}", f"{m['raw_requests']:,}"],
        ["points fetched", f"{m['pushed_points']:,}", f"{m['raw_points']:,}"],
        ["bytes fetched", f"{m['pushed_bytes']:,}", f"{m['raw_bytes']:,}"],
        ["wall", f"{m['pushed_s']:.2f} s", f"{m['raw_s']:.2f} s"],
    ]
    print(
        f"relplan pushdown benchmark: {args.replicas} replicas x {args.hours:g} h,"
        f" {m['samples']:,} samples backfilled ({m['backfill_s']:.1f} s), step 15 s"
    )
    print(format_table(["measure", "pushed down", "raw pull"], rows))
    print(
        f"raw / pushed down: {m['raw_bytes'] / max(m['pushed_bytes'], 1):.0f}x the bytes;"
        f" {m['intervals']} firing intervals ({m['stuck']} stuck replicas)"
    )
    return m


if __name__ == "__main__":
    main()
