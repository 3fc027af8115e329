"""bench/speed.py runs end to end in its one side-by-side mode (`--before`, here this very
checkout's folder against itself; warm and computed figures and start-up, once each), and
refuses the cold-only mode it replaced. The report figures are of a tiny simulated run
(tests/helpers/sim_runs.py): what is checked is the table, not the sample's figures, and the
sample's 20 reports cost about three times the CPU (its first one replays the what-if).
`--smoke` (bench/speed.py's docstring) leaves out the unmeasured runs and measures the
`--before` side for one figure: 12 processes instead of 37, every table still printed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.sim_runs import tiny_run

ROOT = Path(__file__).resolve().parent.parent
REPORT_FIGURES = [
    "report, warm (page cache)",
    "report, computed (what-if cached)",
    "report, computed, analyses cached",
    "report, computed with ingest",
    "report --no-whatif, warm",
    "report --no-whatif, computed",
    "report --no-whatif, analyses cached",
    "report --no-whatif, with ingest",
]


@pytest.mark.slow
def test_speed_bench_prints_each_figure_against_its_goal_and_before_after() -> None:
    done = subprocess.run(
        [
            *(sys.executable, "bench/speed.py", "--repeat", "1", "--no-cold", "--smoke"),
            *("--before", str(ROOT), str(tiny_run())),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "load average at start" in lines[0]
    assert lines[1].split() == ["figure", "value", "goal", "cpu", "peak"]
    assert lines[-1].startswith("load average at end ")
    side = next(i for i, line in enumerate(lines) if line.startswith("report figures, "))
    rows = {line[:36].strip(): line[36:].split() for line in lines[3 : side - 1]}
    assert list(rows) == [
        *REPORT_FIGURES,
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
        elif label in REPORT_FIGURES:  # and each figure's own peak
            assert cells[-3] in ("meets", "misses"), label
            assert float(cells[-2].rstrip("s")) > 0, label
            assert cells[-1].endswith("MB"), label
            assert float(cells[-1].removesuffix("MB")) > 0, label
        else:
            assert cells[-2] in ("meets", "misses"), label
            assert float(cells[-1].rstrip("sx")) > 0, label  # CPU seconds or CPU ratio
    # the side-by-side table: wall, CPU and peak MB, before and after, for every figure the
    # before side measured (under --smoke the last one, which reads no cache)
    assert "median of 1 each" in lines[side]
    assert lines[side + 2].split() == ["before", "after"] * 3
    pairs = {line[:36].strip(): line[36:].split() for line in lines[side + 3 : -1]}
    assert list(pairs) == REPORT_FIGURES[-1:]
    for label, cells in pairs.items():
        assert len(cells) == 6, label
        assert all(float(c) > 0 for c in cells), label


def test_the_measured_processes_inherit_this_environment_bytecode_aside() -> None:
    """bench/speed.py's measured processes run in the bench's own environment (PATH, HOME,
    any variable), with bytecode moved under the temporary folder when
    PYTHONDONTWRITEBYTECODE is set; they once ran with an empty one."""
    code = (
        "import os, sys; sys.path.insert(0, 'bench'); import speed; "
        "speed.use_measuring_environ(); e = os.environ; "
        "print(e.get('RELPLAN_SENTINEL'), 'PATH' in e, e.get('PYTHONDONTWRITEBYTECODE'), "
        "e.get('PYTHONPYCACHEPREFIX', '').startswith(tempfile.gettempdir()))"
    ).replace("import os,", "import os, tempfile,")
    env = {**os.environ, "RELPLAN_SENTINEL": "kept", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["kept", "True", "None", "True"]


def test_the_cold_only_mode_is_gone() -> None:
    done = subprocess.run(
        [sys.executable, "bench/speed.py", "--against", "main", "--against-only"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "unrecognized arguments: --against --against-only" in done.stderr


@pytest.mark.slow
def test_speed_bench_sets_ingest_beside_the_bare_copy() -> None:
    """`--ingest ROWS --no-report`: the ingest rows (JSON Lines and Parquet against DuckDB's
    bare copy, bench/ingest.py's measurement) and start-up, no report figures."""
    done = subprocess.run(
        [
            *(sys.executable, "bench/speed.py", "--repeat", "1", "--smoke"),
            *("--no-report", "--ingest", "3000"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rows = {line[:36].strip(): line[36:].split() for line in lines[3:-1]}
    assert not any(label.startswith("report") for label in rows)
    for label in ("ingest JSONL 0.003M / bare copy", "ingest Parquet 0.003M / bare copy"):
        value, goal, verdict, cpu = rows[label]
        assert float(value.removesuffix("x")) > 0, label
        assert goal == "1.30x", label
        assert verdict in ("meets", "misses"), label
        assert float(cpu.removesuffix("x")) > 0, label
