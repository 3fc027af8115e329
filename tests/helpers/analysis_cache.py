"""`relplan analyze --db DB --json FLAGS`, run once per test run for each workspace content.

Several files analyse the same template workspaces with the same flags (the lab's recorded
incidents: tests/test_lab_incidents.py checks the figures, tests/test_verdict_table.py words
the verdicts into docs/analyses.md). `analyze_json(db, *flags)` keeps the command's JSON in
the suite's template folder (tests/helpers/templates.py, shared by the pytest-xdist workers)
under the SHA-256 of the workspace file and the flags: copies of one template are the same
bytes, so their analysis runs once; any other workspace is analysed on its own. The code
cannot change during a run, and the JSON holds no path of the workspace.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from relplan.cli import app
from tests.helpers.fast_cli import CliRunner
from tests.helpers.templates import template


def analyze_json(db: Path, *flags: str) -> dict[str, Any]:
    """The parsed stdout of `relplan analyze --db DB --json FLAGS` (exit 0 asserted)."""
    digest = hashlib.sha256(Path(db).read_bytes()).hexdigest()

    def build(path: Path) -> None:
        out = CliRunner().invoke(app, ["analyze", "--db", str(db), "--json", *flags])
        assert out.exit_code == 0, out.output
        path.write_text(out.stdout, encoding="utf-8")

    kept = template(f"analyze {digest} {flags!r}", build, name="analysis.json")
    result: dict[str, Any] = json.loads(kept.read_text(encoding="utf-8"))
    return result
