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


def _shared_block(name: str) -> str:
    text = (ROOT / "queries" / "analyses" / f"{name}.sql").read_text()
    start = text.index("-- shared block")
    return text[start : text.index("-- end of the shared block", start)]


def test_the_two_execution_queries_hold_the_same_shared_block() -> None:
    """wasted_prefill_by_fate and executions_by_window_and_replica read each execution's
    lifecycle and delivery through one block of SQL, word for word, so the two analyses
    cannot come to disagree about which executions were delivered."""
    one = _shared_block("wasted_prefill_by_fate")
    assert "dl as (" in one
    assert one == _shared_block("executions_by_window_and_replica")
