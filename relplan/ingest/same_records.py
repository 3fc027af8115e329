"""Idempotence by records (docs/workspace.md, The same records twice): a new source that holds
exactly the records of an earlier one, in another encoding, is refused.

The same content gzipped, with CRLF line ends or a byte order mark has the same content hash
(relplan/ingest/files.py) and is skipped before it is read; this catches the rest (JSON Lines
re-encoded as Parquet or CSV) once the records are stored inside the ingest transaction, by
comparing per-table row counts and row-hash sums (queries/ingest/source_fingerprint.sql)
with the earlier sources of the same kind and row count.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from relplan import sql
from relplan.errors import InputError
from relplan.ingest.outcome import SourceReport, display_path

if TYPE_CHECKING:
    import duckdb


def refuse_same_records(
    con: duckdb.DuckDBPyConnection, reports: list[SourceReport], *, fresh: bool = False
) -> None:
    """A new source holding exactly the records of an earlier one (the same file re-encoded:
    JSONL as Parquet or CSV) is refused, naming that source: nothing of this ingest is stored.
    (The same content gzipped or with CRLF line ends has the same hash and is skipped before.)
    `fresh`: the workspace held no source before this ingest, so an earlier source of a kind
    is one of `reports`; a source alone of its kind among them is not looked up."""
    kinds = [r.kind for r in reports]
    for r in reports:
        if r.kind not in ("proxy", "engine", "metrics") or r.rows == 0:
            continue
        if fresh and kinds.count(r.kind) == 1:
            continue
        params = {"source_id": r.source_id, "kind": r.kind, "rows": r.rows}
        earlier = [
            c for c in sql.rows(con, "ingest/sources_like", params) if c["source_id"] < r.source_id
        ]
        if not earlier:
            continue
        mine = sql.one(con, "ingest/source_fingerprint", {"source_id": r.source_id})
        for c in earlier:
            if sql.one(con, "ingest/source_fingerprint", {"source_id": c["source_id"]}) == mine:
                raise InputError(
                    f"the same {r.rows} records as source {c['source_id']}"
                    f" ({display_path(c['path'])}) in another encoding; a source is stored once,"
                    " so nothing was stored (ingest the other files without this one)",
                    display_path(r.path),
                )
