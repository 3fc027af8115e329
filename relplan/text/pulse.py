"""The text of `relplan pulse`: the backlog arithmetic as a table and its verdict."""

from __future__ import annotations

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
