"""The README's ingest session (```shell-session blocks) runs as written, in ONE workspace:
each command's output (stdout, or the error line on stderr) is what the README shows."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from relplan.cli import app

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SESSIONS = re.findall(r"```shell-session\n(.*?)```", README, re.DOTALL)


def _steps(block: str) -> list[tuple[str, str]]:
    chunks = re.split(r"^\$ ", block, flags=re.MULTILINE)
    return [(c.partition("\n")[0], c.partition("\n")[2]) for c in chunks[1:]]


def test_the_readme_has_an_ingest_session() -> None:
    assert SESSIONS
    assert any("relplan inspect" in s for s in SESSIONS)


@pytest.mark.slow
@pytest.mark.parametrize("block", SESSIONS, ids=lambda b: b.splitlines()[0][:50])
def test_readme_session_output_is_real(
    block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("RELPLAN_DB", str(tmp_path / "session.duckdb"))
    for command, expected in _steps(block):
        argv = shlex.split(command)
        assert argv[0] == "relplan"
        res = CliRunner().invoke(app, argv[1:])
        want = [ln.rstrip() for ln in expected.rstrip("\n").splitlines()]
        if want and want[0].startswith("relplan: error: "):
            assert res.exit_code == 2, command
            got = res.stderr
        else:
            assert res.exit_code == 0, f"{command}: {res.stderr}"
            got = res.stdout
        assert [ln.rstrip() for ln in got.rstrip("\n").splitlines()] == want, command
