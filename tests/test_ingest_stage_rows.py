"""StageWriter (relplan/ingest/stage.py) hands DuckDB a batch smaller than BATCH_ROWS as one
list parameter per column and a full one as an Arrow table: the same rows either way, and the
ingest of a file of fewer rows in a new process imports neither pyarrow nor numpy."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from relplan import sql
from relplan.ingest import stage
from relplan.ingest.files import LineError

ROOT = Path(__file__).resolve().parents[1]
NGINX = ROOT / "tests/data/published/nginx_ingress_upstreaminfo_issue4312_499_retries.log"

METRICS: list[dict[str, Any]] = [
    {"source_id": 1, "ln": 1, "t": 1.5, "name": "a", "labels": {"pod": "p", "x": "1"}, "value": 2},
    {"source_id": 1, "ln": 2, "raw": "b{", "perr": LineError("malformed labels")},
    {"source_id": 1, "ln": 3, "t": 2.0, "name": "b", "labels": {}, "value": float("nan")},
    {"source_id": 2, "ln": 4, "t": None, "name": "c", "labels": None, "value": -1.5},
]
PROXY: list[dict[str, Any]] = [
    {"source_id": 1, "ln": 1, "call_id": "c1", "attempt": 0, "t_sent": 1.0, "attached": True},
    {"source_id": 1, "ln": 2, "call_id": None, "attempt": 1.5, "outcome": "shed"},
]


@pytest.fixture
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    c = duckdb.connect()
    sql.run(c, "schema")
    stage.create_stage(c)
    yield c
    c.close()


def _staged(
    con: duckdb.DuckDBPyConnection, table: str, rows: list[dict[str, Any]]
) -> list[tuple[Any, ...]]:
    w = stage.StageWriter(con, table)
    for r in rows:
        w.add(**r)
    w.flush()
    got = con.execute(f"select * from {table} order by ln").fetchall()
    con.execute(f"delete from {table}")
    return [tuple("nan" if v != v else v for v in r) for r in got]  # NaN equals NaN here


@pytest.mark.parametrize(("table", "rows"), [("stage_metrics", METRICS), ("stage_proxy", PROXY)])
def test_a_batch_of_columns_stages_what_an_arrow_batch_does(
    con: duckdb.DuckDBPyConnection,
    monkeypatch: pytest.MonkeyPatch,
    table: str,
    rows: list[dict[str, Any]],
) -> None:
    columns = _staged(con, table, rows)
    arrow: list[int] = []
    real = stage.StageWriter._append_arrow

    def spy(self: stage.StageWriter) -> None:
        arrow.append(len(self.rows))
        real(self)

    monkeypatch.setattr(stage.StageWriter, "_append_arrow", spy)
    assert _staged(con, table, rows) == columns
    assert arrow == []  # fewer than BATCH_ROWS: one batch of columns
    monkeypatch.setattr(stage, "BATCH_ROWS", 1)  # every row a full batch
    assert _staged(con, table, rows) == columns
    assert arrow == [1] * len(rows)
    assert len(columns) == len(rows)


def test_the_column_names_are_the_arrow_schemas() -> None:
    assert {t: s.names for t, s in stage.schemas().items()} == stage.NAMES


@pytest.mark.parametrize("table", sorted(stage.NAMES))
def test_the_columns_query_takes_every_column_of_its_table(table: str) -> None:
    """A column added to a staging table and left out of its columns query would be stored
    NULL by a batch of columns (the query inserts by name): the query takes each one."""
    maps = stage._MAPS.get(table, ())
    wanted = set()
    for n in stage.NAMES[table]:
        wanted |= {f"{n}_keys", f"{n}_values"} if n in maps else {n}
    assert sql.load(stage._APPEND_COLUMNS[table]).params == wanted


@pytest.mark.parametrize(
    "inputs",
    [NGINX, ROOT / "sample_data" / "pulse-retry-cancel"],
    ids=["a small gateway log", "the sample (3,025 metric samples, Parquet)"],
)
def test_a_file_of_fewer_rows_than_a_batch_is_ingested_without_pyarrow(
    tmp_path: Path, inputs: Path
) -> None:
    code = (
        "import sys; from pathlib import Path;"
        " from relplan.ingest import IngestOptions, ingest_paths;"
        f" r = ingest_paths(Path({str(tmp_path / 'w.duckdb')!r}), [Path({str(inputs)!r})],"
        " IngestOptions());"
        " print(min(s.rows for s in r.sources), 'pyarrow' in sys.modules, 'numpy' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    rows, arrow, numpy = done.stdout.split()
    assert int(rows) > 0
    assert (arrow, numpy) == ("False", "False")
