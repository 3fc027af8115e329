"""Delivery and recovery (docs/analyses.md, `delivery`).

Per window of planned arrival: calls, delivered share, on-time share, median and p99 time to
delivery (queries/analyses/delivery_by_window.sql). Series: the same query over `bin_s` bins of
t_planned aligned on the window start. Recovery: 30 s bins aligned on the end of the
overload phase; the recovery bin is the first bin with >= 5 calls and an on-time share >=
the threshold (0.9) such that every later bin with >= 5 calls meets it too, and at least 2
such bins from it on (one bin, often the data's last and short, is not a recovery).

Verdict over [end of overload, T] (T = the window end), in this order:
1. `recovered` when a recovery bin exists;
2. `insufficient data` when no bin after the overload has 5 calls, or Ĉ or D is unknown;
3. `overloaded` when calls arrived above Ĉ (mean rate over the window);
4. `metastable` when calls arrived at or below Ĉ but executions were accepted above it;
5. `metastable` too when most calls of the last two bins with >= 5 calls were late: a run
   late until the end of the data is not draining (the verdict said so while this analysis
   said `draining` on the lab's retries-no-cancel: issue 24);
6. `draining` otherwise (accepted executions stayed at or below Ĉ).
Accepted executions follow the amplification analysis's definition and source (engine trace, else proxy log).
A gateway log with no per-request duration (nginx's `combined` format: no $request_time)
places every attempt at its end with zero length: the delivered share is then the calls
answered, the on-time share and the recovery are unknown (not 100 %: every answer looked
instant), and the verdict turns to other evidence (issue 24).
Choices: a bin's on-time share counts every call planned in the bin (undelivered ones
count as late); the last bin may be shorter than 30 s when T falls inside it.
"""

from __future__ import annotations

import math
from typing import Any, Literal, Protocol

import duckdb
from pydantic import Field

from relplan import sql
from relplan.analyses.amplification import amplification_windows
from relplan.analyses.common import FINDING, WindowRow, ratio
from relplan.analyses.context import RunContext, Window, window_params
from relplan.analyses.inputs import Inputs
from relplan.analyses.wording import Words
from relplan.models import StrictModel

# The sentences of this analysis, worded by relplan/text/delivery.py (one function per code).
Said = Literal["untimed", "overload_to_the_end"]
_say: Words[Said] = Words("relplan.text.delivery")

RECOVERY_BIN_S = 30.0
RECOVERY_MIN_CALLS = 5
RECOVERY_THRESHOLD = 0.9
RECOVERY_MIN_BINS = 2  # on-time bins (>= RECOVERY_MIN_CALLS calls) a recovery needs
LATE_TO_THE_END = 0.5  # on-time share below which the last bins say "not draining"

Verdict = Literal["recovered", "metastable", "draining", "overloaded", "insufficient data"]


class DeliveryWindow(WindowRow):
    calls: int
    delivered: int
    delivered_share: float | None
    on_time: int | None
    on_time_share: float | None
    window_open_at_end: int = Field(
        description="undelivered calls whose window W was still open at T"
    )
    delivery_median_s: float | None
    delivery_p99_s: float | None


class DeliveryBin(StrictModel):
    start_s: float = Field(description="bin start, seconds from t0")
    calls: int
    on_time: int | None
    on_time_share: float | None


class Recovery(StrictModel):
    overload_phase: str
    overload_end_s: float
    bin_s: float
    threshold: float
    min_calls: int
    recovery_s: float | None = Field(
        description="seconds from the end of the overload to the recovery bin"
    )
    verdict: Verdict
    because: str = Field(
        default="",
        description="the figures behind the verdict, in words (relplan/text/findings.py)",
    )
    calls_x_capacity_after: float | None
    accepted_x_capacity_after: float | None
    accepted_source: str | None
    on_time_share_after: float | None
    bins_with_enough_calls: int
    min_bins: int = Field(
        default=RECOVERY_MIN_BINS, description="on-time bins from the recovery bin on it needs"
    )
    on_time_again_bins: int | None = Field(
        default=None,
        description="on-time bins at the end of the data when fewer than min_bins (no recovery)",
    )
    last_failing_bin_s: float | None = Field(
        description="start of the last bin after the overload below the threshold"
    )
    bins: list[DeliveryBin] = Field(description="bins aligned on the end of the overload")


class Delivery(StrictModel):
    delivery_window_s: float | None
    deadline_s: float | None
    windows: list[DeliveryWindow]
    series_bin_s: float
    series: list[DeliveryBin] = Field(description="on-time share by planned-arrival bin")
    recovery: Recovery | None
    recovery_null_reason: str | None
    finding: str = Field(default="", description=FINDING)


