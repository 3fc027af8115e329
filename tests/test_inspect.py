"""`relplan inspect`: sources, counts, rejects, metrics and manifests of a workspace."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import duckdb
import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from relplan import sql
from relplan.cli import app
from relplan.errors import NoDataError
from relplan.ingest import inspect_workspace
from relplan.workspace import TABLES
from tests.helpers.fast_cli import CliRunner
from tests.helpers.ingest import INCIDENT, ingest, write_lines

runner = CliRunner()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled incident plus a file with two bad records (read-only)."""
    tmp_path = tmp_path_factory.mktemp("inspect")
    db = tmp_path / "w.duckdb"
    ingest(db, INCIDENT)
    bad = write_lines(
        tmp_path / "more.jsonl",
        [
            '{"call_id":"c9","attempt":0,"t_sent":1764460900,"t_end":1764460901,"outcome":"delivered"}',
            '{"call_id":"c9","attempt":1,"t_sent":1764460902,"t_end":1764460901,"outcome":"delivered"}',
            "not json",
        ],
    )
    ingest(db, bad, on_error="skip")
    return db


def _scrub(data: Any, root: str) -> Any:
    text = json.dumps(data)
    text = text.replace(root, "<tmp>").replace(str(INCIDENT), "<incident>")
    text = re.sub(r'"ingested_at": "[^"]+"', '"ingested_at": "<time>"', text)
    return json.loads(text)


def test_inspect_json_is_the_documented_model(workspace: Path, snapshot: SnapshotAssertion) -> None:
    res = runner.invoke(app, ["inspect", "--db", str(workspace), "--json"])
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert set(data) == {
        "workspace",
        "tables",
        "sources",
        "rejects_total",
        "rejects",
        "metrics",
        "manifests",
    }
    assert data["tables"]["attempts"] == 7
    assert data["rejects_total"] == 2
    assert [(r["line"], r["reason"][:20]) for r in data["rejects"]] == [
        (2, "t_end (1764460901.0)"),
        (3, "malformed JSON; expe"),
    ]
    assert snapshot(extension_class=JSONSnapshotExtension) == _scrub(data, str(workspace.parent))


def test_inspect_table_lists_sources_rejects_metrics_and_manifest(workspace: Path) -> None:
    res = runner.invoke(app, ["inspect", "--db", str(workspace)])
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    assert "Rejected records: 2" in out
    assert f"{workspace.parent / 'more.jsonl'}:3: malformed JSON" in out
    assert re.search(r"vllm:prompt_tokens_total\s+counter\s+3\s+1\s+engine, model_name", out)
    assert "Manifest 'pulse-2.7x-retries-cancel' (source 4):" in out
    assert "phases: base=0:120, pulse=120:227, hold=227:947" in out
    assert "source 3: ignored columns x_client" in out


def test_inspect_of_a_missing_workspace_says_to_ingest_first(tmp_path: Path) -> None:
    with pytest.raises(NoDataError, match="run `relplan ingest` first"):
        inspect_workspace(tmp_path / "none.duckdb")


def test_ingest_cli_says_when_it_adds_nothing(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    first = runner.invoke(app, ["ingest", str(INCIDENT / "proxy.jsonl"), "--db", str(db)])
    assert first.exit_code == 0, first.stderr
    again = runner.invoke(app, ["ingest", str(INCIDENT / "proxy.jsonl"), "--db", str(db)])
    assert again.exit_code == 0
    assert again.stdout.splitlines()[0] == "nothing new ingested"
    assert "already in the workspace" in again.stdout


def test_table_row_counts_cover_every_workspace_table_in_order() -> None:
    """queries/inspect/table_rows.sql names the tables itself (no table name is formatted
    into SQL): it must list exactly relplan.workspace.TABLES."""
    con = duckdb.connect()
    sql.run(con, "schema")
    counted = sql.rows(con, "inspect/table_rows")
    assert [r["table"] for r in counted] == list(TABLES)
    assert all(r["n"] == 0 for r in counted)


def test_rejects_with_the_same_line_come_in_one_order() -> None:
    """Two refusals of one line (a record that fails two checks, or a file read twice) list
    by reason and text, whatever order they were stored in."""
    con = duckdb.connect()
    con.execute(
        "create table rejects (source_id integer, path varchar, line bigint, raw varchar,"
        " reason varchar)"
    )
    stored = [(1, "a.jsonl", 7, f"raw {i:02d}", f"reason {i:02d}") for i in range(20)]
    con.executemany("insert into rejects values (?, ?, ?, ?, ?)", list(reversed(stored)))
    listed = [r["reason"] for r in sql.rows(con, "inspect/rejects")]
    assert listed == [f"reason {i:02d}" for i in range(20)]
