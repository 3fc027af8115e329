"""File names and `--db` paths that are not UTF-8 (issue 25): on Linux a name is bytes, and
b'caf\\xe9.jsonl' reaches Python as a surrogate. Each is one `relplan: error: PATH: ...` line
with the bytes escaped (`caf\\xe9.jsonl`), exit 2, no traceback and no file left behind."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from relplan.cli import app
from tests.helpers.fast_cli import CliRunner
from tests.helpers.ingest import INCIDENT

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Linux file names are bytes")


def _name(folder: Path, raw: bytes) -> Path:
    return Path(os.fsdecode(os.fsencode(str(folder)) + b"/" + raw))


def _fails(args: list[str], shown: str) -> None:
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith(f"relplan: error: {shown}: the name is not UTF-8"), done.stderr
    assert done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("where", ["named", "in_a_folder"])
def test_an_input_file_named_in_latin_1_is_one_clean_error(tmp_path: Path, where: str) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    bad = _name(folder, b"caf\xe9.jsonl")
    shutil.copy(INCIDENT / "proxy.jsonl", bad)
    db = tmp_path / "w.duckdb"
    target = bad if where == "named" else folder
    _fails(["ingest", "--db", str(db), str(target)], f"{folder}/caf\\xe9.jsonl")
    assert not db.exists()


@pytest.mark.parametrize("command", ["ingest", "analyze", "inspect"])
def test_a_db_path_in_latin_1_is_one_clean_error(tmp_path: Path, command: str) -> None:
    db = _name(tmp_path, b"w\xe9.duckdb")
    extra = [str(INCIDENT / "proxy.jsonl")] if command == "ingest" else []
    _fails([command, "--db", str(db), *extra], f"{tmp_path}/w\\xe9.duckdb")
    assert os.listdir(tmp_path) == []


def test_an_attach_glob_in_latin_1_is_one_clean_error(tmp_path: Path) -> None:
    glob = _name(tmp_path, b"tr\xe9/*.parquet")
    _fails(
        ["ingest", "--db", str(tmp_path / "w.duckdb"), "--attach", str(glob)],
        f"{tmp_path}/tr\\xe9/*.parquet",
    )
