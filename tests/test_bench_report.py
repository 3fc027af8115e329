"""Smoke test of bench/report_bench.py on a tiny simulated run (tests/helpers/sim_runs.py:
the stages and lines are checked, not the sample's figures), one browser launch."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.sim_runs import tiny_run

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_report_bench_times_every_stage_of_a_report(chromium_bin: str) -> None:
    done = subprocess.run(
        [sys.executable, "bench/report_bench.py", str(tiny_run()), "--runs", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for stage in ("ingest", "report data model", "HTML (bundle cached)"):
        assert re.search(rf"^{re.escape(stage)}\s+\d+\.\d\d s", out, re.MULTILINE), stage
    assert re.search(r"^page size\s+\d+\.\d\d MB", out, re.MULTILINE)
    assert re.search(r"^browser: launch to DOM dump\s+\d+\.\d\d s\s+median of 1;", out, re.M)
