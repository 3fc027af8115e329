"""bench/report_command.py runs end to end (the checkout against itself, once)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_report_command_bench_prints_before_after_and_cold_rows() -> None:
    done = subprocess.run(
        [sys.executable, "bench/report_command.py", "--before", "HEAD", "--repeat", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("before: HEAD; after: ")
    assert lines[1].split() == ["side", "wall", "s", "CPU", "s", "wall/before"]
    rows = {line[:18].strip(): line[18:].split() for line in lines[3:6]}
    assert list(rows) == ["before", "after", "after, cold cache"]
    for wall, cpu, _ratio in rows.values():
        assert float(wall) > 0
        assert float(cpu) > 0
    assert float(rows["before"][2]) == 1.0
    assert lines[-1].startswith("after ")
    assert "the target <= 1.5 s" in lines[-1]
