"""Every command shown in a ```console block of the README runs and prints what it shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from relplan.cli import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```console\n(.*?)```", README, re.DOTALL)


def _examples() -> list[tuple[str, str]]:
    """(command, expected output) pairs: a `$ relplan ...` line and the lines until the next `$`."""
    pairs: list[tuple[str, str]] = []
    for block in BLOCKS:
        chunks = re.split(r"^\$ ", block, flags=re.MULTILINE)
        for chunk in chunks[1:]:
            command, _, output = chunk.partition("\n")
            pairs.append((command, output))
    return pairs


def test_readme_has_examples() -> None:
    assert len(_examples()) >= 4


def test_quick_start_has_the_two_commands() -> None:
    quick = README.split("## Quick start", 1)[1]
    first_block = re.search(r"```sh\n(.*?)```", quick, re.DOTALL)
    assert first_block is not None
    lines = [ln for ln in first_block.group(1).splitlines() if ln.strip()]
    assert len(lines) == 2
    assert "relplan " in lines[0]
    assert "pytest" in lines[1]


@pytest.mark.parametrize(("command", "expected"), _examples(), ids=lambda v: v[:60])
def test_readme_example_output_is_real(
    command: str, expected: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("RELPLAN_DB", str(tmp_path / "readme.duckdb"))
    argv = shlex.split(command)
    assert argv[0] == "relplan"
    res = CliRunner().invoke(app, argv[1:])
    assert res.exit_code == 0, res.stderr
    got = [ln.rstrip() for ln in res.stdout.rstrip("\n").splitlines()]
    want = [ln.rstrip() for ln in expected.rstrip("\n").splitlines()]
    assert got == want
