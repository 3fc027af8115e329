"""Smoke test of bench/attach.py at a tiny size: it generates Hive partitions, attaches
them, analyzes one hour and counts the files that hour's scan reads."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_attach_bench_reads_only_the_hours_files_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "bench"
    cmd = [sys.executable, "bench/attach.py", "--rows", "20000", "--replicas", "3"]
    done = subprocess.run(
        [*cmd, "--hours", "4", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert "20,000 step rows, 3 replicas, 4 h; 12 Parquet files" in text
    assert re.search(r"^ingest --attach \(checks every row\)\s+\d+\.\d\d\s+\d+$", text, re.M)
    assert "the steps scan reads 3 of 12 files; that hour has 3" in text
    assert text.rstrip().endswith("meets the target (<= 2 GB, only that hour's files)")
    assert not out.exists()  # the generated files are deleted
