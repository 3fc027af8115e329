"""Detection reads a Parquet file's columns through one in-memory DuckDB per process
(relplan/ingest/sniff.py): a file it cannot read is the same error as before, and the next
file is read as ever; a forked child (another process id) opens a connection of its own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from relplan.errors import InputError
from relplan.ingest import sniff
from relplan.ingest.files import FileInfo, digest, peek
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "pulse-retry-cancel"


def _info(path: Path) -> FileInfo:
    size, gz, head = peek(path)
    return FileInfo(path, size, gz, head, digest(path, False))


def test_unreadable_parquet_is_an_error_and_the_next_file_still_reads(tmp_path: Path) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1garbagegarbagePAR1")
    with pytest.raises(InputError) as caught:
        ingest(tmp_path / "w.duckdb", bad)
    assert caught.value.path == str(bad)
    assert "not a readable Parquet file (" in str(caught.value)
    assert not (tmp_path / "w.duckdb").exists() or not rows(
        tmp_path / "w.duckdb", "select * from sources"
    )
    report = ingest(tmp_path / "w.duckdb", SAMPLE / "proxy.parquet")
    assert [(s.kind, s.format) for s in report.sources] == [("proxy", "parquet")]


def test_the_columns_are_the_files_own(tmp_path: Path) -> None:
    engine = set(sniff.parquet_columns(_info(SAMPLE / "engine.parquet")))
    proxy = set(sniff.parquet_columns(_info(SAMPLE / "proxy.parquet")))
    assert sniff.kind_from_keys(engine) == "engine"
    assert sniff.kind_from_keys(proxy) == "proxy"


def test_another_process_reads_with_its_own_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    sniff._read_parquet_columns(_info(SAMPLE / "proxy.parquet"))
    parent = sniff._FOOTERS[os.getpid()]
    child = os.getpid() + 1  # what os.getpid() says after a fork
    monkeypatch.setattr(sniff.os, "getpid", lambda: child)
    assert "execution_id" in sniff._read_parquet_columns(_info(SAMPLE / "engine.parquet"))
    assert list(sniff._FOOTERS) == [child]
    assert sniff._FOOTERS[child] is not parent
