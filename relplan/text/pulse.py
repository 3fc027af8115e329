"""The text of `relplan pulse`: the backlog arithmetic as a table and its verdict, and the
verdict's reasons (relplan/planning/pulse.py names each by a code of its `Said` with its
numbers; `SENTENCES` words it, relplan/wording.py)."""

from __future__ import annotations

from collections.abc import Callable

from relplan.planning.pulse import PulseResult
from relplan.tables import format_table
from relplan.values import fixed, num, short


def render_pulse(res: PulseResult) -> str:

    i = res.inputs
    cap = i.capacity_calls_per_s

    def opt(v: float | None, unit: str, never: str) -> str:
        return never if v is None else f"{num(v, 1)}{unit}"

    rows = [
        [
            "backlog left by the pulse",
            f"{num(res.backlog_calls)} calls = {num(res.backlog_seconds, 1)} s of engine time",
        ],
        [
            "backlog / deadline",
            f"{fixed(res.backlog_x_deadline, 2)}x the {short(i.deadline_s)} s deadline",
        ],
        [
            "recovered after (no retries): a new call's wait back to D",
            opt(res.recovered_seconds, " s", "never (hold at or above capacity)"),
        ],
        [
            "drained after (no retries): the backlog gone",
            opt(res.drain_seconds, " s", "never (hold at or above capacity)"),
        ],
        [
            f"hold load if every call retries {i.retries}x",
            f"{fixed(res.retried_hold_x_capacity, 2)}x capacity = {fixed(res.retried_hold_calls_per_s, 2)} calls/s",
        ],
        [
            f"largest safe pulse for {short(i.pulse_seconds)} s",
            f"{fixed(res.max_pulse_x_capacity, 2)}x capacity = {fixed(res.max_pulse_x_capacity * cap, 2)} calls/s",
        ],
        [
            f"longest safe pulse at {short(i.pulse)}x",
            opt(res.max_pulse_seconds, " s", "any (no backlog)"),
        ],
        ["retry ratio the hold can absorb", opt(res.max_retry_ratio, " retries/call", "none")],
    ]
    head = (
        f"Pulse {short(i.pulse)}x for {short(i.pulse_seconds)} s on capacity {short(cap)} calls/s"
        f" (base {short(i.base)}x, hold {short(i.hold)}x, deadline {short(i.deadline_s)} s, {i.retries} retries)"
    )
    verdict = f"Verdict: {res.verdict}. " + "; ".join(res.reasons) + "."
    return "\n".join([head, "", format_table(["figure", "value"], rows, left=(0, 1)), "", verdict])


# --- the verdict's reasons (relplan/planning/pulse.py's `Said`) ---------------------------


def no_backlog(pulse: float) -> str:
    return f"the pulse ({short(pulse)}x) is within capacity: it leaves no backlog"


def backlog_over_deadline(backlog_s: float, deadline_s: float) -> str:
    return (
        f"the pulse leaves {fixed(backlog_s, 0)} s of engine work queued,"
        f" {fixed(backlog_s / deadline_s, 2)}x the {short(deadline_s)} s deadline: attempts at"
        " the back of the queue time out before they are served"
    )


def backlog_under_deadline(backlog_s: float, deadline_s: float) -> str:
    return (
        f"the pulse leaves {fixed(backlog_s, 0)} s of engine work queued, under the"
        f" {short(deadline_s)} s deadline"
    )


def never_drains(hold: float) -> str:
    return (
        f"the hold ({short(hold)}x) is at or above capacity: the backlog never drains,"
        " even without retries"
    )


def retries_collapse(retries: int, retried_x: float, retried_calls_per_s: float) -> str:
    return (
        f"if the hold's calls time out and retry {retries} times, they offer"
        f" {fixed(retried_x, 2)}x capacity ({fixed(retried_calls_per_s, 2)} calls/s): above"
        " capacity, so the queue can stay full of attempts whose clients have left (metastable"
        " failure)"
    )


def retries_stay_under(retries: int, retried_x: float) -> str:
    return (
        f"even if every hold call retried {retries} times the offered load"
        f" ({fixed(retried_x, 2)}x) stays under capacity"
    )


def drains(drain_s: float, recovered_s: float) -> str:
    return (
        f"the hold's spare capacity drains the backlog in {fixed(drain_s, 0)} s (drained after);"
        f" new calls are on time again after {fixed(recovered_s, 0)} s (recovered after)"
    )


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        no_backlog,
        backlog_over_deadline,
        backlog_under_deadline,
        never_drains,
        retries_collapse,
        retries_stay_under,
        drains,
    )
}
