"""A new workspace is a copy of the empty one kept in the cache (relplan/workspace/template.py):
the same workspace as one whose schema is created in place (but that it also holds the ingest's
conversion macros, persistent), a damaged or unwritable cache only makes it the slow way, and a
failed open leaves the path as it was."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from relplan import sql
from relplan.errors import InputError
from relplan.ingest.stage import create_macros
from relplan.workspace import SCHEMA_VERSION, connect, open_workspace, template
from tests.helpers.fast_read import whole_state
from tests.helpers.ingest import INCIDENT, ingest


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of this test, and no template kept in memory by an earlier one."""
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(template, "_BYTES", {})
    return tmp_path / "cache" / "empty-workspace"


def _kept(cache: Path) -> list[str]:
    return sorted(p.suffix for p in cache.iterdir())


def test_a_new_workspace_is_the_copied_template_and_holds_what_an_ingest_stores(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copied = tmp_path / "copied.duckdb"
    ingest(copied, INCIDENT / "proxy.jsonl")
    assert _kept(cache) == [".duckdb", ".sha256"]
    # The slow way: no cache folder can be made (its parent is a file), so the schema is
    # created in place.
    (tmp_path / "blocked").write_text("")
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path / "blocked" / "cache"))
    monkeypatch.setattr(template, "_BYTES", {})
    in_place = tmp_path / "in-place.duckdb"
    ingest(in_place, INCIDENT / "proxy.jsonl")
    assert not (tmp_path / "blocked" / "cache").exists()
    a, b = whole_state(copied), whole_state(in_place)
    assert a is not None
    assert b is not None
    # The same tables, columns, rows (but the sources row's path and time), views, sequences.
    a.pop("sources")
    b.pop("sources")
    assert a == b
    con = duckdb.connect(str(copied), read_only=True)
    try:
        meta = con.execute("select key, value from relplan_meta").fetchall()
    finally:
        con.close()
    assert meta == [("schema_version", str(SCHEMA_VERSION))]


def test_a_damaged_template_is_not_copied_and_is_made_again(cache: Path, tmp_path: Path) -> None:
    ingest(tmp_path / "first.duckdb", INCIDENT / "proxy.jsonl")
    (kept,) = cache.glob("*.duckdb")
    good = kept.read_bytes()
    kept.write_bytes(good[: len(good) // 2])  # truncated: its bytes no longer hash to the digest
    template._BYTES.clear()
    second = tmp_path / "second.duckdb"
    rep = ingest(second, INCIDENT / "proxy.jsonl")
    assert rep.sources[0].rows > 0
    assert kept.read_bytes() != good[: len(good) // 2]
    assert len(kept.read_bytes()) == len(good)
    con = duckdb.connect(str(second), read_only=True)
    try:
        assert con.execute("select count(*) from attempts").fetchone() == (rep.sources[0].rows,)
    finally:
        con.close()


def test_an_empty_file_becomes_the_workspace_and_a_failed_open_leaves_it_empty(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "w.duckdb"
    db.write_bytes(b"")
    connect(db).close()
    assert db.stat().st_size > 0
    assert _kept(cache) == [".duckdb", ".sha256"]

    again = tmp_path / "again.duckdb"
    again.write_bytes(b"")

    def refuse(*args: object, **kwargs: object) -> None:
        raise duckdb.IOException("the disk refused")

    monkeypatch.setattr(duckdb, "connect", refuse)
    with pytest.raises(InputError, match="the disk refused"):
        connect(again)
    assert again.read_bytes() == b""
    new = tmp_path / "new.duckdb"
    with pytest.raises(InputError, match="the disk refused"):
        connect(new)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again.duckdb", "cache", "w.duckdb"]


def test_a_failed_ingest_into_a_new_path_leaves_no_file(cache: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text((INCIDENT / "proxy.jsonl").read_text() + '{"broken": \n')
    db = tmp_path / "w.duckdb"
    with pytest.raises(InputError), open_workspace(db):
        raise InputError("stop", str(bad))
    assert not db.exists()
    with pytest.raises(InputError, match=f"{bad}:"):
        ingest(db, bad)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "cache"]


def _macros(con: duckdb.DuckDBPyConnection) -> dict[str, set[str]]:
    """The rp_ macros by database: the file's own and this connection's temp ones."""
    got: dict[str, set[str]] = {}
    for db, name in con.execute(
        "select database_name, function_name from duckdb_functions()"
        " where function_name like 'rp\\_%' escape '\\'"
    ).fetchall():
        got.setdefault("temp" if db == "temp" else "file", set()).add(name)
    return got


def test_a_new_workspace_holds_the_ingest_macros_so_an_ingest_makes_none(
    cache: Path, tmp_path: Path
) -> None:
    con = connect(tmp_path / "w.duckdb")
    try:
        made = _macros(con)
        assert "temp" not in made
        assert {"rp_time", "rp_proxy_template", "rp_engine_template", "rp_macros_digest"} <= (
            made["file"]
        )
        create_macros(con)
        assert "temp" not in _macros(con)
    finally:
        con.close()


def test_a_workspace_holding_no_or_other_macros_gets_them_as_temp_macros(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    con = connect(tmp_path / "other.duckdb")
    try:
        con.execute("create or replace macro rp_macros_digest() as 'another relplan'")
        con.execute("create or replace macro rp_num(x) as 'a stale definition'")
        create_macros(con)
        made = _macros(con)
        assert made["temp"] == made["file"] - {"rp_macros_digest"}
        assert con.execute("select rp_num('2.5')").fetchone() == (2.5,)
    finally:
        con.close()
    # A workspace made in place (no cache folder can be made) holds none: all are made temp.
    (tmp_path / "blocked").write_text("")
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path / "blocked" / "cache"))
    monkeypatch.setattr(template, "_BYTES", {})
    con = connect(tmp_path / "in-place.duckdb")
    try:
        assert _macros(con) == {}
        create_macros(con)
        assert "rp_time" in _macros(con)["temp"]
        assert "file" not in _macros(con)
    finally:
        con.close()


def test_every_macro_file_statement_is_a_temp_macro_kept_persistent(cache: Path) -> None:
    kept = template.kept_macros()
    assert len(kept) == len(template.MACROS) + 1
    assert not any("create or replace temp" in text.lower() for text in kept)


def test_the_macros_version_names_the_macro_files_as_they_are() -> None:
    digest = template.macros_digest()
    assert f"'{digest}'" in sql.load(template.VERSION).text, (
        f"queries/{template.VERSION}.sql: change the digest to '{digest}'"
    )
