"""The columns of the canonical proxy log and engine trace, defined once.

Everything else is derived from these two lists or checked against them: the columns ingest
knows (detect.py), the Arrow schemas of the staging tables (stage.py), the columns and types
the simulator writes (sim/writer.py). The SQL that names the same columns (the staging
tables, the typed readers, the workspace tables in queries/schema.sql) is held equal to them
by tests/test_ingest_columns.py.

A column's `kind` says what its values are: `string`, `integer` (a whole number), `number`,
`time` (epoch seconds; RFC 3339 text is accepted on input) or `boolean`. While staging, every
numeric kind is a double, so a value that is not whole can be named in the error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["string", "integer", "number", "time", "boolean"]


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    required: bool = False


PROXY_LOG: tuple[Column, ...] = (
    Column("call_id", "string", required=True),
    Column("attempt", "integer", required=True),
    Column("t_planned", "time"),
    Column("t_sent", "time", required=True),
    Column("t_end", "time", required=True),
    Column("outcome", "string", required=True),
    Column("execution_id", "string"),
    Column("attached", "boolean"),
    Column("t_cancel", "time"),
    Column("status", "integer"),
    Column("model", "string"),
    Column("replica", "string"),
    Column("prompt_tokens", "integer"),
    Column("max_tokens", "integer"),
)

# One file, three record types (`type`: event, step, stats), each using some of the columns.
ENGINE_TRACE: tuple[Column, ...] = (
    Column("type", "string"),
    Column("t", "time"),
    Column("execution_id", "string"),
    Column("event", "string"),
    Column("prompt_tokens", "integer"),
    Column("replica", "string"),
    Column("step", "integer"),
    Column("t_issue", "time"),
    Column("t_done", "time"),
    Column("prompt_computed", "integer"),
    Column("prompt_cached", "integer"),
    Column("decode_tokens", "integer"),
    Column("num_running", "integer"),
    Column("num_waiting", "integer"),
    Column("num_batched_tokens", "integer"),
    Column("kv_usage", "number"),
)

PROXY_COLUMNS = tuple(c.name for c in PROXY_LOG)
PROXY_REQUIRED = tuple(c.name for c in PROXY_LOG if c.required)
ENGINE_COLUMNS = tuple(c.name for c in ENGINE_TRACE)

# The columns every staging table starts with, before the record's own columns.
STAGE_PREFIX: tuple[tuple[str, str], ...] = (
    ("source_id", "INTEGER"),
    ("ln", "BIGINT"),
    ("raw", "VARCHAR"),
    ("perr", "VARCHAR"),
    ("origin", "VARCHAR"),
)


def stage_type(kind: Kind) -> str:
    """The DuckDB type a column of this kind has while staging."""
    return {"string": "VARCHAR", "boolean": "BOOLEAN"}.get(kind, "DOUBLE")
