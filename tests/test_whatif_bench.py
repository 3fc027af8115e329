"""Smoke test of bench/whatif.py at a tiny size: it runs and prints the figures it promises."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_bench_whatif_runs_at_tiny_size_and_prints_the_target_ratio_the_comparison_and_stages() -> (
    None
):
    tiny = [
        "--set", "workload.phases.0.seconds=20",
        "--set", "workload.phases.1.seconds=20",
        "--set", "workload.phases.2.seconds=30",
    ]  # fmt: skip
    res = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "whatif.py"),
            *tiny,
            "--seeds",
            "1",
            "--controls",
            "1",
            "--jobs",
            "1",
            "--direct",
            "--stages",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert "wall / 60 s target" in res.stdout
    assert "fit check: verdict" in res.stdout
    assert "no-retries" in res.stdout.split("delivered share of overload")[1]
    stages = res.stdout.split("CPU per stage of the replays")[1]
    for stage in ("set-up", "simulation", "load", "figures", "collection", "all 2 replays"):
        assert stage in stages
