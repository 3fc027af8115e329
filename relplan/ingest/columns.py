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
# The workspace's engine tables store them (queries/schema.sql); which record type fills which
# column is ENGINE_TABLE_COLUMNS below.
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
    # Added with schema version 3 (issue 26), all optional: on `stats` records the step's
    # wall time and its preemptions and prefix-cache lookups (prompt_computed and
    # decode_tokens above give its prefill/decode split); on `finished`/`aborted` events how
    # the request ended; on `arrived` its max_tokens. What the vLLM plugin writes.
    Column("elapsed_ms", "number"),
    Column("num_preempted", "integer"),
    Column("prefix_queries", "integer"),
    Column("prefix_hits", "integer"),
    Column("finish_reason", "string"),
    Column("output_tokens", "integer"),
    Column("cached_tokens", "integer"),
    Column("preemptions", "integer"),
    Column("max_tokens", "integer"),
)

PROXY_COLUMNS = tuple(c.name for c in PROXY_LOG)
PROXY_REQUIRED = tuple(c.name for c in PROXY_LOG if c.required)
ENGINE_COLUMNS = tuple(c.name for c in ENGINE_TRACE)
# The trace columns each engine table stores, in the table's order (queries/schema.sql): the
# columns of schema version 3 come after the provenance columns, where the migration of an
# older workspace (`alter table ... add column`) puts them.
ENGINE_TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "events": (
        *("t", "execution_id", "event", "prompt_tokens", "replica"),
        *("finish_reason", "output_tokens", "cached_tokens", "preemptions", "max_tokens"),
    ),
    "steps": (
        *("step", "t_issue", "t_done", "execution_id", "prompt_computed", "prompt_cached"),
        *("decode_tokens", "replica"),
    ),
    "engine_stats": (
        *("step", "t_issue", "num_running", "num_waiting", "num_batched_tokens", "kv_usage"),
        *("replica", "prompt_computed", "decode_tokens", "elapsed_ms", "num_preempted"),
        *("prefix_queries", "prefix_hits"),
    ),
}

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
