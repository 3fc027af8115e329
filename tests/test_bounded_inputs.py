"""Inputs that would make unbounded work (issue: reliability, second wave): a gzip bomb of a
JSON document and a line without end are refused with FILE:LINE before they fill the memory.
The limits are lowered here so the test files stay small; the real ones are in
relplan/ingest/files.py (MAX_DOCUMENT 256 MiB, MAX_LINE 16 MiB)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from relplan.errors import InputError
from relplan.ingest import files
from tests.helpers.ingest import ingest


def test_a_gzip_bomb_of_a_query_range_export_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "MAX_DOCUMENT", 1024 * 1024)
    body = b'{"status": "success", "data": {"resultType": "matrix", "result": [' + b" " * (
        4 * 1024 * 1024
    )
    path = tmp_path / "export.query_range.json.gz"
    path.write_bytes(gzip.compress(body, compresslevel=9))
    assert path.stat().st_size < 64 * 1024  # a bomb: tiny on disk
    db = tmp_path / "w.duckdb"
    with pytest.raises(InputError, match=r"query_range response larger than 1 MiB"):
        ingest(db, path, fmt="query_range")
    assert not db.exists()  # nothing stored: a failed ingest into a new path leaves no file


def test_a_line_without_end_is_refused_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "MAX_LINE", 1024 * 1024)
    path = tmp_path / "m.scrape.txt"
    path.write_bytes(b"# SCRAPE 1764460800\nup 1\n" + b"a" * (2 * 1024 * 1024))
    with pytest.raises(InputError, match=r"m\.scrape\.txt:3: a line longer than 1 MiB"):
        ingest(tmp_path / "w.duckdb", path)
