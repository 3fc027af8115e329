"""Smoke test of bench/alerts_eval.py at a tiny fleet (2 replicas, half an hour): it builds
the workspace, evaluates the health rules and prints its table."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_alerts_eval_bench_runs_on_a_tiny_fleet() -> None:
    done = subprocess.run(
        [sys.executable, "bench/alerts_eval.py", "--replicas", "2", "--hours", "0.5"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "2 replicas" in out.splitlines()[0]
    # 2 replicas x 0.5 h x 240 scrapes an hour x the seven metrics the rules read.
    samples = re.search(r"^samples\s+([\d,]+)$", out, re.MULTILINE)
    assert samples is not None
    assert int(samples.group(1).replace(",", "")) == 2 * 120 * 7
    assert re.search(r"^peak RSS\s+\d+ MB$", out, re.MULTILINE)
