"""Start-up time of the cheap commands: a git ref (before) against this checkout (after).

    python bench/startup.py [--before b8a338f] [--repeat 11]

Measures the whole-process wall time of `relplan --version` and
`relplan budget --crashes 10 --concurrency 40`, each run as `python -m relplan ...` in a fresh
interpreter (this one's executable, so both sides use the same installed libraries). BEFORE is
the ref checked out with `git worktree add` into a temporary directory and run with
PYTHONPATH pointing at it; AFTER is this checkout, run the same way. Runs are interleaved
(before, after, after, before, ...) so that load from other jobs on the machine falls on both
sides alike; each cell is the median of `--repeat` runs, and the ratio after/before is taken
from the same run. Target (issue 10): ratio <= 0.3.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BEFORE = "b8a338f"  # the last commit before the CLI package (issue 10)
COMMANDS: tuple[tuple[str, ...], ...] = (
    ("--version",),
    ("budget", "--crashes", "10", "--concurrency", "40"),
)
TARGET_RATIO = 0.3


@contextmanager
def checkout(ref: str) -> Iterator[Path]:
    """A checkout's folder as it is, or git `ref` checked out (detached) in a temporary
    worktree, removed afterwards."""
    if Path(ref).is_dir():
        yield Path(ref).resolve()
        return
    with tempfile.TemporaryDirectory(prefix="relplan-startup-") as tmp:
        tree = Path(tmp) / "before"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), ref],
            check=True,
        )
        try:
            yield tree
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True
            )


def run_once(tree: Path, args: Sequence[str], cwd: Path) -> float:
    """Wall seconds of one `python -m relplan ARGS` with relplan imported from `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "relplan", *args],
        cwd=cwd,  # not the checkout: `-m` puts the working directory first on sys.path
        env=env,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"relplan {' '.join(args)} from {tree} failed:\n{done.stderr}")
    return elapsed


def measure(before: Path, after: Path, repeat: int, cwd: Path) -> list[tuple[str, float, float]]:
    rows = []
    for args in COMMANDS:
        times: dict[str, list[float]] = {"before": [], "after": []}
        for i in range(repeat):
            order = [("before", before), ("after", after)]
            for side, tree in order if i % 2 == 0 else order[::-1]:
                times[side].append(run_once(tree, args, cwd))
        rows.append(
            (
                "relplan " + " ".join(args),
                statistics.median(times["before"]),
                statistics.median(times["after"]),
            )
        )
    return rows


def render(rows: Sequence[tuple[str, float, float]]) -> str:
    width = max(len("command"), *(len(name) for name, _, _ in rows))
    lines = [
        f"{'command':<{width}}  {'before s':>9}  {'after s':>9}  {'after/before':>12}",
        f"{'-' * width}  {'-' * 9}  {'-' * 9}  {'-' * 12}",
    ]
    for name, b, a in rows:
        lines.append(f"{name:<{width}}  {b:>9.3f}  {a:>9.3f}  {a / b:>12.2f}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=DEFAULT_BEFORE, help="git ref to compare with")
    parser.add_argument("--repeat", type=int, default=11, help="runs per command and side")
    ns = parser.parse_args(argv)
    if ns.repeat < 1:
        parser.error("--repeat must be 1 or more")
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", ns.before],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    with checkout(ns.before) as before, tempfile.TemporaryDirectory() as cwd:
        rows = measure(before, ROOT, ns.repeat, Path(cwd))
    print(f"before: {ns.before} ({sha}); after: {ROOT}; median of {ns.repeat} interleaved runs")
    print(render(rows))
    worst = max(a / b for _, b, a in rows)
    verdict = "meets" if worst <= TARGET_RATIO else "misses"
    print(f"largest ratio {worst:.2f}: {verdict} the target <= {TARGET_RATIO}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
