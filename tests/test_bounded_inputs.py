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


@pytest.mark.parametrize(
    ("name", "head", "fill"),
    [
        ("proxy.jsonl.gz", b'{"call_id": "', b"a"),  # one endless line
        ("proxy.jsonl.gz", b'{"call_id": "c1"}\n', b"\n"),  # blank lines
        ("export.json.gz", b'{"status": "success", "data": ', b" "),  # a document
    ],
    ids=["one-line", "blank-lines", "document"],
)
def test_a_gzip_bomb_is_refused_by_its_ratio_before_it_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, head: bytes, fill: bytes
) -> None:
    """Issue 25: 2 GB of these ran out of memory (one line, a document) or ran over 120 s
    (blank lines); refused once 1 MiB (16 MiB in relplan) came from under 1/250 of that."""
    monkeypatch.setattr(files, "GZIP_RATIO_AFTER", 1024 * 1024)
    path = tmp_path / name
    path.write_bytes(gzip.compress(head + fill * (8 * 1024 * 1024), compresslevel=9))
    db = tmp_path / "w.duckdb"
    with pytest.raises(InputError, match=r"decompresses to over 250 times its size .* bomb"):
        ingest(db, path)
    assert not db.exists()


@pytest.mark.slow
def test_a_bomb_behind_a_plausible_head_is_caught_while_hashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first MiB compresses like a log (the up-front check passes); the streaming hash
    (files.digest) keeps the ratio and stops at the blank lines behind it."""
    monkeypatch.setattr(files, "GZIP_RATIO_AFTER", 1024 * 1024)
    import random

    rnd = random.Random(25)
    lines = b"".join(
        b'{"call_id": "c%d", "x": "%x"}\n' % (i, rnd.getrandbits(64)) for i in range(10_000)
    )
    path = tmp_path / "proxy.jsonl.gz"
    path.write_bytes(gzip.compress(lines + b"\n" * (96 * 1024 * 1024), compresslevel=9))
    files.check_gzip_ratio(path)  # the head alone passes
    with pytest.raises(InputError, match=r"decompresses to over 250 times its size"):
        files.digest(path)


def test_detection_reads_a_gzipped_document_only_up_to_its_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Detection parses a JSON document whole (no format named): bounded by MAX_DOCUMENT
    like the readers (it called gzip.decompress on the whole file: a 2 GB document of spaces
    ran out of memory). The ratio check is lifted here to reach that bound."""
    monkeypatch.setattr(files, "MAX_DOCUMENT", 1024 * 1024)
    monkeypatch.setattr(files, "MAX_GZIP_RATIO", 10**9)
    path = tmp_path / "export.json.gz"
    path.write_bytes(gzip.compress(b'{"status": "success", "data": ' + b" " * (4 << 20)))
    with pytest.raises(InputError, match=r"a JSON document larger than 1 MiB \(decompressed\)"):
        ingest(tmp_path / "w.duckdb", path)
