"""vLLM request ids: the internal id an execution has in the engine, the external id the API
response carries, and the client's X-Request-Id inside it (docs/formats.md).

API layer: external id = `chatcmpl-<X-Request-Id>` (chat; `cmpl-<id>-<i>` for completions, one
per prompt; `chat-` in 0.6-era releases), or `<prefix>-<random hex>` when the client sent none.
V1 engine (from about 0.9): internal id = external id + `-` + 8 hex characters (0.8 logged the
external id unchanged). V0: internal id = external id.

Stored in the table `request_ids` (queries/schema.sql), one row per execution a log names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from relplan import sql

if TYPE_CHECKING:
    import duckdb


_SUFFIX = re.compile(r"^(.+)-[0-9a-f]{8}$")
_CHAT = re.compile(r"^(?:chatcmpl|chat|embd)-(.+)$")
_COMPLETION = re.compile(r"^cmpl-(.+?)(?:-\d+)?$")


def strip_engine_suffix(internal: str) -> str | None:
    """The external id of a V1 internal id (`X-1a2b3c4d` -> `X`), None when it has no suffix."""
    m = _SUFFIX.match(internal)
    return m.group(1) if m else None


def client_id(external: str) -> str | None:
    """The client's X-Request-Id inside vLLM's external id; None without a known API prefix
    (0.2-era bare uuid ids). When the client sent no X-Request-Id this is vLLM's random id,
    which joins to nothing."""
    m = _CHAT.match(external) or _COMPLETION.match(external)
    return m.group(1) if m else None


class RequestIds:
    """One row per execution, in the order the log first names it."""

    def __init__(self, source_id: int) -> None:
        self.source_id = source_id
        self.rows: list[tuple[str, str, str | None, int]] = []
        self.seen: set[str] = set()

    def note(self, execution_id: str, external: str, line: int) -> bool:
        """Record an execution's ids at `line`; False when it was already recorded."""
        if execution_id in self.seen:
            return False
        self.seen.add(execution_id)
        self.rows.append((execution_id, external, client_id(external), line))
        return True

    def store(self) -> Callable[[duckdb.DuckDBPyConnection], None]:
        """The insert to run inside the ingest transaction (Staged.finish)."""
        rows = self.rows

        def insert(con: duckdb.DuckDBPyConnection) -> None:
            if not rows:
                return
            import pyarrow as pa  # here, not at import: listing the adapters needs no pyarrow

            schema = pa.schema(
                [
                    ("execution_id", pa.string()),
                    ("external_id", pa.string()),
                    ("client_id", pa.string()),
                    ("source_id", pa.int32()),
                    ("source_row", pa.int64()),
                ]
            )
            batch = pa.table(
                {
                    "execution_id": [r[0] for r in rows],
                    "external_id": [r[1] for r in rows],
                    "client_id": [r[2] for r in rows],
                    "source_id": [self.source_id] * len(rows),
                    "source_row": [r[3] for r in rows],
                },
                schema=schema,
            )
            con.register("_relplan_request_ids", batch)
            try:
                con.execute(sql.load("ingest/insert_request_ids").text)
            finally:
                con.unregister("_relplan_request_ids")

        return insert
