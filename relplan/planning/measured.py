"""Budget inputs measured from a workspace (`relplan budget --from-db`): K and d from the
proxy log (`measure_streams`); crashes, planned restarts, restart minutes and streams killed
per crash from the restart signals (`measure_restarts`, the restarts analysis).

duckdb is a type here only and the SQL loader is imported by the measuring functions:
`relplan budget` without --from-db loads neither.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

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
    from relplan import sql  # here, not at the top: `relplan budget` without --from-db needs none

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


class MeasuredRestarts(StrictModel):
    """Crash and restart inputs measured by the restarts analysis (docs/analyses.md,
    `restarts`), scaled from the analysed window to the SLO window."""

    window_s: float = Field(description="seconds of data the rates were measured over")
    slo_window_s: float = Field(description="the SLO window T they are scaled to")
    replicas: int = Field(description="pods with restart signals")
    crashes: int
    planned: int
    crashes_per_replica_per_window: float = Field(
        description="C: crashes / replicas * T / window_s"
    )
    planned_per_replica_per_window: float = Field(
        description="P: planned restarts / replicas * T / window_s"
    )
    restart_minutes: float | None = Field(description="r: mean down time of a crash, minutes")
    streams_killed_per_crash: float | None = Field(
        description="streams the gateway log saw cut per crash"
    )
    planned_drained: bool | None = Field(
        description="no stream was cut by a planned restart (None: none, or no gateway log)"
    )


def measure_restarts(
    con: duckdb.DuckDBPyConnection, slo_window_s: float
) -> MeasuredRestarts | None:
    """The restart inputs of the workspace, or None when it holds no restart signals."""
    from relplan import sql
    from relplan.analyses.context import resolve_context
    from relplan.analyses.options import AnalyzeOptions
    from relplan.analyses.restarts import analyze_restarts

    row = sql.one(con, "analyses/restarts_inputs_present") or {}
    if not (row.get("pod_events") or row.get("restart_samples")):
        return None
    r = analyze_restarts(con, resolve_context(con, AnalyzeOptions()))
    n = max(r.replicas_seen, 1)
    scale = slo_window_s / r.window_s if r.window_s > 0 else 0.0
    planned = [x for x in r.restarts if x.kind == "planned" and x.streams_killed is not None]
    return MeasuredRestarts(
        window_s=r.window_s,
        slo_window_s=slo_window_s,
        replicas=r.replicas_seen,
        crashes=r.crashes,
        planned=r.planned,
        crashes_per_replica_per_window=r.crashes / n * scale,
        planned_per_replica_per_window=r.planned / n * scale,
        restart_minutes=None if r.mean_down_to_ready_s is None else r.mean_down_to_ready_s / 60,
        streams_killed_per_crash=r.streams_killed_per_crash,
        planned_drained=all(x.streams_killed == 0 for x in planned) if planned else None,
    )
