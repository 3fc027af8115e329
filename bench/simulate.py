"""Benchmark of `relplan simulate` (not a test): the reference run and a sweep.

Reference run: `pulse-retry-cancel`, seed 1 (947 s of phases plus the drain). Reports wall
time of the simulation alone, of writing the four files, and of both, best of --repeat runs;
simulated seconds per wall second; steps per second; (step, execution) records per second;
the summary's time (relplan analyze on the written files) apart; peak RSS of this process.
Sweep: the same scenario over --sweep-runs seeds, run with 1 process and with --jobs
processes (fresh spawned workers, each writing and summarizing its run); the speed-up is the
ratio of the two wall times.

    python bench/simulate.py [--repeat 5] [--sweep-runs 32] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from relplan.sim.run import prepare, run_prepared
from relplan.sim.summary import summarize
from relplan.sim.sweep import sweep
from relplan.sim.writer import write_outputs
from relplan.tables import format_table
from relplan.values import num


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="pulse-retry-cancel")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--sweep-runs", type=int, default=32)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()

    best: dict[str, float] = {}
    facts: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as d:
        for i in range(args.repeat):
            t0 = time.perf_counter()
            p = prepare(args.scenario, None, 1)
            sim = run_prepared(p)
            t1 = time.perf_counter()
            out = Path(d) / f"r{i}"
            write_outputs(sim, out, {"scenario": args.scenario})
            t2 = time.perf_counter()
            summarize(out, 1)
            t3 = time.perf_counter()
            for key, val in (
                ("sim", t1 - t0),
                ("write", t2 - t1),
                ("total", t2 - t0),
                ("summary", t3 - t2),
            ):
                best[key] = min(best.get(key, float("inf")), val)
            e = sim.engine
            facts = {
                "simulated_s": sim.now,
                "steps": float(e.next_step),
                "records": float(
                    len(e.prefill_step)
                    + sum(b - a for a, b in zip(e.span_first_step, e.span_end_step, strict=False))
                ),
                "calls": float(len(sim.calls)),
                "executions": float(len(sim.executions)),
            }
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

        sweep_rows = []
        for jobs in (1, args.jobs):
            t = time.perf_counter()
            df, _ = sweep(
                args.scenario, [], seeds=args.sweep_runs, jobs=jobs, out=Path(d) / f"sw{jobs}"
            )
            sweep_rows.append((jobs, time.perf_counter() - t, float(df["wall_s"].mean())))
        load = os.getloadavg()[0]

    rows = [
        ["calls / executions", f"{num(facts['calls'])} / {num(facts['executions'])}"],
        ["simulated seconds", num(facts["simulated_s"], 1)],
        ["steps", num(facts["steps"])],
        ["(step, execution) records", num(facts["records"])],
        ["wall: simulation only", f"{best['sim']:.3f} s"],
        ["wall: writing the 4 files", f"{best['write']:.3f} s"],
        ["wall: simulation + files", f"{best['total']:.3f} s"],
        ["wall: summary (analyze on files)", f"{best['summary']:.3f} s"],
        ["simulated s per wall s (with files)", num(facts["simulated_s"] / best["total"], 0)],
        ["steps per wall s (simulation)", num(facts["steps"] / best["sim"], 0)],
        ["records per wall s (with files)", num(facts["records"] / best["total"], 0)],
        ["peak RSS", f"{rss_mb:.0f} MB"],
    ]
    (j1, w1, r1), (jn, wn, rn) = sweep_rows
    rows += [
        [f"sweep of {args.sweep_runs} runs, {j1} process", f"{w1:.2f} s"],
        [f"sweep of {args.sweep_runs} runs, {jn} processes", f"{wn:.2f} s"],
        [f"sweep speed-up on {jn} cores", f"{w1 / wn:.2f}x"],
        ["mean wall of one run in the sweep", f"{r1:.3f} s ({j1}) / {rn:.3f} s ({jn})"],
        ["load average (1 min) after the sweep", f"{load:.2f}"],
    ]
    print(f"relplan simulate benchmark: {args.scenario}, seed 1, best of {args.repeat}")
    print(format_table(["measure", "value"], rows, left=(0,)))


if __name__ == "__main__":
    main()
