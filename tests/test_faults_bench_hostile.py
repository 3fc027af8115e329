"""Smoke test of bench/hostile.py (issue 25's hostile cases through the CLI): two of its
cases run end to end in new processes, one against its loopback server, and the table
classifies them (a clean error each)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_hostile_cases_bench_runs_and_classifies() -> None:
    got = subprocess.run(
        [sys.executable, "bench/hostile.py", "-k", "a FIFO given as the input"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    rows = [ln for ln in got.stdout.splitlines() if ln.startswith("bounded | a FIFO given")]
    assert len(rows) == 1, got.stdout
    assert " | clean error | " in rows[0]
    assert "not a regular file or directory" in rows[0]
    assert "| bounded | 1 | clean error 1 |" in got.stdout
