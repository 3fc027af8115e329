"""Retry timing (docs/analyses.md, `retry_timing`), from queries/analyses/retry_gap_and_slack.sql.

For executions created by a retry whose predecessor was aborted: the gap from the
predecessor's abort to the new execution's first `scheduled`, and the slack between the
retry's own deadline and its first step's t_issue. Median, p10, p90 (quantile_cont) with
counts, windowed by the retry's t_sent. Needs a proxy log (which attempts are retries) and an
engine trace (aborts, scheduling, steps); the slack also needs D.
"""

from __future__ import annotations

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses.common import FINDING, WindowRow
from relplan.analyses.context import RunContext, window_params
from relplan.analyses.inputs import Inputs
from relplan.models import StrictModel


class RetryTimingWindow(WindowRow):
    retries: int = Field(
        default=0,
        description="attempts after a call's first, sent in the window (the attempts table,"
        " counted as the amplification analysis counts them)",
    )
    retries_with_execution: int = Field(
        description="retries that created an execution and had a predecessor"
    )
    retries_after_abort: int = Field(description="of them, those whose predecessor was aborted")
    never_scheduled: int
    gap_n: int
    gap_median_s: float | None
    gap_p10_s: float | None
    gap_p90_s: float | None
    slack_n: int
    slack_median_s: float | None
    slack_p10_s: float | None
    slack_p90_s: float | None
    slack_negative: int | None = Field(
        description="retries first on the GPU after their client had gone"
    )


class RetryTiming(StrictModel):
    deadline_s: float | None
    windows: list[RetryTimingWindow]
    finding: str = Field(default="", description=FINDING)


def analyze_retry_timing(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> RetryTiming:
    windows = ctx.phase_windows()
    params = window_params(windows) | {"deadline_s": ctx.deadline_s}  # None: SQL null
    rows = {r["win_name"]: r for r in sql.rows(con, "analyses/retry_gap_and_slack", params)}
    out = []
    for w in windows:
        r = rows[w.name]
        why: dict[str, str] = {}
        if int(r["gap_n"]) == 0:
            for f in ("gap_median_s", "gap_p10_s", "gap_p90_s"):
                why[f] = "no retry after an aborted predecessor was scheduled in this window"
        no_d = ctx.deadline_s is None
        if no_d or int(r["slack_n"]) == 0:
            for f in ("slack_median_s", "slack_p10_s", "slack_p90_s", "slack_negative"):
                why[f] = (
                    "deadline unknown: give --deadline"
                    if no_d
                    else "no retry after an aborted predecessor has a step in this window"
                )
        out.append(
            RetryTimingWindow(
                window=w.name,
                start_s=ctx.s(w.a),
                end_s=ctx.s(w.b),
                retries=int(r["retries"]),
                retries_with_execution=int(r["retries_with_execution"]),
                retries_after_abort=int(r["n"]),
                never_scheduled=int(r["never_scheduled"]),
                gap_n=int(r["gap_n"]),
                gap_median_s=r["gap_median"],
                gap_p10_s=r["gap_p10"],
                gap_p90_s=r["gap_p90"],
                slack_n=0 if no_d else int(r["slack_n"]),
                slack_median_s=None if no_d else r["slack_median"],
                slack_p10_s=None if no_d else r["slack_p10"],
                slack_p90_s=None if no_d else r["slack_p90"],
                slack_negative=None if no_d else int(r["slack_negative"]),
                null_reasons=why,
            )
        )
    return RetryTiming(deadline_s=ctx.deadline_s, windows=out)


def missing(i: Inputs) -> str | None:
    if i.ctx.has_proxy and i.ctx.has_events:
        return None
    return "retry timing needs both a proxy log and an engine trace"


def run(i: Inputs) -> RetryTiming:
    return analyze_retry_timing(i.con, i.ctx)
