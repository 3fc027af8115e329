"""An installed relplan works outside a checkout: the SQL ships inside the wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_ships_the_queries_and_runs_outside_the_checkout(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(dist),
            str(ROOT),
        ],
        check=True,
        timeout=300,
    )
    (wheel,) = dist.glob("relplan-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n for n in names if n.startswith("relplan/queries/") and n.endswith(".sql")}
    in_repo = {
        f"relplan/queries/{p.relative_to(ROOT / 'queries').as_posix()}"
        for p in (ROOT / "queries").rglob("*.sql")
    }
    assert shipped == in_repo
    assert shipped
    # the Vega bundle (relplan/report/bundle.py), so a first report builds none
    assert any(n.startswith("relplan/report/vendor/vega-bundle-") for n in names)

    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--no-deps",
            "-q",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        timeout=300,
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import relplan, relplan.sql as s; print(relplan.__file__); print(s.load('schema').path)",
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    module_file, query_path = probe.stdout.split()
    assert Path(module_file).is_relative_to(site)
    assert query_path == "queries/schema.sql"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "relplan",
            "budget",
            "--crashes",
            "10",
            "--concurrency",
            "40",
            "--json",
        ],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert '"break_even_stream_seconds": 259.2' in run.stdout
