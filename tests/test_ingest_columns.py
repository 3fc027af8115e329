"""The proxy-log and engine-trace columns are defined once (relplan/ingest/columns.py); every
copy in SQL must name the same columns, in the same order, with the staging types."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from relplan import sql
from relplan.cli import app
from relplan.ingest.columns import (
    ENGINE_COLUMNS,
    ENGINE_TRACE,
    PROXY_COLUMNS,
    PROXY_LOG,
    STAGE_PREFIX,
    Column,
    stage_type,
)
from relplan.ingest.stage import create_stage, schemas
from tests.helpers.fast_cli import CliRunner
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

RECORDS = {"proxy": PROXY_LOG, "engine": ENGINE_TRACE}


@pytest.fixture
def staging() -> Iterator[duckdb.DuckDBPyConnection]:
    con = duckdb.connect()
    sql.run(con, "schema")
    create_stage(con)
    yield con
    con.close()


def _described(con: duckdb.DuckDBPyConnection, relation: str) -> list[tuple[str, str]]:
    return [(str(r[0]), str(r[1])) for r in con.execute(f"describe {relation}").fetchall()]


def _staged_types(record: tuple[Column, ...]) -> list[tuple[str, str]]:
    return [(c.name, stage_type(c.kind)) for c in record]


@pytest.mark.parametrize("kind", ["proxy", "engine"])
@pytest.mark.parametrize("on_disk", [False, True])
def test_staging_tables_have_the_prefix_then_the_record_columns(kind: str, on_disk: bool) -> None:
    con = duckdb.connect()
    sql.run(con, "schema")
    create_stage(con, on_disk=on_disk)
    want = list(STAGE_PREFIX) + _staged_types(RECORDS[kind])
    assert _described(con, f"stage_{kind}") == want
    assert schemas()[f"stage_{kind}"].names == [name for name, _ in want]


def _template_type(kind: str) -> str:
    # Numeric columns are untyped NULLs, so a file's own type (a Parquet boolean) reaches the
    # conversion, which refuses it, rather than being cast to a double by the union.
    return {"string": "VARCHAR", "boolean": "BOOLEAN"}.get(kind, '"NULL"')


@pytest.mark.parametrize("kind", ["proxy", "engine"])
def test_reader_templates_name_every_column(staging: duckdb.DuckDBPyConnection, kind: str) -> None:
    got = _described(staging, f"(select * from rp_{kind}_template())")
    assert got == [("_ln", "BIGINT"), *[(c.name, _template_type(c.kind)) for c in RECORDS[kind]]]


@pytest.mark.parametrize("kind", ["proxy", "engine"])
def test_the_typed_row_macro_gives_the_staging_columns_in_order(
    staging: duckdb.DuckDBPyConnection, kind: str
) -> None:
    """rp_<kind>_typed is the one typed column list every canonical reader unnests."""
    got = _described(
        staging, f"(select unnest(rp_{kind}_typed(src)) from rp_{kind}_template() as src)"
    )
    assert got == _staged_types(RECORDS[kind])


@pytest.mark.parametrize(
    "name",
    [
        f"ingest/{k}_read_{c}"
        for k in ("proxy", "engine")
        for c in ("csv", "parquet", "jsonl_lines")
    ],
)
def test_canonical_readers_take_their_columns_from_the_typed_row_macro(name: str) -> None:
    text = _query_text(name)
    kind = name.split("/")[1].split("_")[0]
    assert f"unnest(rp_{kind}_typed(" in text
    assert "rp_num(" not in text  # no column list of its own


@pytest.mark.parametrize("kind", ["proxy", "engine"])
def test_a_parquet_boolean_where_a_number_is_expected_is_refused(tmp_path: Path, kind: str) -> None:
    record: dict[str, Any] = (
        {"call_id": "c1", "attempt": True, "t_sent": 1764460800.0, "t_end": 1764460801.0}
        | {"outcome": "delivered"}
        if kind == "proxy"
        else {"type": "step", "step": True, "t_issue": 1764460800.0, "t_done": 1764460801.0}
        | {"execution_id": "e1", "prompt_computed": 3}
    )
    path = tmp_path / f"{kind}.parquet"
    pl.DataFrame([record]).write_parquet(path)
    res = CliRunner().invoke(app, ["ingest", str(path), "--db", str(tmp_path / "w.duckdb")])
    assert res.exit_code == 2
    field = "attempt" if kind == "proxy" else "step"
    assert f"{kind}.parquet:1: {field}: true is not a number" in res.output


def _query_text(name: str) -> str:
    return sql.load(name).text


@pytest.mark.parametrize("kind", ["proxy", "engine"])
def test_fast_json_reader_declares_every_column_with_its_staging_type(kind: str) -> None:
    text = _query_text(f"ingest/{kind}_read_jsonl")
    block = re.search(r"columns = \{(.*?)\}", text, re.DOTALL)
    assert block is not None
    declared = re.findall(r"(\w+): '(\w+)'", block.group(1))
    # Numbers are read as JSON and converted by rp_fast_num, which refuses `true` and strings.
    expected = [(n, "JSON" if t == "DOUBLE" else t) for n, t in _staged_types(RECORDS[kind])]
    assert declared == expected


@pytest.mark.parametrize("kind", ["proxy", "engine"])
def test_line_reader_parses_every_column(kind: str) -> None:
    text = _query_text(f"ingest/{kind}_read_jsonl_lines")
    block = re.search(r"rp_json_object\(line, '(\{.*?\})'\)", text, re.DOTALL)
    assert block is not None
    assert list(json.loads(block.group(1))) == [c.name for c in RECORDS[kind]]


def _table_columns(table: str) -> list[str]:
    con = duckdb.connect()
    sql.run(con, "schema")
    return [name for name, _ in _described(con, table)]


def test_workspace_attempts_table_holds_the_proxy_columns_then_provenance() -> None:
    assert _table_columns("attempts") == [*PROXY_COLUMNS, "source_id", "source_row"]


@pytest.mark.parametrize("table", ["events", "steps", "engine_stats"])
def test_workspace_engine_tables_hold_only_engine_trace_columns(table: str) -> None:
    own = [c for c in _table_columns(table) if c not in ("source_id", "source_row")]
    assert own
    assert set(own) <= set(ENGINE_COLUMNS)


def _distinct_record() -> dict[str, Any]:
    """A valid proxy attempt with a value in every column that no other column has."""
    values: dict[str, Any] = {}
    for i, c in enumerate(PROXY_LOG):
        if c.kind == "string":
            values[c.name] = f"{c.name}-value"
        elif c.kind == "boolean":
            values[c.name] = True
        elif c.kind == "time":
            values[c.name] = 1764460800.0 + 10 * i
        else:
            values[c.name] = 100 + i
    values["outcome"] = "delivered"
    values["attempt"] = 0
    return values


def _write(record: dict[str, Any], path: Path, fmt: str) -> Path:
    if fmt == "jsonl":
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    elif fmt == "jsonl_lines":  # a blank line sends the file to the line reader
        path.write_text(json.dumps(record) + "\n\n", encoding="utf-8")
    elif fmt == "csv":
        pl.DataFrame([record]).write_csv(path)
    else:
        pl.DataFrame([record]).write_parquet(path)
    return path


@pytest.mark.parametrize(
    ("fmt", "suffix"),
    [("jsonl", "jsonl"), ("jsonl_lines", "jsonl"), ("csv", "csv"), ("parquet", "parquet")],
)
def test_every_proxy_column_lands_in_its_own_attempts_column(
    tmp_path: Path, fmt: str, suffix: str
) -> None:
    """A swapped pair in any reader's select list, or in insert_attempts, moves a value."""
    record = _distinct_record()
    db = tmp_path / "w.duckdb"
    ingest(db, _write(record, tmp_path / f"proxy.{suffix}", fmt))
    (stored,) = rows(db, f"select {', '.join(PROXY_COLUMNS)} from attempts")
    assert dict(zip(PROXY_COLUMNS, stored, strict=True)) == record


def test_the_column_lists_import_without_the_readers() -> None:
    """relplan.ingest loads its readers lazily: the simulator's writer and the CLI can read
    the column lists without importing DuckDB or pyarrow."""
    code = (
        "import sys, relplan.ingest.columns, relplan.ingest;"
        "print([m for m in ('duckdb', 'pyarrow', 'polars') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
