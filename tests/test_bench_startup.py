"""bench/startup.py runs end to end (the checkout against itself, once) and prints its table."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_startup_bench_prints_one_row_per_command_with_a_ratio() -> None:
    done = subprocess.run(
        [sys.executable, "bench/startup.py", "--before", "HEAD", "--repeat", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("before: HEAD (")
    assert "median of 1 interleaved runs" in lines[0]
    assert lines[1].split() == ["command", "before", "s", "after", "s", "after/before"]
    rows = lines[3:-1]
    assert [r.split("  ")[0] for r in rows] == [
        "relplan --version",
        "relplan budget --crashes 10 --concurrency 40",
    ]
    for row in rows:
        before, after, ratio = (float(x) for x in row.split()[-3:])
        assert before > 0
        assert after > 0
        # the times are printed to 1 ms and the ratio to 0.01: the printed ratio lies
        # within what the printed times allow, widened by the ratio's own rounding
        lo = (after - 0.0005) / (before + 0.0005) - 0.005
        hi = (after + 0.0005) / (before - 0.0005) + 0.005
        assert lo <= ratio <= hi, (before, after, ratio)
    assert re.match(r"largest ratio \d+\.\d\d: (meets|misses) the target <= 0\.3$", lines[-1])
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True, check=True
    )
    assert "relplan-startup-" not in listed.stdout  # the temporary checkout is removed
