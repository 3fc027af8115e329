"""Smoke test of bench/ingest.py at a tiny size: it generates the three files and prints a
row per file with the in-process and whole-process ratios it measured, and with --before a
second table beside an earlier checkout (this one here). `--smoke` (bench/ingest.py's
docstring) leaves out the unmeasured warm-up and measures the --before side for the first
file: 17 processes instead of 25, every table still printed (the second with the first
file's row: each row of it is the same code, `_side_by_side`, on another file's runs)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_ingest_bench_prints_in_process_and_whole_process_ratios(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "bench/ingest.py",
            "--sizes",
            "3000",
            "--repeat",
            "1",
            "--out",
            str(tmp_path),
            "--before",
            str(ROOT),
            "--smoke",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    first, _, second = done.stdout.partition("\n\n")
    lines = first.splitlines()
    assert "process: relplan ingest" in lines[0]
    rows = [line.strip("|").split("|") for line in lines[2:]]
    assert [r[0].strip() for r in rows] == [
        "JSONL 0.003M steps",
        "Parquet 0.003M steps",
        "proxy JSONL 0.003M steps",
    ]
    for r in rows:
        p_copy, p_ing, ratio = (float(c.strip().removesuffix(" s")) for c in r[-3:])
        assert int(r[1].replace(",", "")) > 0
        # The seconds are printed to 0.01 s, the ratio from the unrounded times.
        assert ratio == pytest.approx(p_ing / p_copy, rel=0.05)
    # --before: CPU seconds (least / median) and ratios to the copy for both checkouts, of
    # the first file under --smoke.
    beside = [line.strip("|").split("|") for line in second.splitlines()[4:]]
    assert [r[0].strip() for r in beside] == [rows[0][0].strip()]
    for r in beside:
        copy, before, before_x, this, this_x = (
            [float(x) for x in c.strip().split(" / ")] for c in r[1:6]
        )
        # The seconds are printed to 0.01 s, the ratios from the unrounded seconds.
        for secs, ratio, i in ((before, before_x, 0), (this, this_x, 1)):
            lo = (secs[i] - 0.005) / (copy[i] + 0.005)
            hi = (secs[i] + 0.005) / (copy[i] - 0.005)
            assert lo - 0.005 <= ratio[i] <= hi + 0.005
    # Where the measuring processes keep relplan's bytecode (bench/ingest.py, Bytecode).
    assert "bytecode cached: " in done.stderr
