"""Benchmark: `relplan compare` of two sample workspaces (no whatif), side by side with the
analyses it runs, in one process so that the ratio is measured under the same load.

Ingests sample_data/pulse-retry-cancel and pulse-retry-coalesce once (not timed), then
times, `--repeat` times each and keeps the median: the analyses compare reads run on both
workspaces one after the other (the floor compare builds on), and `compare()` end to end
(loading both sides, bands, differences, the text). Goal: compare under 1 s.

    python bench/compare.py --repeat 3
"""

from __future__ import annotations

import argparse
import statistics
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
    args = parser.parse_args()

    from relplan.analyses import AnalyzeOptions, analyze
    from relplan.analyses.assessment import assess
    from relplan.compare import compare
    from relplan.compare.render import render_comparison
    from relplan.compare.sides import USED_ANALYSES
    from relplan.ingest import IngestOptions, ingest_paths
    from relplan.workspace import open_workspace

    with tempfile.TemporaryDirectory() as tmp:
        dbs = []
        for name in ("pulse-retry-cancel", "pulse-retry-coalesce"):
            db = Path(tmp) / f"{name}.duckdb"
            ingest_paths(db, [ROOT / "sample_data" / name], IngestOptions())
            dbs.append(db)

        def analyses_only() -> None:
            for db in dbs:
                with open_workspace(db, read_only=True) as con:
                    res = analyze(con, AnalyzeOptions(only=USED_ANALYSES))
                    assess(con, res.context, res)

        def whole() -> None:
            render_comparison(compare([str(d) for d in dbs]))

        whole()  # warm: imports and first-query caches
        floor = _median(analyses_only, args.repeat)
        total = _median(whole, args.repeat)
    print(f"{'step':44} {'seconds':>8} {'ratio':>7}")
    print(f"{'analyses of both sides, one after the other':44} {floor:8.2f} {1.0:6.2f}x")
    print(f"{'compare() of two sample workspaces':44} {total:8.2f} {total / floor:6.2f}x")
    verdict = "meets" if total < GOAL_S else "misses"
    print(
        f"compare: {total:.2f} s, {total / floor:.2f}x the analyses; {verdict} the {GOAL_S:g} s goal"
    )


if __name__ == "__main__":
    main()
