"""The workspace file: schema created, path rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan import workspace
from relplan.errors import NoDataError


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