UNTIMED = (
    "the gateway log has no request durations (nginx: no $request_time): the time to"
    " delivery and the on-time share are unknown"
)


def proxy_untimed(con: duckdb.DuckDBPyConnection) -> bool:
    """Attempts in the workspace, none of them with a duration (t_end > t_sent)."""
    r = sql.one(con, "analyses/proxy_durations")
    return r is not None and int(r["attempts"]) > 0 and int(r["timed"]) == 0


def _query(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, windows: list[Window]
) -> dict[str, dict[str, Any]]:
    params = window_params(windows) | {
        # No delivery window known: any delivery by T counts (W = +inf in the query only).
        "delivery_window": math.inf if ctx.delivery_window_s is None else ctx.delivery_window_s,
        "deadline_s": ctx.deadline_s,  # None (SQL null) when unknown
        "t_end": ctx.t_end,
    }
    return {str(r["win_name"]): r for r in sql.rows(con, "analyses/delivery_by_window", params)}


def _bins(
    ctx: RunContext, windows: list[Window], rows: dict[str, dict[str, Any]], untimed: bool
) -> list[DeliveryBin]:
    out = []
    for w in windows:
        r = rows[w.name]
        calls = int(r["calls"])
        on_time = int(r["on_time"]) if ctx.deadline_s is not None and not untimed else None
        out.append(
            DeliveryBin(
                start_s=ctx.s(w.a),
                calls=calls,
                on_time=on_time,
                on_time_share=None if on_time is None or calls == 0 else on_time / calls,
            )
        )
    return out


def recovery_bins(ctx: RunContext) -> list[Window]:
    """The bins the recovery is judged on: RECOVERY_BIN_S from the end of the overload."""
    ov_end = ctx.overload_end()
    return ctx.bins(RECOVERY_BIN_S, origin=ov_end, tag="recovery") if ov_end is not None else []


class AfterRates(Protocol):
    """What the verdict reads of the amplification after the overload: an
    `AmplificationWindow`, or the what-if's figures' narrower rates (relplan/whatif/figures.py)."""

    @property
    def calls_x_capacity(self) -> float | None: ...
    @property
    def accepted_x_capacity(self) -> float | None: ...
    @property
    def accepted_source(self) -> str | None: ...


def after_overload(ctx: RunContext, name: str | None = None) -> Window | None:
    """[end of the overload, T], closed: where the verdict reads the amplification's rates
    (None without an overload phase, or when it ends at or after T)."""
    ov_end = ctx.overload_end()
    if ctx.overload_phase is None or ov_end is None or ov_end >= ctx.window_end:
        return None
    return Window(name or f"after {ctx.overload_phase}", ov_end, ctx.window_end, True)


def judge_recovery(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    rows: dict[str, dict[str, Any]],
    untimed: bool,
    after: AfterRates | None = None,
) -> tuple[Recovery | None, str | None]:
    """The recovery (or why there is none) from `rows`, the delivery_by_window rows of (at
    least) `recovery_bins(ctx)` by window name, and `after`, the amplification of
    `after_overload(ctx)` (queried here when not given). The what-if's figures
    (relplan/whatif/figures.py) share both queries with their own windows."""
    if untimed and ctx.overload_phase is not None:
        return None, _say("untimed", untimed=UNTIMED)
    return _recovery(con, ctx, _bins(ctx, recovery_bins(ctx), rows, untimed), after)


