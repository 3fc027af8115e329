"""Smoke test of bench/alerts_eval.py at a tiny size: it builds its workspace, evaluates it
all at once and streamed in processes of their own, and finds both results identical."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_alerts_eval_bench_runs_both_evaluations_and_finds_them_identical() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "alerts_eval.py"),
            "--replicas",
            "3",
            "--hours",
            "0.5",
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "all at once" in proc.stdout
    assert "streamed" in proc.stdout
    assert re.search(r"^samples\s+2,520$", proc.stdout, re.MULTILINE)  # 3 x 7 series x 120
    assert "results identical" in proc.stdout


def test_pushdown_bench_fetches_less_than_a_raw_pull(
    prometheus_bin: str, promtool_bin: str
) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("pushdown_bench", ROOT / "bench" / "pushdown.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    m = mod.main(
        [
            "--replicas",
            "10",
            "--hours",
            "0.5",
            "--prometheus",
            prometheus_bin,
            "--promtool",
            promtool_bin,
        ]
    )
    assert m["samples"] == 10 * 120 * 7
    assert m["stuck"] == 1  # pod-0 stops generating for its last 20 minutes
    assert m["raw_points"] >= m["samples"]
    assert m["pushed_bytes"] * 5 < m["raw_bytes"]
