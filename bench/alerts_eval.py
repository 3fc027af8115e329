"""Benchmark: offline evaluation of the engine health rules on a fleet-sized workspace.

Builds a workspace of R replicas x H hours of the seven vLLM metrics the rules read,
scraped every 15 s (generated in DuckDB), then times `evaluate_health` at a 15 s step
against one bare full scan of metric_samples, and reports peak RSS.

    python bench/alerts_eval.py --replicas 50 --hours 24
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from relplan import workspace
from relplan.alerts.health import evaluate_health
from relplan.tables import format_table

T0 = 1_764_460_800.0

GENERATE = """
insert into sources (source_id, path, kind, format, sha256, rows, ingested_at)
values (1, 'bench', 'metrics', 'openmetrics', 'bench', 0, now());
insert into metric_samples
with grid as (
    select r, i, $t0 + 15.0 * i as t, hash(r * 1000003 + i) % 1000 / 1000.0 as u
    from range($replicas) as a(r), range($points) as b(i)
),
names as (select * from (values
    ('vllm:num_preemptions_total'), ('vllm:kv_cache_usage_perc'),
    ('vllm:num_requests_waiting'), ('vllm:num_requests_running'),
    ('vllm:generation_tokens_total'), ('vllm:prompt_tokens_total'),
    ('vllm:prefix_cache_queries_total')) as n(name))
select t, name, map(['pod', 'model_name'], ['pod-' || r, 'llama']),
    case name
        when 'vllm:num_preemptions_total' then floor(i * 0.3)
        when 'vllm:kv_cache_usage_perc' then 0.5 + 0.5 * u
        when 'vllm:num_requests_waiting' then floor(20 * u)
        when 'vllm:num_requests_running' then 8
        when 'vllm:generation_tokens_total' then i * 400.0
        when 'vllm:prompt_tokens_total' then i * 900.0
        else i * 1000.0
    end,
    1, row_number() over ()
from grid, names
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicas", type=int, default=50)
    ap.add_argument("--hours", type=float, default=24)
    args = ap.parse_args()
    points = int(args.hours * 240)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.duckdb"
        con = workspace.connect(path)
        t = time.perf_counter()
        con.execute(GENERATE, {"t0": T0, "replicas": args.replicas, "points": points})
        build = time.perf_counter() - t
        (rows,) = con.execute("select count(*) from metric_samples").fetchone() or (0,)
        t = time.perf_counter()
        con.execute("select count(*), sum(value), min(t), max(t) from metric_samples").fetchall()
        scan = time.perf_counter() - t
        t = time.perf_counter()
        result = evaluate_health(con, step=15.0)
        evaluation = time.perf_counter() - t
        con.close()
    fired = sum(len(s.intervals) for s in result.signals)
    rows_out = [
        ["samples", f"{rows:,}"],
        ["series", f"{args.replicas * 7:,}"],
        ["evaluations", f"{result.evaluations:,}"],
        ["generate workspace", f"{build:.2f} s"],
        ["bare full scan", f"{scan:.3f} s"],
        ["evaluate_health", f"{evaluation:.2f} s"],
        ["evaluate / scan", f"{evaluation / scan:.0f}x"],
        ["peak RSS", f"{_peak_rss_mb():.0f} MB"],
        ["firing intervals", f"{fired}"],
    ]
    print(f"relplan alerts eval benchmark: {args.replicas} replicas x {args.hours:g} h, step 15 s")
    print(format_table(["measure", "value"], rows_out))


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
