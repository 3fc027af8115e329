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
        assert ratio == pytest.approx(after / before, abs=0.01)
    assert re.match(r"largest ratio \d+\.\d\d: (meets|misses) the target <= 0\.3$", lines[-1])
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "list"], capture_output=True, text=True, check=True
    )
    assert "relplan-startup-" not in listed.stdout  # the temporary checkout is removed
