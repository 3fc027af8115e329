"""The whole `relplan report` command on the bundled sample: a git ref (before) against this
checkout (after), as whole processes.

    python bench/report_command.py [--before 691ff0d] [--repeat 5] [PATH]

Each side runs `python -m relplan report PATH --out TMP/report.html` in a fresh interpreter
(this one's executable, so both use the same installed libraries; relplan from the side's tree
through PYTHONPATH). Runs are interleaved (before, after, after, before, ...) so load from other
jobs falls on both alike; each cell is the median of --repeat runs, wall seconds and CPU seconds
(user + system of the child) side by side. "after, cold cache" is one extra run with an empty
RELPLAN_CACHE_DIR: the first report on a machine, which builds the Vega bundle once.
Target (issue 16): the whole command <= 1.5 s.
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
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from startup import ROOT, checkout

DEFAULT_BEFORE = "691ff0d"  # main before the report-speed work (issue 16)
TARGET_S = 1.5


def run_once(
    tree: Path, path: Path, out: Path, cache: Path, extra: Sequence[str] = ()
) -> tuple[float, float]:
    """(wall s, CPU s) of one `relplan report` with relplan imported from `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree), "RELPLAN_CACHE_DIR": str(cache)}
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "relplan", "report", str(path), "--out", str(out), *extra],
        cwd=out.parent,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"relplan report from {tree} failed:\n{done.stderr}")
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return wall, cpu


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "path", nargs="?", type=Path, default=ROOT / "sample_data/pulse-retry-cancel"
    )
    parser.add_argument("--before", default=DEFAULT_BEFORE, help="git ref to compare with")
    parser.add_argument("--repeat", type=int, default=5, help="runs per side")
    parser.add_argument(
        "--after-arg",
        action="append",
        default=[],
        help="an argument for the after side only (e.g. --after-arg=--no-whatif)",
    )
    ns = parser.parse_args(argv)
    if ns.repeat < 1:
        parser.error("--repeat must be 1 or more")
    path = ns.path.resolve()
    with checkout(ns.before) as before, tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        out = work / "report.html"
        warm = work / "cache-warm"
        extra = ns.after_arg
        cold = run_once(ROOT, path, out, work / "cache-cold", extra)
        run_once(ROOT, path, out, warm, extra)  # fills the warm cache
        times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
        order = [("before", before), ("after", ROOT)]
        for i in range(ns.repeat):
            for side, tree in order if i % 2 == 0 else order[::-1]:
                times[side].append(
                    run_once(tree, path, out, warm, extra if side == "after" else ())
                )
    med = {
        side: (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs))
        for side, runs in times.items()
    }
    load = os.getloadavg()[0]
    shown = "".join(f" {a}" for a in ns.after_arg)
    print(
        f"before: {ns.before}; after: {ROOT}{shown};"
        f" median of {ns.repeat} interleaved runs; load {load:.1f}"
    )
    print(f"{'side':<18}  {'wall s':>7}  {'CPU s':>7}  {'wall/before':>11}")
    print(f"{'-' * 18}  {'-' * 7}  {'-' * 7}  {'-' * 11}")
    b_wall = med["before"][0]
    for label, (wall, cpu) in (
        ("before", med["before"]),
        ("after", med["after"]),
        ("after, cold cache", cold),
    ):
        print(f"{label:<18}  {wall:>7.2f}  {cpu:>7.2f}  {wall / b_wall:>11.2f}")
    verdict = "meets" if med["after"][0] <= TARGET_S else "misses"
    print(f"after {med['after'][0]:.2f} s: {verdict} the target <= {TARGET_S} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
