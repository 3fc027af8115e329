"""Benchmark `relplan analyze` on a 10M-step workspace.

    python bench/analyze.py [PATH] [--calls 22000] [--decode-mean 340] [--rebuild]

Builds the workspace at PATH (default /tmp/relplan-bench.duckdb) with
bench/generate_workspace.sql unless it already holds steps (then it is reused), and prints
wall time and peak RSS for one bare full scan of the steps table, for each analysis, and for
`analyze()` as a whole, all in this one process. Targets (issue 5): all analyses together
<= 3x the scan; peak RSS <= 2 GB. Peak RSS per row is sampled every 5 ms while the row runs
(process RSS, so it includes the Python interpreter and DuckDB's buffer pool).
"""

from __future__ import annotations

import argparse
import re
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from relplan import workspace  # noqa: E402
from relplan.analyses import AnalyzeOptions, analyze, resolve_context  # noqa: E402
from relplan.analyses.amplification import analyze_amplification  # noqa: E402
from relplan.analyses.capacity import analyze_capacity, stage_phases  # noqa: E402
from relplan.analyses.common import run_query  # noqa: E402
from relplan.analyses.counters import analyze_counters, counter_names  # noqa: E402
from relplan.analyses.delivery import analyze_delivery  # noqa: E402
from relplan.analyses.littles_law import analyze_littles_law  # noqa: E402
from relplan.analyses.retry_timing import analyze_retry_timing  # noqa: E402
from relplan.analyses.wasted_prefill import analyze_wasted_prefill  # noqa: E402
from relplan.tables import format_table  # noqa: E402

BARE_SCAN = (
    "select count(*), sum(prompt_computed), sum(prompt_cached), sum(decode_tokens),"
    " min(t_issue), max(t_done), max(execution_id), max(replica), max(step) from steps"
)


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


def measure(fn: Callable[[], Any]) -> tuple[float, float]:
    proc = psutil.Process()
    peak = proc.memory_info().rss
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, proc.memory_info().rss)
            time.sleep(0.005)

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    t = time.perf_counter()
    fn()
    wall = time.perf_counter() - t
    done.set()
    th.join()
    return wall, max(peak, proc.memory_info().rss) / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("path", nargs="?", type=Path, default=Path("/tmp/relplan-bench.duckdb"))
    ap.add_argument("--calls", type=int, default=22000)
    ap.add_argument("--decode-mean", type=int, default=340)
    ap.add_argument("--rebuild", action="store_true")
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
        t: con.execute(f"select count(*) from {t}").fetchone()[0]  # type: ignore[index]
        for t in ("attempts", "events", "steps", "metric_samples")
    }
    execs = con.execute("select count(distinct execution_id) from events").fetchone()[0]  # type: ignore[index]
    print(", ".join(f"{k} {v:,}" for k, v in counts.items()) + f", executions {execs:,}")

    con.execute(BARE_SCAN).fetchall()  # warm the buffer pool; the timed scan is the next one
    opts = AnalyzeOptions()
    ctx = resolve_context(con, opts)
    prompt, query = counter_names(con)
    rows: list[tuple[str, float, float]] = []

    def run(name: str, fn: Callable[[], Any]) -> None:
        wall, rss = measure(fn)
        rows.append((name, wall, rss))

    run("bare full scan of steps", lambda: con.execute(BARE_SCAN).fetchall())
    run("context (t0, T, phases)", lambda: resolve_context(con, opts))
    run("data checks", lambda: run_query(con, "data_edge_cases", {}))
    run("A amplification", lambda: analyze_amplification(con, ctx))
    run("B delivery", lambda: analyze_delivery(con, ctx))
    run("C wasted prefill", lambda: analyze_wasted_prefill(con, ctx))
    assert prompt and query
    run("D counters", lambda: analyze_counters(con, ctx, prompt, query))
    run("E Little's law", lambda: analyze_littles_law(con, ctx, True))
    run("F retry timing", lambda: analyze_retry_timing(con, ctx))
    stages = stage_phases(ctx)
    if stages:
        run("G capacity", lambda: analyze_capacity(con, ctx, stages))
    run("analyze() total", lambda: analyze(con, opts))
    scan = rows[0][1]
    table = [
        [name, f"{wall:.2f}", f"{wall / scan:.2f}x", f"{rss:,.0f}"] for name, wall, rss in rows
    ]
    per = sum(w for n, w, _ in rows[1:-1])
    table.append(["sum of the rows above", f"{per:.2f}", f"{per / scan:.2f}x", ""])
    print(format_table(["step", "wall s", "vs scan", "peak RSS MiB"], table))
    total = rows[-1][1]
    peak = max(r for _, _, r in rows)
    ok = total <= 3 * scan and peak <= 2048
    verdict = "meets" if ok else "misses"
    print(f"analyze() {total / scan:.2f}x the scan, peak RSS {peak:,.0f} MiB: {verdict} the target")
    con.close()


if __name__ == "__main__":
    main()
