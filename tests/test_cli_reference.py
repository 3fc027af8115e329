"""docs/cli.md is the program's own help: regenerated here, it must match the file."""

from __future__ import annotations

from pathlib import Path

from typer.main import get_command

from relplan.cli.reference import REGENERATE, render_reference
from relplan.cli.root import app

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "cli.md"


def test_cli_reference_matches_the_program() -> None:
    want = render_reference()
    got = DOC.read_text(encoding="utf-8") if DOC.exists() else ""
    assert got == want, f"docs/cli.md is out of date with the CLI; regenerate it: {REGENERATE}"


def test_cli_reference_has_every_command_and_the_value_syntax() -> None:
    text = render_reference()
    paths: list[str] = []

    def walk(cmd: object, path: str) -> None:
        paths.append(path)
        for name, child in (getattr(cmd, "commands", None) or {}).items():
            walk(child, f"{path} {name}")

    walk(get_command(app), "relplan")
    for path in paths:
        assert f"\n### {path}\n" in text
        assert f"Usage: {path} " in text
    assert "relplan simulate calibrate" in paths
    assert "`90`, `90s`, `2m`, `1.5h`, `30d`" in text
    assert "RFC 3339" in text
    # lazy help texts are filled in, never shown as placeholders
    assert "{analyses}" not in text
    assert "wasted_prefill" in text
