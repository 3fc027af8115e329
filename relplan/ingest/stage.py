"""Staging: the temp tables every reader appends to before one transaction stores the data.

Readers that DuckDB runs (canonical JSONL/CSV/Parquet) insert with SQL; readers written in
Python (metrics text, query_range JSON, vLLM logs, Envoy logs) append rows through
`StageWriter`, which hands DuckDB batches of BATCH_ROWS rows, so a file is never held whole in
Python objects: a full batch as an Arrow table, a smaller one (a file of fewer rows, a large
one's last) as one list parameter per column, so a file of fewer rows needs no pyarrow.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

from relplan import sql
from relplan.ingest.columns import ENGINE_TRACE, PROXY_LOG, STAGE_PREFIX, Column, stage_type

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa


# A full batch goes to DuckDB as an Arrow table (about 5 µs of CPU a row); a smaller one as a
# list parameter per column (queries/ingest/append_columns_stage_*.sql, about 4-7 µs a row),
# which spares a process the import of pyarrow and numpy (0.11-0.17 s of CPU): the ingest of a
# file of fewer rows in a new process (`relplan ingest` of a gateway log or a metrics file,
# the report of the sample's 3,000 metric samples) does not import them.
BATCH_ROWS = 50_000
# query_range JSON (relplan/ingest/metrics/promjson.py) stages a response of at most this many
# samples row by row through `StageWriter`, a larger one as two Arrow tables of its own.
SMALL_BATCH = 1_000

# Each staging table's columns, in order (the Arrow schemas below have the same names).
NAMES = {
    "stage_proxy": [n for n, _ in STAGE_PREFIX] + [c.name for c in PROXY_LOG],
    "stage_engine": [n for n, _ in STAGE_PREFIX] + [c.name for c in ENGINE_TRACE],
    "stage_metrics": ["source_id", "ln", "raw", "perr", "t", "name", "labels", "value"],
}
# The MAP columns: given as two list parameters, each row's keys and its values.
_MAPS = {"stage_metrics": ("labels",)}


def _stage_schema(record: tuple[Column, ...]) -> pa.Schema:
    """A staging table's Arrow schema: the common prefix, then the record's columns."""
    import pyarrow as pa

    arrow = {
        "VARCHAR": pa.string(),
        "BOOLEAN": pa.bool_(),
        "DOUBLE": pa.float64(),
        "INTEGER": pa.int32(),
        "BIGINT": pa.int64(),
    }
    return pa.schema(
        [(name, arrow[typ]) for name, typ in STAGE_PREFIX]
        + [(c.name, arrow[stage_type(c.kind)]) for c in record]
    )


@cache
def schemas() -> dict[str, pa.Schema]:
    """The staging tables' Arrow schemas, built on first use: pyarrow is imported only when
    something is staged, not when the adapters are listed (every command's input flags)."""
    import pyarrow as pa

    return {
        "stage_proxy": _stage_schema(PROXY_LOG),
        "stage_engine": _stage_schema(ENGINE_TRACE),
        "stage_metrics": pa.schema(
            [
                ("source_id", pa.int32()),
                ("ln", pa.int64()),
                ("raw", pa.string()),
                ("perr", pa.string()),
                ("t", pa.float64()),
                ("name", pa.string()),
                ("labels", pa.map_(pa.string(), pa.string())),
                ("value", pa.float64()),
            ]
        ),
    }


_APPEND = {
    "stage_proxy": "ingest/append_batch_stage_proxy",
    "stage_engine": "ingest/append_batch_stage_engine",
    "stage_metrics": "ingest/append_batch_stage_metrics",
}
_APPEND_COLUMNS = {
    "stage_proxy": "ingest/append_columns_stage_proxy",
    "stage_engine": "ingest/append_columns_stage_engine",
    "stage_metrics": "ingest/append_columns_stage_metrics",
}


# The views that check each staging table's records (the reason each is refused, NULL when
# it is fine), created by create_checks only for the tables that hold rows: DuckDB plans a
# view's macros whenever a query names it, even over an empty table, and that planning was
# most of a small ingest's time (bench/ingest_tiny.py). proxy_checked is a temp table made
# from its staging table (its summary, insert and rejects read it; create_checks again after
# a restage). proxy_checked and engine_checked are made first by a quick test whose reasons
# are placeholders (FULL_CHECKS).
CHECKS = {
    "stage_proxy": ("ingest/proxy_checked_quick",),
    "stage_engine": ("ingest/engine_typed", "ingest/engine_checked_quick"),
    "stage_metrics": ("ingest/metrics_checked",),
}
# The checks CHECKS makes by a quick test, and the query that makes the same table (view) again
# with every reason: the driver runs it when the quick one refused any record
# (driver._summaries).
FULL_CHECKS = {"stage_proxy": "ingest/proxy_checked", "stage_engine": "ingest/engine_checked"}


def create_macros(con: duckdb.DuckDBPyConnection) -> None:
    """Make the conversion macros for this connection (temp macros: never the file's), unless
    the workspace holds these very macros (a new one does: relplan/workspace/template.py,
    kept_macros). A temp macro hides a stored one of its name, so a workspace holding others
    gets the whole set. Call it outside any transaction: on a workspace holding no macros the
    check fails, which would abort one."""
    import duckdb

    from relplan.workspace.template import MACROS, macros_digest

    try:
        held = (sql.one(con, "ingest/macros_digest") or {}).get("digest")
    except duckdb.CatalogException:
        held = None
    if held == macros_digest():
        return
    for name in MACROS:
        sql.run(con, name)


def create_stage(
    con: duckdb.DuckDBPyConnection, *, on_disk: bool = False, macros: bool = True
) -> None:
    """Make the conversion macros (unless `macros` is False: the ingest made them on this
    connection, outside its transaction) and the empty staging tables. Called inside the
    ingest transaction: the tables never outlive it (drop_stage, or rollback). `on_disk` puts
    the staging tables in the workspace file (large inputs: compressed row groups instead of
    spilled temp blocks) rather than in temp storage (faster when small). The checking views
    come later (create_checks), once the tables are filled."""
    if macros:
        create_macros(con)
    sql.run(con, "ingest/stage_tables_on_disk" if on_disk else "ingest/stage_tables")


def filled(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The staging tables of CHECKS that hold at least one row."""
    row = sql.one(con, "ingest/stage_filled") or {}
    return [table for table in CHECKS if row.get(table)]


def create_checks(con: duckdb.DuckDBPyConnection, tables: Iterable[str]) -> None:
    """The checking views over `tables` (names of CHECKS), in the transaction that staged
    them (they are temp views over its staging tables)."""
    for table in tables:
        for view in CHECKS[table]:
            sql.run(con, view)


class StageWriter:
    """Buffers rows for one staging table and appends them to DuckDB in Arrow batches."""

    def __init__(self, con: duckdb.DuckDBPyConnection, table: str) -> None:
        self.con = con
        self.table = table
        self.names = NAMES[table]
        self.rows: list[dict[str, Any]] = []
        self.count = 0

    def add(self, **row: Any) -> None:
        self.rows.append(row)
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        if len(self.rows) < BATCH_ROWS:
            self._append_columns()
        else:
            self._append_arrow()
        self.count += len(self.rows)
        self.rows = []

    def _append_columns(self) -> None:
        maps = _MAPS.get(self.table, ())
        params: dict[str, list[Any]] = {}
        for n in self.names:
            values = [r.get(n) for r in self.rows]
            if n in maps:
                params[f"{n}_keys"] = [None if m is None else list(m) for m in values]
                params[f"{n}_values"] = [None if m is None else list(m.values()) for m in values]
            else:
                params[n] = values
        sql.run(self.con, _APPEND_COLUMNS[self.table], params)

    def _append_arrow(self) -> None:
        import pyarrow as pa

        cols = {n: [r.get(n) for r in self.rows] for n in self.names}
        batch = pa.table(cols, schema=schemas()[self.table])
        self.con.register("_relplan_batch", batch)
        try:
            sql.run(self.con, _APPEND[self.table])
        finally:
            self.con.unregister("_relplan_batch")


def drop_stage(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the staging tables before the ingest transaction commits."""
    sql.run(con, "ingest/drop_stage_tables")
