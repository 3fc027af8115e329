"""bench/fidelity.py runs end to end at a tiny size and prints one row per scenario."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_fidelity_bench_prints_medians_ranges_and_the_published_outcome() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "bench/fidelity.py",
            "--seeds",
            "2",
            "--jobs",
            "1",
            "--scenarios",
            "pulse-noretry",
            "--time-scale",
            "0.05",
            "--markdown",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "fidelity: 1 scenarios x seeds 1-2, median (range) per figure, phases x 0.05"
    )
    header = [c.strip() for c in lines[1].strip("|").split("|")]
    assert header[:3] == ["scenario", "verdicts", "hold delivered"]
    assert header[-1] == "published outcome"
    row = [c.strip() for c in lines[3].strip("|").split("|")]
    assert row[0] == "`pulse-noretry`"
    assert sum(int(part.split()[-1]) for part in row[1].split(", ")) == 2  # two seeds' verdicts
    assert row[-1] == "recovers once the backlog drains"
    assert len(row) == len(header)
