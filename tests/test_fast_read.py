"""tests/helpers/fast_read.py reads what a new connection reads (tests/helpers/ingest.py), and
leaves the file closed: a writer can open it right after."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.helpers import fast_read
from tests.helpers import ingest as slow_read
from tests.helpers.ingest import ADAPTERS, ingest


@pytest.fixture(scope="module")
def adapters_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("fast-read") / "adapters.duckdb"
    ingest(db, ADAPTERS / "proxy.csv", ADAPTERS / "vllm_v1.log", ADAPTERS / "scrape.log")
    return db


@pytest.mark.parametrize("which", ["incident", "adapters"])
def test_the_same_state_and_rows_as_a_new_connection(
    which: str, incident_db: Path, adapters_db: Path
) -> None:
    db = incident_db if which == "incident" else adapters_db
    whole = fast_read.whole_state(db)
    assert whole == slow_read.whole_state(db)
    assert whole is not None
    assert whole["(sequences)"]
    assert whole["attempts"][1] > 0
    assert fast_read.state(db) == slow_read.state(db)
    query = "select * from attempts where attempt >= $a order by all"
    got = fast_read.rows(db, query, {"a": 0})
    assert got
    assert got == slow_read.rows(db, query, {"a": 0})


def test_no_file_is_none_or_empty(tmp_path: Path) -> None:
    assert fast_read.whole_state(tmp_path / "none.duckdb") is None
    assert fast_read.state(tmp_path / "none.duckdb") == {}


def test_the_file_is_closed_after_a_read_and_after_a_failed_query(
    tmp_path: Path, adapters_db: Path
) -> None:
    db = tmp_path / "copy.duckdb"
    db.write_bytes(adapters_db.read_bytes())
    with pytest.raises(duckdb.CatalogException):
        fast_read.rows(db, "select * from no_such_table")
    assert fast_read.rows(db, "select count(*) from attempts")[0][0] > 0
    con = duckdb.connect(str(db))  # a writer: refused while the file is still attached
    try:
        con.execute("delete from attempts")
    finally:
        con.close()
    assert fast_read.rows(db, "select count(*) from attempts") == [(0,)]
