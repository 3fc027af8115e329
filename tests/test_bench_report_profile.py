"""Smoke test of bench/report_profile.py on a tiny simulated run (tests/helpers/sim_runs.py:
the stages and queries are checked, not the sample's figures), one run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.incident_cuts import build_cut
from tests.helpers.sim_runs import tiny_run

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_report_profile_times_each_stage_and_query() -> None:
    done = subprocess.run(
        [
            *(sys.executable, "bench/report_profile.py", str(tiny_run())),
            *("--runs", "1", "--no-whatif", "--top", "3"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    for stage in ("ingest", "  analysis heavy_requests", "analyses", "chart specs", "page"):
        assert re.search(rf"^{re.escape(stage)}\s+\d+\.\d{{3}}\s+\d+\.\d{{3}}\s+\d+$", out, re.M), (
            stage
        )
    assert "whatif" not in out
    queries = re.findall(r"^(\S+/\S+)\s+\d+\s+\d+\.\d{3}\s+\d+\.\d{3}$", out, re.M)
    assert len(queries) == 3
    assert re.search(r"^peak RSS \d+ MB$", out, re.M)


@pytest.mark.slow
def test_report_profile_opens_a_workspace_file_without_ingesting(tmp_path: Path) -> None:
    db = build_cut("everything", tmp_path)
    done = subprocess.run(
        [sys.executable, "bench/report_profile.py", str(db), "--runs", "1", "--no-whatif"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert not re.search(r"^ingest\s", out, re.M)
    assert not re.search(r"^ingest/", out, re.M)  # no ingest query ran
    assert re.search(r"^  analysis heavy_requests\s+\d+\.\d{3}\s+\d+\.\d{3}\s+\d+$", out, re.M)
    assert re.search(r"^chart specs\s+\d+\.\d{3}\s+\d+\.\d{3}\s+\d+$", out, re.M)
