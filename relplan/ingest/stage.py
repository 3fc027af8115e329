"""Staging: the temp tables every reader appends to before one transaction stores the data.

Readers that DuckDB runs (canonical JSONL/CSV/Parquet) insert with SQL; readers written in
Python (metrics text, query_range JSON, vLLM logs, Envoy logs) append rows through
`StageWriter`, which hands DuckDB Arrow batches of a few ten thousand rows, so a file is never
held whole in Python objects.
"""

from __future__ import annotations

import re
from typing import Any

import duckdb
import pyarrow as pa

from relplan import sql
from relplan.workspace import DEFAULT_MEMORY_LIMIT

BATCH_ROWS = 50_000

_LABELS = pa.map_(pa.string(), pa.string())

SCHEMAS: dict[str, pa.Schema] = {
    "stage_proxy": pa.schema(
        [
            ("source_id", pa.int32()),
            ("ln", pa.int64()),
            ("raw", pa.string()),
            ("perr", pa.string()),
            ("origin", pa.string()),
            ("call_id", pa.string()),
            ("attempt", pa.float64()),
            ("t_planned", pa.float64()),
            ("t_sent", pa.float64()),
            ("t_end", pa.float64()),
            ("outcome", pa.string()),
            ("execution_id", pa.string()),
            ("attached", pa.bool_()),
            ("t_cancel", pa.float64()),
            ("status", pa.float64()),
            ("model", pa.string()),
            ("replica", pa.string()),
            ("prompt_tokens", pa.float64()),
            ("max_tokens", pa.float64()),
        ]
    ),
    "stage_engine": pa.schema(
        [
            ("source_id", pa.int32()),
            ("ln", pa.int64()),
            ("raw", pa.string()),
            ("perr", pa.string()),
            ("origin", pa.string()),
            ("type", pa.string()),
            ("t", pa.float64()),
            ("execution_id", pa.string()),
            ("event", pa.string()),
            ("prompt_tokens", pa.float64()),
            ("replica", pa.string()),
            ("step", pa.float64()),
            ("t_issue", pa.float64()),
            ("t_done", pa.float64()),
            ("prompt_computed", pa.float64()),
            ("prompt_cached", pa.float64()),
            ("decode_tokens", pa.float64()),
            ("num_running", pa.float64()),
            ("num_waiting", pa.float64()),
            ("num_batched_tokens", pa.float64()),
            ("kv_usage", pa.float64()),
        ]
    ),
    "stage_metrics": pa.schema(
        [
            ("source_id", pa.int32()),
            ("ln", pa.int64()),
            ("raw", pa.string()),
            ("perr", pa.string()),
            ("t", pa.float64()),
            ("name", pa.string()),
            ("labels", _LABELS),
            ("value", pa.float64()),
        ]
    ),
}

_INSERT = {
    "stage_proxy": "insert into stage_proxy select * from _relplan_batch",
    "stage_engine": "insert into stage_engine select * from _relplan_batch",
    "stage_metrics": "insert into stage_metrics select * from _relplan_batch",
}


def memory_limit_bytes() -> int:
    """The workspace's DuckDB memory limit in bytes ("1GB", "512MB", "2GiB"; 1 GiB if odd)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", DEFAULT_MEMORY_LIMIT, re.IGNORECASE)
    if not m:
        return 1 << 30
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    return int(float(m.group(1)) * scale)


def create_stage(con: duckdb.DuckDBPyConnection, *, on_disk: bool = False) -> None:
    """(Re)create the conversion macros, empty staging tables and checking views. Called
    inside the ingest transaction: the tables never outlive it (drop_stage, or rollback).
    `on_disk` puts the staging tables in the workspace file (large inputs: compressed row
    groups instead of spilled temp blocks) rather than in temp storage (faster when small)."""
    con.execute(sql.load("ingest/macros").text)
    con.execute(sql.load("ingest/proxy_macros").text)
    con.execute(sql.load("ingest/engine_macros").text)
    con.execute(sql.load("ingest/stage_tables_on_disk" if on_disk else "ingest/stage_tables").text)
    for view in (
        "ingest/proxy_checked",
        "ingest/engine_typed",
        "ingest/engine_checked",
        "ingest/metrics_checked",
    ):
        con.execute(sql.load(view).text)


class StageWriter:
    """Buffers rows for one staging table and appends them to DuckDB in Arrow batches."""

    def __init__(self, con: duckdb.DuckDBPyConnection, table: str) -> None:
        self.con = con
        self.table = table
        self.schema = SCHEMAS[table]
        self.names = self.schema.names
        self.rows: list[dict[str, Any]] = []
        self.count = 0

    def add(self, **row: Any) -> None:
        self.rows.append(row)
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        cols = {n: [r.get(n) for r in self.rows] for n in self.names}
        batch = pa.table(cols, schema=self.schema)
        self.con.register("_relplan_batch", batch)
        try:
            self.con.execute(_INSERT[self.table])
        finally:
            self.con.unregister("_relplan_batch")
        self.count += len(self.rows)
        self.rows = []


def drop_stage(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the staging tables before the ingest transaction commits."""
    con.execute(sql.load("ingest/drop_stage_tables").text)