def analyze_delivery(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> Delivery:
    windows = ctx.phase_windows()
    series_bins = ctx.bins(ctx.bin_s, tag="series")
    rows = _query(con, ctx, windows + series_bins + recovery_bins(ctx))  # one query
    untimed = proxy_untimed(con)
    out = []
    for w in windows:
        r = rows[w.name]
        why: dict[str, str] = {}
        calls = int(r["calls"])
        delivered = int(r["delivered"])
        no_calls = "no calls planned in this window"
        on_time: int | None = int(r["on_time"])
        if ctx.deadline_s is None:
            on_time = None
            why["on_time"] = "deadline unknown: give --deadline or a run.json with deadline_s"
        elif untimed:
            on_time = None
            why["on_time"] = UNTIMED
        if ctx.delivery_window_s is None:
            why["delivery_window"] = "no delivery window known: any delivery by T counts"
        if delivered == 0:
            why["delivery_median_s"] = why["delivery_p99_s"] = "no call delivered"
        elif untimed:
            why["delivery_median_s"] = why["delivery_p99_s"] = UNTIMED
        out.append(
            DeliveryWindow(
                window=w.name,
                start_s=ctx.s(w.a),
                end_s=ctx.s(w.b),
                calls=calls,
                delivered=delivered,
                delivered_share=ratio(delivered, calls, why, "delivered_share", no_calls),
                on_time=on_time,
                on_time_share=(
                    ratio(on_time, calls, why, "on_time_share", no_calls)
                    if on_time is not None
                    else None
                ),
                window_open_at_end=int(r["window_open_at_end"]),
                delivery_median_s=None if untimed else r["delivery_median_s"],
                delivery_p99_s=None if untimed else r["delivery_p99_s"],
                null_reasons=why,
            )
        )
    series = _bins(ctx, series_bins, rows, untimed)
    recovery, why_none = judge_recovery(con, ctx, rows, untimed)
    return Delivery(
        delivery_window_s=ctx.delivery_window_s,
        deadline_s=ctx.deadline_s,
        windows=out,
        series_bin_s=ctx.bin_s,
        series=series,
        recovery=recovery,
        recovery_null_reason=why_none,
    )


def _recovery(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    bins: list[DeliveryBin],
    after: AfterRates | None = None,
) -> tuple[Recovery | None, str | None]:
    if ctx.overload_phase is None:
        return None, "no overload phase: give --phases (with a phase named pulse) or a run.json"
    ov_end = ctx.overload_end()
    assert ov_end is not None
    end = ctx.window_end
    if ov_end >= end:
        return None, _say("overload_to_the_end", phase=ctx.overload_phase)
    if ctx.deadline_s is None:
        return (
            None,
            "recovery is judged on the on-time share, which needs the deadline (--deadline)",
        )
    enough = [b for b in bins if b.calls >= RECOVERY_MIN_CALLS]
    failing = [b for b in enough if (b.on_time_share or 0.0) < RECOVERY_THRESHOLD]
    last_fail = failing[-1].start_s if failing else None
    recovery_bin = next((b for b in enough if last_fail is None or b.start_s > last_fail), None)
    too_few: int | None = None
    again = [b for b in enough if recovery_bin is not None and b.start_s >= recovery_bin.start_s]
    if recovery_bin is not None and len(again) < RECOVERY_MIN_BINS:
        # one bin (often the data's last, short one) is not a recovery: it may hold only the
        # retries of earlier calls, answered once new calls stopped (issue 24)
        too_few, recovery_bin = len(again), None
    if after is None:
        window = after_overload(ctx)
        assert window is not None
        after = amplification_windows(con, ctx, [window])[0]
    on_time_after_calls = sum(b.calls for b in bins)
    on_time_after = (
        sum(b.on_time or 0 for b in bins) / on_time_after_calls if on_time_after_calls else None
    )
    arr = after.calls_x_capacity
    acc = after.accepted_x_capacity
    ov_end_s = ctx.s(ov_end)
    recovery_s: float | None = None
    verdict: Verdict
    if not enough:
        verdict = "insufficient data"
    elif recovery_bin is not None:
        recovery_s = recovery_bin.start_s - ov_end_s
        verdict = "recovered"
    elif arr is None or acc is None:
        verdict = "insufficient data"
    elif arr > 1.0:
        verdict = "overloaded"
    elif acc > 1.0:
        verdict = "metastable"
    else:
        tail = enough[-2:]
        late_to_the_end = all((b.on_time_share or 0.0) < LATE_TO_THE_END for b in tail)
        verdict = "metastable" if late_to_the_end else "draining"
    return (
        Recovery(
            overload_phase=ctx.overload_phase,
            overload_end_s=ov_end_s,
            bin_s=RECOVERY_BIN_S,
            threshold=RECOVERY_THRESHOLD,
            min_calls=RECOVERY_MIN_CALLS,
            recovery_s=recovery_s,
            verdict=verdict,
            calls_x_capacity_after=arr,
            accepted_x_capacity_after=acc,
            accepted_source=after.accepted_source,
            on_time_share_after=on_time_after,
            bins_with_enough_calls=len(enough),
            min_bins=RECOVERY_MIN_BINS,
            on_time_again_bins=too_few,
            last_failing_bin_s=None if last_fail is None else last_fail,
            bins=bins,
        ),
        None,
    )


def missing(i: Inputs) -> str | None:
    return None if i.ctx.has_proxy else "delivery and recovery need a proxy log (attempt outcomes)"


def run(i: Inputs) -> Delivery:
    return analyze_delivery(i.con, i.ctx)
