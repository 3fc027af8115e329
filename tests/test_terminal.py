"""Strings from the inputs reach the terminal inert: control characters shown escaped."""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan.cli import app
from relplan.tables import format_table
from relplan.terminal import visible, visible_lines
from tests.helpers.fast_cli import CliRunner

HOSTILE = "r0\x1b]0;owned\x07\x1b[2J\rX\x00"
RAW = ("\x1b", "\x07", "\r", "\x00")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[2J", "\\x1b[2J"),
        ("a\x07b", "a\\x07b"),
        ("over\rwrite", "over\\x0dwrite"),
        ("nul\x00", "nul\\x00"),
        ("line\nbreak", "line\\x0abreak"),
        ("csi\x9b", "csi\\x9b"),
        ("sep\u2028", "sep\\u2028"),
        ("bidi\u202e", "bidi\\u202e"),
        ("tab\tok", "tab\tok"),
        ("naïve ✓", "naïve ✓"),
    ],
)
def test_control_characters_are_made_visible(text: str, shown: str) -> None:
    assert visible(text) == shown


def test_visible_lines_keeps_line_breaks_only() -> None:
    assert visible_lines("a\x1b\nb\r") == "a\\x1b\nb\\x0d"


def test_a_hostile_cell_cannot_move_the_cursor_or_break_the_table() -> None:
    out = format_table(["replica", "n"], [[HOSTILE, "1"], ["r1", "22"]])
    assert not any(c in out for c in RAW)
    lines = out.split("\n")
    assert len(lines) == 4
    assert lines[2].startswith("r0\\x1b]0;owned\\x07\\x1b[2J\\x0dX\\x00")
    # the columns stay aligned on the escaped width
    assert lines[2].index(" 1") == lines[3].index("22")


def test_a_hostile_path_in_an_error_line_is_escaped(tmp_path: Path) -> None:
    bad = tmp_path / "p\x1b]0;owned\x07\r.jsonl"
    bad.write_text('{"call_id": "c", "attempt": "x"}\n', encoding="utf-8")
    res = CliRunner().invoke(app, ["ingest", "--db", str(tmp_path / "w.duckdb"), str(bad)])
    assert res.exit_code == 2
    assert res.stderr.startswith("relplan: error: ")
    assert res.stderr.count("\n") == 1
    assert not any(c in res.stderr for c in RAW)
    assert "p\\x1b]0;owned\\x07\\x0d.jsonl" in res.stderr


def test_a_hostile_db_path_in_an_error_line_is_escaped(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["analyze", "--db", str(tmp_path / "w\x1b[2J\x07.duckdb")])
    assert res.exit_code == 2
    assert not any(c in res.stderr for c in RAW)
    assert "\\x1b[2J" in res.stderr
