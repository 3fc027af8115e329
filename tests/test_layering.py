"""The import contracts in pyproject's [tool.importlinter], checked by import-linter.

Only relplan.cli imports typer and rich; ingest never imports the analyses; the analyses never
import the report or the simulator; the report never imports the simulator. Skips (with the
reason) where import-linter is not installed, and fails instead under CI=true (.ci/run installs
the dev extra).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def _lint_imports() -> str:
    found = shutil.which("lint-imports") or shutil.which(
        "lint-imports", path=str(Path(sys.executable).parent)
    )
    if found is None:
        reason = "import-linter is not installed (pip install -e '.[dev]')"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; CI must run the import contracts")
        pytest.skip(reason)
    return found


def test_the_layering_contracts_hold() -> None:
    done = subprocess.run(
        [_lint_imports(), "--no-cache"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_the_contracts_name_the_layering_of_the_issue() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    forbidden = {
        (src, dst)
        for c in config["contracts"]
        if c["type"] == "forbidden"
        for src in c["source_modules"]
        for dst in c["forbidden_modules"]
    }
    assert {
        ("relplan", "typer"),
        ("relplan", "rich"),
        ("relplan.ingest", "relplan.analyses"),
        ("relplan.analyses", "relplan.report"),
        ("relplan.analyses", "relplan.sim"),
        ("relplan.report", "relplan.sim"),
    } <= forbidden
