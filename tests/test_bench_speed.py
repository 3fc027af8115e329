"""bench/speed.py runs end to end (warm figures and start-up only, once each)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_speed_bench_prints_each_figure_against_its_goal() -> None:
    done = subprocess.run(
        [sys.executable, "bench/speed.py", "--repeat", "1", "--no-cold"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "load average at start" in lines[0]
    assert lines[1].split() == ["figure", "value", "goal", "cpu"]
    assert lines[-1].startswith("load average at end ")
    rows = {line[:34].strip(): line[34:].split() for line in lines[3:-1]}
    assert list(rows) == [
        "report, warm (page cache)",
        "report, computed (what-if cached)",
        "report, computed with ingest",
        "report --no-whatif, warm",
        "report --no-whatif, computed",
        "report --no-whatif, with ingest",
        "report peak RSS (MB)",
        "import typer (s)",
        "relplan budget / import typer",
        "relplan pulse / import typer",
        "relplan --version / import typer",
        "relplan -h / import typer",
    ]
    for label, cells in rows.items():
        assert float(cells[0].rstrip("sx")) > 0, label
        if label == "import typer (s)":
            assert float(cells[-1].rstrip("s")) > 0  # its CPU seconds
        elif label == "report peak RSS (MB)":
            assert cells[-1] in ("meets", "misses"), label
        else:
            assert cells[-2] in ("meets", "misses"), label
            assert float(cells[-1].rstrip("sx")) > 0, label  # CPU seconds or CPU ratio
