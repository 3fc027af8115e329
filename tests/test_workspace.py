"""The workspace file: schema created and versioned, path rules, what `--db` may name."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from relplan import workspace
from relplan.cli import app
from relplan.errors import InputError, NoDataError, UsageError
from tests.helpers.fast_cli import CliRunner
from tests.helpers.fast_read import state
from tests.helpers.ingest import INCIDENT, ingest


def test_new_workspace_has_every_table(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with workspace.open_workspace(db) as con:
        names = {
            r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()
        }
    assert set(workspace.TABLES) <= names
    with workspace.open_workspace(db, read_only=True) as con:
        assert con.execute("select count(*) from attempts").fetchone() == (0,)


def test_read_only_open_of_a_missing_workspace_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(NoDataError, match="relplan ingest"):
        workspace.connect(tmp_path / "none.duckdb", read_only=True)


def test_db_path_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RELPLAN_DB", raising=False)
    assert workspace.resolve_db(None) == Path("relplan.duckdb")
    monkeypatch.setenv("RELPLAN_DB", "/tmp/x.duckdb")
    assert workspace.resolve_db(None) == Path("/tmp/x.duckdb")
    assert workspace.resolve_db(Path("a.duckdb")) == Path("a.duckdb")


# --- --db names a DuckDB workspace or a new path (issue 11) ---------------------------------


def _cli(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.stderr


def test_a_jsonl_file_given_as_db_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    log = tmp_path / "proxy.jsonl"
    log.write_bytes((INCIDENT / "proxy.jsonl").read_bytes())
    before = log.read_bytes()
    code, err = _cli("ingest", "--db", str(log), str(INCIDENT / "proxy.jsonl"))
    assert code == 2
    assert err.count("\n") == 1
    assert "not a relplan workspace (a JSON file)" in err
    assert log.read_bytes() == before
    assert not (tmp_path / "proxy.jsonl.wal").exists()


def test_an_sqlite_database_given_as_db_is_refused_before_duckdb_reads_it(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "other.db"
    sqlite3.connect(db).execute("create table t (x)").connection.close()
    before = db.read_bytes()
    with pytest.raises(InputError, match="an SQLite database"):
        workspace.connect(db)
    assert db.read_bytes() == before


def test_a_directory_given_as_db_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory"):
        workspace.connect(tmp_path)


def test_a_duckdb_file_of_another_program_is_refused_unchanged(tmp_path: Path) -> None:
    db = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(db))
    con.execute("create table orders (id integer)")
    con.close()
    with pytest.raises(InputError, match="not a relplan workspace"):
        workspace.connect(db)
    con = duckdb.connect(str(db), read_only=True)
    tables = con.execute("select table_name from duckdb_tables()").fetchall()
    con.close()
    assert tables == [("orders",)]


def test_a_truncated_workspace_is_one_line_and_exit_2(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, INCIDENT / "proxy.jsonl")
    data = db.read_bytes()
    for size in (6, 5000, len(data) // 2):
        cut = tmp_path / f"cut{size}.duckdb"
        cut.write_bytes(data[:size])
        code, err = _cli("analyze", "--db", str(cut))
        assert code == 2, err
        assert err.startswith(f"relplan: error: {cut}: ")
        assert err.count("\n") == 1
        assert "Traceback" not in err


# --- schema version ----------------------------------------------------------------------


def _meta(db: Path) -> list[tuple[str, str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("select key, value from relplan_meta").fetchall()
    finally:
        con.close()


def test_a_new_workspace_records_its_schema_version(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    workspace.connect(db).close()
    assert _meta(db) == [("schema_version", str(workspace.SCHEMA_VERSION))]


def test_a_workspace_without_a_version_is_version_1_and_still_opens(tmp_path: Path) -> None:
    db = tmp_path / "old.duckdb"
    ingest(db, INCIDENT / "proxy.jsonl")
    con = duckdb.connect(str(db))
    con.execute("drop table relplan_meta")  # as today's main made them
    con.close()
    before = state(db)
    with workspace.open_workspace(db, read_only=True) as ro:
        assert ro.execute("select count(*) from attempts").fetchone() == (len(before["attempts"]),)
    ingest(db, INCIDENT / "engine.jsonl")  # writing migrates it (schema.sql adds tables)
    assert _meta(db) == [("schema_version", str(workspace.SCHEMA_VERSION))]
    assert state(db)["attempts"] == before["attempts"]


@pytest.mark.parametrize(
    ("value", "said"), [("99", "newer"), ("0", "older"), ("x", "not a number")]
)
def test_a_workspace_of_another_schema_version_is_refused_intact(
    tmp_path: Path, value: str, said: str
) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, INCIDENT / "proxy.jsonl")
    con = duckdb.connect(str(db))
    con.execute("update relplan_meta set value = $v", {"v": value})
    con.close()
    before = state(db)
    for read_only in (False, True):
        with pytest.raises(InputError, match=said):
            workspace.connect(db, read_only=read_only)
    code, err = _cli("ingest", "--db", str(db), str(INCIDENT / "engine.jsonl"))
    assert code == 2
    assert err.count("\n") == 1
    assert said in err
    assert state(db) == before


# --- the environment is input ------------------------------------------------------------


def test_an_injected_memory_limit_is_refused_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "pwned.csv"
    monkeypatch.setenv("RELPLAN_MEMORY_LIMIT", f"1GB'; copy (select 1) to '{target}'; --")
    db = tmp_path / "w.duckdb"
    with pytest.raises(UsageError, match=r"^RELPLAN_MEMORY_LIMIT: expected a size"):
        workspace.connect(db)
    code, err = _cli("ingest", "--db", str(db), str(INCIDENT / "proxy.jsonl"))
    assert code == 2
    assert err.startswith("relplan: error: RELPLAN_MEMORY_LIMIT: ")
    assert err.count("\n") == 1
    assert not target.exists()
    assert not db.exists()


@pytest.mark.parametrize("value", ["512MB", "2GiB", "1.5GB", " 1GB "])
def test_plain_memory_limits_are_accepted(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("RELPLAN_MEMORY_LIMIT", value)
    assert workspace.memory_limit() == value.strip()


@pytest.mark.parametrize("value", ["512MB", "2GiB", "1.5GB", "64 KiB", "1TB"])
def test_the_memory_limit_in_bytes_has_duckdbs_units(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    """One reader, one unit: DuckDB's (KB, MB, GB, TB powers of 1000; KiB, GiB powers of 1024),
    so the staging threshold and DuckDB's own limit agree (1GB was read as 1 GiB before)."""
    monkeypatch.setenv("RELPLAN_MEMORY_LIMIT", value)
    expected = {
        "512MB": 512 * 10**6,
        "2GiB": 2 * 2**30,
        "1.5GB": 15 * 10**8,
        "64 KiB": 64 * 1024,
        "1TB": 10**12,
    }[value]
    assert workspace.memory_limit_bytes() == expected


