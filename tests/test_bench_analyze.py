"""Smoke test of bench/analyze.py at a tiny size: the generator still fits the workspace
schema, every analysis row is printed, and the verdict line states the ratio it printed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_analyze_bench_builds_a_tiny_workspace_and_prints_every_row(tmp_path: Path) -> None:
    db = tmp_path / "bench.duckdb"
    done = subprocess.run(
        [sys.executable, "bench/analyze.py", str(db), "--calls", "60", "--repeat", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith(f"built {db} in ")
    counts = re.search(r"steps ([\d,]+), metric_samples ([\d,]+), executions ([\d,]+)", out)
    assert counts is not None
    assert all(int(g.replace(",", "")) > 0 for g in counts.groups())
    for name in ("bare full scan of steps", "C wasted prefill", "analyze() total"):
        assert re.search(rf"^{re.escape(name)}\s+\d+\.\d\d\s+\d+\.\d\dx", out, re.MULTILINE)
    total = re.search(r"^analyze\(\) total\s+\S+\s+(\d+\.\d\d)x", out, re.MULTILINE)
    verdict = re.search(r"^analyze\(\): (\d+\.\d\d)x the bare full scan.*(meets|misses)", out, re.M)
    assert total is not None
    assert verdict is not None
    assert verdict.group(1) == total.group(1)
