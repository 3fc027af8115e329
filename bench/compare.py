"""Benchmark: `relplan compare` of two sample workspaces (no whatif), side by side with the
analyses it runs, in one process so that the ratios are measured under the same load.

Ingests sample_data/pulse-retry-cancel and pulse-retry-coalesce once (not timed), then times,
`--repeat` times each and keeps the median:
- the analyses compare reads, run on both workspaces one after the other (the floor a first
  comparison builds on);
- `compare()` end to end (both sides, bands, differences, the text) with compare's cache off
  (`RELPLAN_COMPARE_CACHE=0`: every run analysed) and with it filled (relplan/compare/cache.py);
- `relplan compare A B` as a user runs it, in a new Python process (interpreter start and
  imports included), cache off and cache filled;
- with `--against DIR`: the same command run with DIR's relplan (`PYTHONPATH=DIR`, e.g. the
  main checkout), cache off and cache filled, for a before/after ratio under the same load.

The cache lives in a temporary folder of the run. Goal: compare under 1 s.

    python bench/compare.py --repeat 3 [--against /work/main]
"""

from __future__ import annotations

import argparse
import os
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


def _median(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--against", type=Path, help="a relplan checkout to time beside this one")
    args = parser.parse_args()

    from relplan.analyses import AnalyzeOptions, analyze
    from relplan.analyses.assessment import assess
    from relplan.compare import compare
    from relplan.compare.render import render_comparison
    from relplan.compare.sides import USED_ANALYSES
    from relplan.ingest import IngestOptions, ingest_paths
    from relplan.workspace import open_workspace

    rows: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["RELPLAN_CACHE_DIR"] = str(Path(tmp) / "cache")
        dbs = []
        for name in ("pulse-retry-cancel", "pulse-retry-coalesce"):
            db = Path(tmp) / f"{name}.duckdb"
            ingest_paths(db, [ROOT / "sample_data" / name], IngestOptions())
            dbs.append(db)
        sides = [str(d) for d in dbs]

        def analyses_only() -> None:
            for db in dbs:
                with open_workspace(db, read_only=True) as con:
                    res = analyze(con, AnalyzeOptions(only=USED_ANALYSES))
                    assess(con, res.context, res)

        def whole() -> None:
            render_comparison(compare(sides))

        def cli(env: dict[str, str], code: Path = ROOT) -> Callable[[], object]:
            cmd = [sys.executable, "-m", "relplan", "compare", *sides]
            env = os.environ | env | {"PYTHONPATH": str(code)}

            def run() -> None:  # `-m` puts the working folder first on sys.path
                subprocess.run(cmd, env=env, cwd=code, check=True, capture_output=True)

            return run

        os.environ["RELPLAN_COMPARE_CACHE"] = "0"
        whole()  # warm: imports and first-query caches
        rows.append(
            ("analyses of both sides, one after the other", _median(analyses_only, args.repeat))
        )
        rows.append(("compare() of two sample workspaces, cache off", _median(whole, args.repeat)))
        os.environ["RELPLAN_COMPARE_CACHE"] = "1"
        whole()  # fills the cache
        rows.append(("compare() of two sample workspaces, cached", _median(whole, args.repeat)))
        off = {"RELPLAN_COMPARE_CACHE": "0"}
        on = {"RELPLAN_COMPARE_CACHE": "1"}
        rows.append(("relplan compare, new process, cache off", _median(cli(off), args.repeat)))
        rows.append(("relplan compare, new process, cached", _median(cli(on), args.repeat)))
        if args.against is not None:
            other = args.against.resolve()
            label = f"relplan compare, new process, cache off, {args.against}"
            rows.append((label, _median(cli(off, other), args.repeat)))
            cli(on, other)()  # fills the cache for that checkout's code
            label = f"relplan compare, new process, cached, {args.against}"
            rows.append((label, _median(cli(on, other), args.repeat)))
    floor = rows[0][1]
    width = max(len(n) for n, _ in rows)
    print(f"{'step':{width}} {'seconds':>8} {'ratio':>7}  goal {GOAL_S:g} s")
    for i, (name, t) in enumerate(rows):
        goal = "" if i == 0 else ("meets" if t < GOAL_S else "misses")
        print(f"{name:{width}} {t:8.2f} {t / floor:6.2f}x  {goal}".rstrip())


if __name__ == "__main__":
    main()
