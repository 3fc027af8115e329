"""The cheap commands load no heavy library: each runs in a fresh interpreter, which then
reports what sys.modules holds (harlequin's tests/unit_tests/test_import_hygiene.py is the
model). A module imported at start-up "just for a type" or a help string shows up here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("altair", "numpy", "polars", "duckdb", "pyarrow", "jinja2", "vl_convert")

# Runs `relplan ARGS` as `python -m relplan ARGS` does, then prints the loaded heavy modules.
PROBE = """
import json, runpy, sys
heavy, args = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["relplan", *args]
code = 0
try:
    runpy.run_module("relplan", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
print("\\nPROBE " + json.dumps({"code": code, "loaded": sorted(m for m in heavy if m in sys.modules)}))
"""

PULSE = ["pulse", "--capacity", "2.78", "--pulse", "2.7", "--pulse-seconds", "107"]


def _probe(args: list[str], heavy: tuple[str, ...] = HEAVY) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(heavy)), json.dumps(args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    line = done.stdout.rsplit("PROBE ", 1)
    assert len(line) == 2, done.stdout + done.stderr
    return dict(json.loads(line[1]))


def test_importing_the_cli_loads_no_heavy_library() -> None:
    code = (
        "import sys; from relplan.cli import main, app; "
        f"print([m for m in {[*HEAVY, 'pydantic', 'rich']!r} if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["--help"],
        ["budget", "--crashes", "10", "--concurrency", "40"],
        ["budget", "--crashes", "10", "--concurrency", "40", "--json"],
        [*PULSE, "--deadline", "2m"],
        [*PULSE, "--json"],
        ["budget", "-h"],
        ["pulse", "--help"],
    ],
    ids=" ".join,
)
def test_cheap_commands_load_no_heavy_library(args: list[str]) -> None:
    result = _probe(args)
    assert result["code"] == 0
    assert result["loaded"] == []


def test_version_loads_not_even_pydantic() -> None:
    assert _probe(["--version"], ("pydantic", "rich")) == {"code": 0, "loaded": []}


def test_the_probe_sees_a_heavy_import() -> None:
    """A command that needs duckdb does load it: the probe is not blind."""
    result = _probe(["inspect", "--db", str(ROOT / "no-such-workspace.duckdb")], ("duckdb",))
    assert result == {"code": 2, "loaded": ["duckdb"]}


OTHER_COMMANDS = ("relplan.cli.report", "relplan.cli.ingest", "relplan.cli.simulate")


@pytest.mark.parametrize(
    "args",
    [["budget", "--crashes", "10", "--concurrency", "40"], [*PULSE, "--json"], ["--version"]],
    ids=" ".join,
)
def test_a_cheap_command_imports_no_other_command(args: list[str]) -> None:
    """main() builds the command named first alone (relplan/cli/root.py, COMMANDS)."""
    assert _probe(args, OTHER_COMMANDS) == {"code": 0, "loaded": []}


def test_help_lists_every_command_of_the_table() -> None:
    """`-h` still builds the whole table: the probe sees the other commands' modules."""
    assert _probe(["-h"], OTHER_COMMANDS) == {"code": 0, "loaded": sorted(OTHER_COMMANDS)}
