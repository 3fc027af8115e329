"""bench/ingest_tiny.py runs end to end (one process, one ingest)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_tiny_ingest_bench_prints_each_figure() -> None:
    done = subprocess.run(
        [sys.executable, "bench/ingest_tiny.py", "--repeat", "1", "--rounds", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("load average at start ")
    assert lines[1].split() == ["figure", "after"]
    assert lines[-1].startswith("load average at end ")
    rows = {line[:24].strip(): line[24:].split() for line in lines[2:-1]}
    assert list(rows) == [
        "ingest, empty cache",
        "ingest, empty cache cpu",
        "ingest",
        "ingest cpu",
        "read-only open",
        "read-only open cpu",
        "sql.run per ingest",
    ]
    for label, (value,) in rows.items():
        assert float(value.removesuffix("ms")) > 0, label
