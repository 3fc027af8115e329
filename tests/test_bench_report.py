"""Smoke test of bench/report_bench.py on the bundled sample, one browser launch."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_report_bench_times_every_stage_of_the_sample(chromium_bin: str) -> None:
    done = subprocess.run(
        [sys.executable, "bench/report_bench.py", "sample_data/pulse-retry-cancel", "--runs", "1"],
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
