"""Benchmark: offline evaluation of the engine health rules on a fleet-sized workspace.

Builds a workspace of R replicas x H hours of the seven vLLM metrics the rules read,
scraped every 15 s (generated in DuckDB, in a process of its own), then evaluates
`evaluate_health` at a 15 s step twice, each in a fresh process so that its peak RSS is its
own: with every sample loaded at once (`batch_samples=None`, the evaluator before it
streamed) and streamed a few replicas at a time (the default). Prints both side by side with
one bare full scan of metric_samples, and checks that both give the same result.

    python bench/alerts_eval.py --replicas 200 --hours 24
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
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


def build(db: Path, replicas: int, hours: float) -> dict[str, float]:
    con = workspace.connect(db)
    t = time.perf_counter()
    con.execute(GENERATE, {"t0": T0, "replicas": replicas, "points": int(hours * 240)})
    built = time.perf_counter() - t
    (rows,) = con.execute("select count(*) from metric_samples").fetchone() or (0,)
    t = time.perf_counter()
    con.execute("select count(*), sum(value), min(t), max(t) from metric_samples").fetchall()
    scan = time.perf_counter() - t
    con.close()
    return {"build_s": built, "scan_s": scan, "rows": float(rows)}


def evaluate(db: Path, streamed: bool) -> dict[str, float | str]:
    con = workspace.connect(db, read_only=True)
    t = time.perf_counter()
    kw = {} if streamed else {"batch_samples": None}
    result = evaluate_health(con, step=15.0, **kw)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - t
    con.close()
    text = result.model_dump_json()
    return {
        "eval_s": elapsed,
        "rss_mb": _peak_rss_mb(),
        "evaluations": float(result.evaluations),
        "intervals": float(sum(len(s.intervals) for s in result.signals)),
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
    }


def _child(*args: str) -> dict[str, float | str]:
    proc = subprocess.run(
        [sys.executable, __file__, *args], capture_output=True, text=True, check=True
    )
    out: dict[str, float | str] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicas", type=int, default=50)
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--worker", choices=["build", "whole", "streamed"], help=argparse.SUPPRESS)
    ap.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        if args.worker == "build":
            print(json.dumps(build(args.db, args.replicas, args.hours)))
        else:
            print(json.dumps(evaluate(args.db, args.worker == "streamed")))
        return
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.duckdb"
        common = ["--replicas", str(args.replicas), "--hours", str(args.hours), "--db", str(db)]
        built = _child("--worker", "build", *common)
        whole = _child("--worker", "whole", *common)
        streamed = _child("--worker", "streamed", *common)
    scan = float(built["scan_s"])
    rows_out = [
        ["samples", f"{float(built['rows']):,.0f}", ""],
        ["series", f"{args.replicas * 7:,}", ""],
        ["evaluations", f"{float(whole['evaluations']):,.0f}", ""],
        ["generate workspace", f"{float(built['build_s']):.2f} s", ""],
        ["bare full scan", f"{scan:.3f} s", ""],
        [
            "evaluate_health",
            f"{float(whole['eval_s']):.2f} s",
            f"{float(streamed['eval_s']):.2f} s",
        ],
        [
            "evaluate / scan",
            f"{float(whole['eval_s']) / scan:.0f}x",
            f"{float(streamed['eval_s']) / scan:.0f}x",
        ],
        ["peak RSS", f"{float(whole['rss_mb']):.0f} MB", f"{float(streamed['rss_mb']):.0f} MB"],
        [
            "firing intervals",
            f"{float(whole['intervals']):.0f}",
            f"{float(streamed['intervals']):.0f}",
        ],
    ]
    same = whole["sha256"] == streamed["sha256"]
    print(f"relplan alerts eval benchmark: {args.replicas} replicas x {args.hours:g} h, step 15 s")
    print(format_table(["measure", "all at once", "streamed"], rows_out))
    print(
        f"streamed / all at once: peak RSS {float(streamed['rss_mb']) / float(whole['rss_mb']):.2f}x,"
        f" time {float(streamed['eval_s']) / float(whole['eval_s']):.2f}x;"
        f" results {'identical' if same else 'DIFFER'}"
    )
    if not same:
        sys.exit(1)


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    main()
