"""Smoke test of bench/compare.py: it runs, prints both rows, and its verdict line states
the time and ratio it printed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_compare_bench_prints_both_rows_and_a_consistent_verdict() -> None:
    done = subprocess.run(
        [sys.executable, "bench/compare.py", "--repeat", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert re.search(
        r"^analyses of both sides, one after the other\s+\d+\.\d\d\s+1\.00x$", out, re.M
    )
    row = re.search(
        r"^compare\(\) of two sample workspaces\s+(\d+\.\d\d)\s+(\d+\.\d\d)x$", out, re.M
    )
    assert row is not None
    verdict = re.search(
        r"^compare: (\d+\.\d\d) s, (\d+\.\d\d)x the analyses; (meets|misses)", out, re.M
    )
    assert verdict is not None
    assert verdict.groups()[:2] == row.groups()
    assert (verdict.group(3) == "meets") == (float(row.group(1)) < 1.0)
