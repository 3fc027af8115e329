"""Smoke test of bench/compare.py: it runs, prints every row with its wall and CPU time and its
ratio to the analyses' row, each row's goal column agrees with the time it printed, and the
load average follows the table. Its sides are a tiny simulated run twice (`--sides`,
tests/helpers/sim_runs.py): what is checked is the table, not the samples' figures."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.sim_runs import tiny_run

ROOT = Path(__file__).resolve().parent.parent
ROWS = (
    "analyses of both sides, one after the other",
    "compare() of two sample workspaces, cache off",
    "compare() of two sample workspaces, cached",
    "relplan compare, new process, cache off",
    "relplan compare, new process, cached",
)


@pytest.mark.slow
def test_compare_bench_prints_every_row_and_a_consistent_goal_column() -> None:
    tiny = str(tiny_run())
    done = subprocess.run(
        [sys.executable, "bench/compare.py", "--repeat", "1", "--sides", tiny, tiny],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"step\s+seconds\s+cpu s\s+ratio  goal 1 s", lines[0])
    got = []
    for name, line in zip(ROWS, lines[1 : len(ROWS) + 1], strict=True):
        m = re.fullmatch(
            re.escape(name) + r"\s+(\d+\.\d\d)\s+(\d+\.\d\d)\s+(\d+\.\d\d)x(?:  (meets|misses))?",
            line,
        )
        assert m is not None, line
        if "new process" in name:
            assert float(m.group(2)) > 0  # the child's CPU time is counted
        got.append((float(m.group(1)), float(m.group(3)), m.group(4)))
    assert re.fullmatch(
        r"load average \(1/5/15 min\): [\d.]+/[\d.]+/[\d.]+ before, [\d.]+/[\d.]+/[\d.]+ after",
        lines[len(ROWS) + 1],
    )
    floor = got[0][0]
    assert got[0][1:] == (1.0, None)
    for seconds, ratio, goal in got[1:]:
        assert goal == ("meets" if seconds < 1.0 else "misses")
        # the seconds are printed to 0.01 s, the ratio (to 0.01) from the unrounded times
        lo = max(seconds - 0.005, 0) / (floor + 0.005)
        hi = (seconds + 0.005) / (floor - 0.005)
        assert lo - 0.005 <= ratio <= hi + 0.005, (seconds, floor, ratio)
