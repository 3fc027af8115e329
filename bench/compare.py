"""Benchmark: `relplan compare` of two sample workspaces (no whatif), side by side with the
analyses it runs, in one process so that the ratios are measured under the same load.

Ingests sample_data/pulse-retry-cancel and pulse-retry-coalesce once (not timed; `--sides A B`
names two other input folders: its smoke test, tests/test_compare_bench.py, gives a tiny
simulated run twice, whose figures are not for reading), then times,
`--repeat` times each and keeps the median:
- the analyses compare reads, run on both workspaces one after the other (the floor a first
  comparison builds on);
- `compare()` end to end (both sides, bands, differences, the text) with compare's cache off
  (`RELPLAN_COMPARE_CACHE=0`: every run analysed) and with it filled (relplan/compare/cache.py);
- `relplan compare A B` as a user runs it, in a new Python process (interpreter start and
  imports included), cache off and cache filled;
- with `--against DIR`: the same command run with DIR's relplan (`PYTHONPATH=DIR`, e.g. the
  main checkout), cache off and cache filled, for a before/after ratio under the same load:
  its runs alternate with this checkout's (one of each per repeat), so load drifts hit both.

Each row gives the median wall time and the median CPU time (this process's for the in-process
rows, the child's user + system for a new process: DuckDB's threads included). The load
average is printed before and after: on a shared machine the wall times move with it, the
ratios within one run much less. The cache lives in a temporary folder of the run. Goal:
compare under 1 s (wall).

    python bench/compare.py --repeat 3 [--against /work/main] [--sides A B]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 1.0


Timing = tuple[float, float]  # (wall s, CPU s), each a median


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _timed(fn: Callable[[], object]) -> Timing:
    wall, cpu, child = time.perf_counter(), time.process_time(), _children_cpu()
    fn()
    return (
        time.perf_counter() - wall,
        time.process_time() - cpu + _children_cpu() - child,
    )


def _median(fns: list[Callable[[], object]], repeat: int) -> list[Timing]:
    """Each function's median wall and CPU time; the functions run in turn, `repeat` rounds."""
    got: list[list[Timing]] = [[] for _ in fns]
    for _ in range(repeat):
        for fn, times in zip(fns, got, strict=True):
            times.append(_timed(fn))
    return [
        (statistics.median(w for w, _ in ts), statistics.median(c for _, c in ts)) for ts in got
    ]


def _load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", type=Path, help="a relplan checkout to time beside this one")
    parser.add_argument(
        "--sides",
        nargs=2,
        type=Path,
        metavar=("A", "B"),
        default=[ROOT / "sample_data" / n for n in ("pulse-retry-cancel", "pulse-retry-coalesce")],
        help="the two input folders compared (default: the two samples)",
    )
    args = parser.parse_args()

    from relplan.analyses import AnalyzeOptions, analyze
    from relplan.analyses.assessment import assess
    from relplan.compare import compare
    from relplan.compare.figures import FAMILIES
    from relplan.compare.sides import USED_ANALYSES
    from relplan.ingest import IngestOptions, ingest_paths
    from relplan.text.compare import render_comparison
    from relplan.workspace import open_workspace

    rows: list[tuple[str, Timing]] = []
    load_before = _load()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RELPLAN_CACHE_DIR"] = str(Path(tmp) / "cache")
        dbs = []
        for i, folder in enumerate(args.sides):
            db = Path(tmp) / f"{i}-{folder.name}.duckdb"
            ingest_paths(db, [folder.resolve()], IngestOptions())
            dbs.append(db)
        sides = [str(d) for d in dbs]

        def analyses_only() -> None:
            for db in dbs:
                with open_workspace(db, read_only=True) as con:
                    res = analyze(con, AnalyzeOptions(only=USED_ANALYSES))
                    assess(con, res.context, res)

        def whole() -> None:
            render_comparison(compare(sides), FAMILIES)

        def cli(env: dict[str, str], code: Path = ROOT) -> Callable[[], object]:
            cmd = [sys.executable, "-m", "relplan", "compare", *sides]
            env = os.environ | env | {"PYTHONPATH": str(code)}

            def run() -> None:  # `-m` puts the working folder first on sys.path
                subprocess.run(cmd, env=env, cwd=code, check=True, capture_output=True)

            return run

        os.environ["RELPLAN_COMPARE_CACHE"] = "0"
        whole()  # warm: imports and first-query caches
        [t] = _median([analyses_only], args.repeat)
        rows.append(("analyses of both sides, one after the other", t))
        [t] = _median([whole], args.repeat)
        rows.append(("compare() of two sample workspaces, cache off", t))
        os.environ["RELPLAN_COMPARE_CACHE"] = "1"
        whole()  # fills the cache
        [t] = _median([whole], args.repeat)
        rows.append(("compare() of two sample workspaces, cached", t))
        off = {"RELPLAN_COMPARE_CACHE": "0"}
        on = {"RELPLAN_COMPARE_CACHE": "1"}
        other = None if args.against is None else args.against.resolve()
        for state, env in (("cache off", off), ("cached", on)):
            fns = [cli(env)]
            if other is not None:
                cli(env, other)()  # a filled cache for that checkout's code too
                fns.append(cli(env, other))
            got = _median(fns, args.repeat)
            rows.append((f"relplan compare, new process, {state}", got[0]))
            if other is not None:
                rows.append((f"relplan compare, new process, {state}, {args.against}", got[1]))
    floor = rows[0][1][0]
    width = max(len(n) for n, _ in rows)
    print(f"{'step':{width}} {'seconds':>8} {'cpu s':>6} {'ratio':>7}  goal {GOAL_S:g} s")
    for i, (name, (wall, cpu)) in enumerate(rows):
        # the goal read off the seconds as printed, so a row never says "meets" beside 1.00
        goal = "" if i == 0 else ("meets" if round(wall, 2) < GOAL_S else "misses")
        print(f"{name:{width}} {wall:8.2f} {cpu:6.2f} {wall / floor:6.2f}x  {goal}".rstrip())
    print(f"load average (1/5/15 min): {load_before} before, {_load()} after")


if __name__ == "__main__":
    main()
