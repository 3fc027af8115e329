"""Benchmark `relplan analyze` on a 10M-step workspace.

    python bench/analyze.py [PATH] [--calls 22000] [--decode-mean 362] [--rebuild]

Builds the workspace at PATH (default /tmp/relplan-bench.duckdb) with
bench/generate_workspace.sql unless it already holds steps (then it is reused), and prints
wall time and peak RSS for two scans of the steps table, for each analysis, and for
`analyze()` as a whole, all in this one process. Targets (issue 5): all analyses together
<= 3x one bare full scan of the steps table; peak RSS <= 2 GB.

The two baselines:
- "bare full scan": every row and column of `steps` streamed out of DuckDB in Arrow batches
  of 1M rows and dropped (reading the table once, which is what the target names);
- "in-engine scan": one aggregate per analysed column (count, sums, min/max), computed
  inside DuckDB on its compressed columns without producing rows. It is a far harsher bar
  (nothing a join or a group-by can approach) and is printed so the reader can judge.
Each row is the median of `--repeat` runs. Wall time is what the target names; CPU time
(user + system of this process, every DuckDB thread included) is printed beside it because
on a machine shared with other jobs it moves far less than wall time. Peak RSS is sampled
every 5 ms while a row runs (process RSS: Python, DuckDB and its buffer pool).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from relplan import workspace
from relplan.analyses import AnalyzeOptions, analyze, resolve_context
from relplan.analyses.amplification import analyze_amplification
from relplan.analyses.capacity import analyze_capacity, stage_phases
from relplan.analyses.counters import analyze_counters, counter_names
from relplan.analyses.delivery import analyze_delivery
from relplan.analyses.littles_law import analyze_littles_law
from relplan.analyses.retry_timing import analyze_retry_timing
from relplan.analyses.wasted_prefill import analyze_wasted_prefill
from relplan.sql import rows as run_query
from relplan.tables import format_table

IN_ENGINE_SCAN = (
    "select count(*), sum(prompt_computed), sum(prompt_cached), sum(decode_tokens),"
    " min(t_issue), max(t_done), max(execution_id), max(replica), max(step) from steps"
)


def bare_full_scan(con: Any) -> int:
    rows = 0
    for batch in con.sql("select * from steps").to_arrow_reader(1_000_000):
        rows += batch.num_rows
    return rows


def build(path: Path, calls: int, decode_mean: int) -> None:
    text = (Path(__file__).parent / "generate_workspace.sql").read_text()
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    values = {"calls": calls, "span": calls * 10000.0 / 22000, "decode_mean": decode_mean}
    con = workspace.connect(path)
    try:
        for stmt in (s.strip() for s in text.split(";")):
            if stmt:
                used = set(re.findall(r"\$([a-z_]+)", stmt))
                con.execute(stmt, {k: values[k] for k in used})
    finally:
        con.close()


_PAGE = os.sysconf("SC_PAGE_SIZE")


def _rss() -> int:
    """This process's resident set in bytes (Linux /proc; the standard library only)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def measure(fn: Callable[[], Any]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds of this process (all DuckDB threads included) and peak RSS
    in MiB while `fn` runs."""
    peak = _rss()
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _rss())
            time.sleep(0.005)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    c0 = os.times()
    t = time.perf_counter()
    fn()
    wall = time.perf_counter() - t
    c1 = os.times()
    done.set()
    th.join()
    cpu = (c1.user - c0.user) + (c1.system - c0.system)
    return wall, cpu, max(peak, _rss()) / 2**20


def _ratio(a: float, b: float) -> str:
    """a/b as '1.23x'; '-' when b is below the clock's resolution (a tiny run)."""
    return f"{a / b:.2f}x" if b > 0 else "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", type=Path, default=Path("/tmp/relplan-bench.duckdb"))
    ap.add_argument("--calls", type=int, default=22000)
    ap.add_argument("--decode-mean", type=int, default=362)
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.rebuild and args.path.exists():
        args.path.unlink()
    fresh = not args.path.exists()
    if fresh:
        t = time.perf_counter()
        build(args.path, args.calls, args.decode_mean)
        print(f"built {args.path} in {time.perf_counter() - t:.1f} s")
    con = workspace.connect(args.path, read_only=True)
    counts = {
        t: con.execute(f"select count(*) from {t}").fetchall()[0][0]
        for t in ("attempts", "events", "steps", "metric_samples")
    }
    execs = con.execute("select count(distinct execution_id) from events").fetchall()[0][0]
    print(", ".join(f"{k} {v:,}" for k, v in counts.items()) + f", executions {execs:,}")

    bare_full_scan(con)  # warm the buffer pool; the timed scans come next
    opts = AnalyzeOptions()
    ctx = resolve_context(con, opts)
    prompt, query = counter_names(con)
    rows: list[tuple[str, float, float]] = []

    def run(name: str, fn: Callable[[], Any]) -> None:
        runs = [measure(fn) for _ in range(args.repeat)]
        walls = sorted(w for w, _, _ in runs)
        cpus = sorted(c for _, c, _ in runs)
        mid = len(runs) // 2
        rows.append((name, walls[mid], cpus[mid], max(r for _, _, r in runs)))

    run("bare full scan of steps", lambda: bare_full_scan(con))
    run("in-engine scan of steps", lambda: con.execute(IN_ENGINE_SCAN).fetchall())
    run("context (t0, T, phases)", lambda: resolve_context(con, opts))
    run("data checks", lambda: run_query(con, "analyses/data_edge_cases", {}))
    run("A amplification", lambda: analyze_amplification(con, ctx))
    run("B delivery", lambda: analyze_delivery(con, ctx))
    run("C wasted prefill", lambda: analyze_wasted_prefill(con, ctx))
    assert prompt
    assert query
    run("D counters", lambda: analyze_counters(con, ctx, prompt, query))
    run("E Little's law", lambda: analyze_littles_law(con, ctx, True))
    run("F retry timing", lambda: analyze_retry_timing(con, ctx))
    stages = stage_phases(ctx)
    if stages:
        run("G capacity", lambda: analyze_capacity(con, ctx, stages))
    run("analyze() total", lambda: analyze(con, opts))
    scan, engine_scan = rows[0][1], rows[1][1]
    scan_cpu = rows[0][2]
    table = [
        [
            name,
            f"{wall:.2f}",
            f"{wall / scan:.2f}x",
            f"{wall / engine_scan:.1f}x",
            f"{cpu:.2f}",
            _ratio(cpu, scan_cpu),
            f"{rss:,.0f}",
        ]
        for name, wall, cpu, rss in rows
    ]
    per = sum(w for _, w, _, _ in rows[2:-1])
    per_cpu = sum(c for _, _, c, _ in rows[2:-1])
    table.append(
        [
            "sum of the analysis rows",
            f"{per:.2f}",
            f"{per / scan:.2f}x",
            f"{per / engine_scan:.1f}x",
            f"{per_cpu:.2f}",
            _ratio(per_cpu, scan_cpu),
            "",
        ]
    )
    heads = [
        "step",
        "wall s",
        "vs bare scan",
        "vs in-engine",
        "cpu s",
        "cpu vs bare",
        "peak RSS MiB",
    ]
    print(format_table(heads, table))
    total, total_cpu = rows[-1][1], rows[-1][2]
    peak = max(r for _, _, _, r in rows[2:])
    verdict = "meets" if total <= 3 * scan and peak <= 2048 else "misses"
    print(
        f"analyze(): {total / scan:.2f}x the bare full scan in wall time ({_ratio(total_cpu, scan_cpu)}"
        f" in CPU time; {total / engine_scan:.1f}x the in-engine scan), peak RSS {peak:,.0f} MiB:"
        f" {verdict} the target (<= 3x, <= 2 GB)"
    )
    con.close()


if __name__ == "__main__":
    main()
