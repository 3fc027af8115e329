"""Benchmark of `relplan whatif` (not a test): the replay of a simulated incident under
controls × seeds, its wall time against the 60 s target, and (with --direct) each control's
predicted delivered share next to a direct simulation of the same control.

The incident is `--scenario` (default pulse-retry-cancel: 947 s of phases, about 16 minutes)
simulated with seed 1 and ingested into a temporary workspace. `relplan whatif` then fits it
and replays the as-observed scenario and the first `--controls` controls, `--seeds` seeds
each, over `--jobs` processes. With --direct, every control is also simulated from the
scenario itself (same workload: the incident's C^ is kept; same seeds), and the delivered
share of overload-and-later calls is printed side by side, with the as-observed fit error.

With --stages, the same replays are run again one after the other in this process, stage
by stage, and the CPU seconds of each stage are printed, summed over the runs: set-up (the
scenario read and validated, the calls planned: `prepare`, `Simulation`), simulation,
loading into the in-memory workspace (`replay_workspace`, `load_measured`), the figures
(`figures`) and the garbage collection at the end (`no_collection_pauses`, as `run_one`
runs them); the figures are checked equal to the whatif run's.

    python bench/whatif.py [--seeds 3] [--controls 8] [--jobs 2] [--direct] [--stages]
    python bench/whatif.py --set workload.phases.2.seconds=60 --seeds 1 --controls 1   # tiny
    python bench/whatif.py --scenario pulse-retry-cancel --seeds 1 --controls 10 --stages
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from relplan import workspace
from relplan.ingest.base import IngestOptions
from relplan.ingest.driver import ingest_files
from relplan.sim.run import simulate
from relplan.tables import format_table
from relplan.values import pct
from relplan.whatif.controls import AS_OBSERVED, Control, builtin_controls
from relplan.whatif.model import Figures, WhatIf
from relplan.whatif.replay import Task, run_tasks
from relplan.whatif.run import WhatIfOptions, whatif

TARGET_S = 60.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", default="pulse-retry-cancel")
    ap.add_argument("--set", dest="sets", action="append", default=[])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--controls", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--direct", action="store_true")
    ap.add_argument("--stages", action="store_true", help="CPU seconds per stage of a replay")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as d:
        run = Path(d) / "incident"
        simulate(args.scenario, run, seed=1, sets=args.sets)
        db = Path(d) / "incident.duckdb"
        with workspace.open_workspace(db) as con:
            ingest_files(con, [run], IngestOptions())
        with workspace.open_workspace(db, read_only=True) as con:
            keep = Path(d) / "fit"
            keep.mkdir()
            # the controls the table shows, first `--controls` of those that can be replayed
            probe = whatif_controls(con, keep)
            names = [c.name for c in probe][: args.controls]
            t = time.perf_counter()
            cpu_parent = time.process_time()
            res = whatif(
                con, WhatIfOptions(seeds=args.seeds, jobs=args.jobs, only=names), work_dir=keep
            )
            wall = time.perf_counter() - t
            cpu = res.replay_cpu_s + (time.process_time() - cpu_parent)
            cap = res.capacity_calls_per_s
        runs = (len(names) + 1) * args.seeds
        rows = [
            ["incident", f"{args.scenario} seed 1 {' '.join(args.sets)}".strip()],
            ["controls x seeds (+ as observed)", f"{len(names)} x {args.seeds} (+ {args.seeds})"],
            ["runs", str(runs)],
            ["processes", str(args.jobs)],
            ["wall: fit + replays + table", f"{wall:.1f} s"],
            ["wall per run x processes", f"{wall * args.jobs / runs:.2f} s"],
            [f"wall / {TARGET_S:g} s target", f"{wall / TARGET_S:.2f}"],
            ["CPU s: the runs (summed) + this process", f"{cpu:.1f} s"],
            [
                f"CPU s / {args.jobs} processes (idle-machine wall, lower bound)",
                f"{cpu / args.jobs:.1f} s ({cpu / args.jobs / TARGET_S:.2f} of the target)",
            ],
            ["load average (1 min) after", f"{os.getloadavg()[0]:.2f}"],
        ]
        print(f"relplan whatif benchmark on {os.cpu_count()} cores")
        print(format_table(["measure", "value"], rows, left=(0,)))
        if args.stages:
            print_stages(keep / "scenario.toml", res, probe[: args.controls], args.seeds)
        c = res.check
        print(
            f"\nfit check: verdict {c.incident.verdict} (replay {c.replay.verdict}), "
            f"fit error {pct(c.error)} ({c.error_window}); trusted: {c.trusted}"
        )
        if args.direct:
            by_name = {o.name: o for o in res.controls}
            tasks = [
                Task(
                    args.scenario,
                    (*args.sets, *o.sets, f"capacity_calls_per_s={cap}"),
                    s,
                    o.name,
                    tuple(o.hooks),
                )
                for o in (by_name[n] for n in names)
                for s in range(1, args.seeds + 1)
            ]
            figs, _, _ = run_tasks(tasks, args.jobs)
            direct: dict[str, list[float]] = {}
            verdicts: dict[str, list[str]] = {}
            for task, f in zip(tasks, figs, strict=True):
                w = f.window("overload+later")
                if w is not None and w.delivered_share is not None:
                    direct.setdefault(task.control, []).append(w.delivered_share)
                verdicts.setdefault(task.control, []).append(f.verdict)
            table = []
            for n in names:
                o = by_name[n]
                pred = o.delivered_share.median if o.delivered_share is not None else None
                dm = statistics.median(direct[n]) if direct.get(n) else None
                table.append(
                    [
                        n,
                        pct(pred),
                        pct(dm),
                        "-" if pred is None or dm is None else f"{(pred - dm) * 100:+.1f}",
                        o.verdict,
                        max(set(verdicts[n]), key=verdicts[n].count),
                    ]
                )
            print("\ndelivered share of overload and later calls (median over seeds)")
            print(
                format_table(
                    ["control", "whatif", "direct", "diff pts", "whatif verdict", "direct verdict"],
                    table,
                    left=(0, 4, 5),
                )
            )


def print_stages(scenario: Path, res: WhatIf, controls: list[Control], seeds: int) -> None:
    """Replay the run's tasks here, one after the other, and print each stage's CPU seconds
    summed over them; every replay's figures must be the run's."""
    from relplan.sim.run import prepare
    from relplan.sim.simulator import Simulation
    from relplan.whatif.figures import figures
    from relplan.whatif.hooks import apply
    from relplan.whatif.replay import load_measured, no_collection_pauses, replay_workspace

    runnable = [Control(AS_OBSERVED, "as observed"), *controls]
    tasks = [
        Task(str(scenario), c.applied, s, c.name, c.hooks)
        for c in runnable
        for s in range(1, seeds + 1)
    ]
    cpu = dict.fromkeys(("set-up", "simulation", "load", "figures", "collection"), 0.0)
    got: dict[str, list[float | None]] = {}

    def staged(task: Task) -> tuple[Figures, list[float]]:
        c = [time.process_time()]
        p = prepare(task.scenario, task.sets, task.seed)
        sim = Simulation(p.scenario, p.profile, p.capacity, p.scenario.seed, record_steps=False)
        apply(sim, task.hooks)
        c.append(time.process_time())
        sim.run()
        c.append(time.process_time())
        with replay_workspace() as con:
            load_measured(con, sim, {"scenario": p.scenario.name, "sets": p.sets})
            c.append(time.process_time())
            fig = figures(con)
        c.append(time.process_time())
        return fig, c

    for task in tasks:
        # as run_one replays: the cyclic collector paused, the simulation collected at the end
        with no_collection_pauses():
            fig, c = staged(task)
        c.append(time.process_time())
        for stage, used in zip(cpu, (b - a for a, b in itertools.pairwise(c)), strict=True):
            cpu[stage] += used
        w = fig.window("overload+later")
        got.setdefault(task.control, []).append(None if w is None else w.delivered_share)
    for o in res.controls:
        if o.name in got and o.delivered_share is not None:
            assert o.delivered_share.median == statistics.median(
                [v for v in got[o.name] if v is not None]
            ), o.name
    total = sum(cpu.values())
    rows = [[stage, f"{used:.2f} s", f"{used / total:.0%}"] for stage, used in cpu.items()]
    rows.append([f"all {len(tasks)} replays", f"{total:.2f} s", f"{total / len(tasks):.3f} s each"])
    print("\nCPU per stage of the replays, one after the other in this process")
    print(format_table(["stage", "CPU", "share"], rows, left=(0,)))


def whatif_controls(con: object, folder: Path) -> list[Control]:
    """The built-in controls that can be replayed, in table order."""
    from relplan.whatif.fit import fit_incident

    fitted = fit_incident(con, folder / "probe.toml")  # type: ignore[arg-type]
    return [c for c in builtin_controls(fitted.data) if not c.unavailable]


if __name__ == "__main__":
    main()
