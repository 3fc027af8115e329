"""Smoke test of bench/simulate.py on a tiny scenario file (20 s at 1 call/s), its sweep of
two runs on one process and on two."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

TINY = """\
name = "tiny"
description = "bench smoke test: 20 s at 1 call/s"
overload_phase = "none"

[workload]
phases = [{ name = "only", seconds = 20, rate_per_s = 1.0 }]
"""


@pytest.mark.slow
def test_simulate_bench_runs_a_tiny_scenario_and_its_sweep(tmp_path: Path) -> None:
    scenario = tmp_path / "tiny.toml"
    scenario.write_text(TINY)
    cmd = [sys.executable, "bench/simulate.py", "--scenario", str(scenario), "--repeat", "1"]
    done = subprocess.run(
        [*cmd, "--sweep-runs", "2", "--jobs", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    calls = re.search(r"^calls / executions\s+(\d+) / (\d+)$", out, re.MULTILINE)
    assert calls is not None
    assert int(calls.group(1)) > 0
    one = re.search(r"^sweep of 2 runs, 1 process\s+(\d+\.\d\d) s$", out, re.MULTILINE)
    two = re.search(r"^sweep of 2 runs, 2 processes\s+(\d+\.\d\d) s$", out, re.MULTILINE)
    ratio = re.search(r"^sweep speed-up on 2 cores\s+(\d+\.\d\d)x$", out, re.MULTILINE)
    assert one is not None
    assert two is not None
    assert ratio is not None
    expected = float(one.group(1)) / float(two.group(1))
    assert float(ratio.group(1)) == pytest.approx(expected, abs=0.02)