def test_the_memory_limit_is_read_when_a_workspace_opens_not_at_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELPLAN_MEMORY_LIMIT", "300MB")
    con = workspace.connect(tmp_path / "w.duckdb")
    try:
        shown = con.execute("select current_setting('memory_limit')").fetchone()
    finally:
        con.close()
    assert shown == ("286.1 MiB",)  # DuckDB's own rendering of 300 * 10**6 bytes
    assert workspace.memory_limit_bytes() == 300 * 10**6


@pytest.mark.parametrize("value", ["", "lots", "1GB;", "-1GB", "80%", "1 G B"])
def test_odd_memory_limits_are_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("RELPLAN_MEMORY_LIMIT", value)
    with pytest.raises(UsageError, match="RELPLAN_MEMORY_LIMIT"):
        workspace.memory_limit()


def test_relplan_db_naming_a_foreign_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "p.jsonl"
    log.write_text('{"a": 1}\n', encoding="utf-8")
    monkeypatch.setenv("RELPLAN_DB", str(log))
    code, err = _cli("analyze")
    assert code == 2
    assert "not a relplan workspace" in err


def test_the_schema_columns_are_kept_for_later_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The expected tables, columns and CREATE statements are computed in a scratch database
    once and read back from the cache folder later; a damaged kept file is computed again."""
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path))
    workspace._schema_facts.cache_clear()
    computed = workspace._schema_columns()
    assert computed["attempts"]["call_id"] == "VARCHAR"
    statements = workspace._schema_statements()
    assert statements.keys() == computed.keys()
    assert "call_id VARCHAR" in statements["attempts"]
    (kept,) = (tmp_path / "schema").iterdir()

    def no_scratch(con: object) -> dict[str, dict[str, str]]:
        raise AssertionError("the kept columns should have been read")

    monkeypatch.setattr(workspace, "_columns", no_scratch)
    workspace._schema_facts.cache_clear()
    assert workspace._schema_columns() == computed
    assert workspace._schema_statements() == statements

    monkeypatch.undo()
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path))
    kept.write_text(kept.read_text().replace("VARCHAR", "INTEGER", 1))
    workspace._schema_facts.cache_clear()
    try:
        assert workspace._schema_columns() == computed
    finally:
        workspace._schema_facts.cache_clear()


def test_an_open_checks_the_columns_only_when_a_table_is_not_as_the_schema_makes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A workspace whose tables have the CREATE statements of a scratch database opens without
    reading its columns; a column of the user's own makes the statement differ, and the
    columns are then read and allowed; a column of another type is refused."""
    db = tmp_path / "w.duckdb"
    workspace.connect(db).close()
    read: list[int] = []
    real = workspace._columns

    def counted(con: duckdb.DuckDBPyConnection) -> dict[str, dict[str, str]]:
        read.append(1)
        return real(con)

    monkeypatch.setattr(workspace, "_columns", counted)
    workspace._schema_facts()  # computed (or read) before the opens are watched
    read.clear()
    workspace.connect(db, read_only=True).close()
    assert read == []
    con = duckdb.connect(str(db))
    con.execute("alter table attempts add column note varchar")
    con.close()
    workspace.connect(db, read_only=True).close()
    assert read == [1]
    con = duckdb.connect(str(db))
    con.execute("alter table attempts alter t_sent type varchar")
    con.close()
    with pytest.raises(
        InputError, match=r"the column attempts\.t_sent is VARCHAR; expected DOUBLE"
    ):
        workspace.connect(db, read_only=True).close()
