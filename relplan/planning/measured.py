"""Budget inputs measured from a workspace's proxy log (`relplan budget --from-db`).

duckdb is a type here only: `relplan budget` without --from-db never loads it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from relplan import sql
from relplan.errors import NoDataError
from relplan.models import StrictModel

if TYPE_CHECKING:
    import duckdb


class MeasuredStreams(StrictModel):
    streams: int = Field(description="attempts the proxy did not shed")
    mean_stream_seconds: float = Field(description="d: mean t_end - t_sent of those attempts")
    mean_concurrency_per_replica: float = Field(
        description="K: stream-seconds / (span of the log * replicas seen)"
    )
    span_seconds: float
    replicas_seen: int


def measure_streams(con: duckdb.DuckDBPyConnection) -> MeasuredStreams:
    q = sql.load("planning/budget_inputs_from_proxy")
    row = con.execute(q.text, q.bind({})).fetchone()
    assert row is not None
    streams, mean_d, total, span, replicas = row
    if not streams or not span or span <= 0 or not mean_d or mean_d <= 0:
        raise NoDataError(
            "--from-db needs a proxy log with attempts that were not shed; ingest one first"
        )
    return MeasuredStreams(
        streams=int(streams),
        mean_stream_seconds=float(mean_d),
        mean_concurrency_per_replica=float(total) / (float(span) * int(replicas)),
        span_seconds=float(span),
        replicas_seen=int(replicas),
    )
