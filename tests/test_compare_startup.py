"""`relplan compare` in a new process starts numpy without OpenBLAS's thread pool
(relplan/cli/compare.py, BLAS_THREADS): the variable is set before numpy is imported, and a
value the user gave is kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import restarts_incident

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import os, sys
from relplan.cli import main
sys.argv = ["relplan", "compare", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print("PROBE", "numpy" in sys.modules, os.environ.get("OPENBLAS_NUM_THREADS"), file=sys.stderr)
"""


@pytest.mark.slow  # two workspaces and a compare in a new process: 2.5-2.9 s each, quiet
@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("3", "3")])
def test_compare_starts_numpy_with_one_blas_thread_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str | None, seen: str
) -> None:
    a = restarts_incident.build(tmp_path / "a.duckdb")
    b = restarts_incident.build(tmp_path / "b.duckdb", with_gateway=False)
    monkeypatch.setenv("RELPLAN_COMPARE_CACHE", "0")  # analysed, so numpy is imported
    if given is None:
        monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", given)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(a), str(b)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "verdicts" in done.stdout, done.stderr
    assert done.stderr.strip().splitlines()[-1] == f"PROBE True {seen}"
