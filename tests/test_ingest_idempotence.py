"""Idempotence by records, not bytes (docs/workspace.md, sources): the same records gzipped,
with CRLF line ends or a byte order mark are the same content and add nothing; the same
records re-encoded (JSON Lines as Parquet or CSV) are refused as a duplicate source, naming
the source that holds them, and nothing of that ingest is stored."""

from __future__ import annotations

import gzip
from pathlib import Path

import duckdb
import pytest

from relplan.errors import InputError
from tests.helpers.fast_read import state
from tests.helpers.ingest import INCIDENT, ingest
from tests.helpers.templates import from_template


def _ingested(db: Path, name: str) -> Path:
    """`db` holding the incident's file `name` alone, as source 1: a copy of a workspace
    ingested once per test run (tests/helpers/templates.py)."""
    return from_template(db, f"incident {name} alone", lambda path: ingest(path, INCIDENT / name))


def _variant(src: Path, tmp: Path, how: str) -> Path:
    data = src.read_bytes()
    if how == "gzip":
        out = tmp / (src.name + ".gz")
        out.write_bytes(gzip.compress(data))
    elif how == "crlf":
        out = tmp / src.name
        out.write_bytes(data.replace(b"\n", b"\r\n"))
    elif how == "bom":
        out = tmp / src.name
        out.write_bytes(b"\xef\xbb\xbf" + data)
    else:  # gzip of CRLF
        out = tmp / (src.name + ".gz")
        out.write_bytes(gzip.compress(data.replace(b"\n", b"\r\n")))
    return out


@pytest.mark.parametrize("how", ["gzip", "crlf", "bom", "gzip_crlf"])
@pytest.mark.parametrize("name", ["proxy.jsonl", "engine.jsonl", "metrics.om.txt"])
def test_the_same_records_gzipped_or_with_crlf_add_nothing(
    tmp_path: Path, name: str, how: str
) -> None:
    db = _ingested(tmp_path / "w.duckdb", name)
    before = state(db)
    report = ingest(db, _variant(INCIDENT / name, tmp_path, how))
    assert report.sources == []
    (skipped,) = report.skipped
    assert "same content, nothing added" in skipped.reason
    assert state(db) == before


def _reencode(src: Path, out: Path) -> Path:
    con = duckdb.connect()
    con.execute(f"copy (select * from read_json_auto('{src}')) to '{out}'")
    con.close()
    return out


@pytest.mark.parametrize("suffix", ["parquet", "csv"])
@pytest.mark.parametrize("name", ["engine.jsonl", "proxy.jsonl"])
def test_the_same_records_re_encoded_are_refused_as_a_duplicate_source(
    tmp_path: Path, name: str, suffix: str
) -> None:
    db = _ingested(tmp_path / "w.duckdb", name)
    before = state(db)
    other = _reencode(INCIDENT / name, tmp_path / f"{Path(name).stem}.{suffix}")
    with pytest.raises(InputError) as err:
        ingest(db, other)
    # engine and metrics: the whole source; proxy: its first attempt, already stored
    assert "records as source 1" in err.value.reason or "already in the workspace" in (
        err.value.reason
    )
    assert state(db) == before


@pytest.mark.parametrize("name", ["engine.jsonl", "proxy.jsonl"])
def test_in_skip_mode_re_encoded_records_add_no_data(tmp_path: Path, name: str) -> None:
    """Engine records: the source is refused. Proxy attempts: each is a reject (its attempt
    number is already in the workspace), kept with the reason; no attempt is added."""
    db = _ingested(tmp_path / "w.duckdb", name)
    before = state(db)
    other = _reencode(INCIDENT / name, tmp_path / f"{Path(name).stem}.parquet")
    if name.startswith("engine"):
        with pytest.raises(InputError, match="records as source 1"):
            ingest(db, other, on_error="skip")
        assert state(db) == before
        return
    report = ingest(db, other, on_error="skip")
    after = state(db)
    assert after["attempts"] == before["attempts"]
    assert report.sources[0].rows == 0
    assert len(after["rejects"]) == report.sources[0].rejected == len(before["attempts"])
    assert all("already in the workspace" in r[4] for r in after["rejects"])


def test_a_re_encoded_engine_file_is_named_with_the_source_holding_its_records(
    tmp_path: Path,
) -> None:
    db = _ingested(tmp_path / "w.duckdb", "engine.jsonl")
    other = _reencode(INCIDENT / "engine.jsonl", tmp_path / "engine.parquet")
    with pytest.raises(InputError) as err:
        ingest(db, other)
    assert err.value.reason.startswith("the same 11 records as source 1 (")
    assert "in another encoding" in err.value.reason


def test_a_re_encoded_file_beside_its_original_in_one_ingest_is_refused(tmp_path: Path) -> None:
    # Into a new workspace (driver.Session.fresh: the earlier source is one of the ingest's own).
    other = _reencode(INCIDENT / "engine.jsonl", tmp_path / "engine.parquet")
    db = tmp_path / "w.duckdb"
    with pytest.raises(InputError) as err:
        ingest(db, INCIDENT / "engine.jsonl", other)
    assert err.value.reason.startswith("the same 11 records as source 1 (")
    assert state(db).get("events", []) == []


def test_different_records_of_the_same_count_are_both_stored(tmp_path: Path) -> None:
    db = _ingested(tmp_path / "w.duckdb", "engine.jsonl")
    text = (INCIDENT / "engine.jsonl").read_text().replace('"e1"', '"e1x"')
    changed = tmp_path / "engine2.jsonl"
    changed.write_text(text)
    assert text != (INCIDENT / "engine.jsonl").read_text()
    report = ingest(db, changed)
    assert report.sources[0].rows == 11
