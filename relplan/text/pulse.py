"""The text of `relplan pulse`: the backlog arithmetic as a table and its verdict."""

from __future__ import annotations

from relplan.planning.pulse import PulseResult
from relplan.tables import format_table


def render_pulse(res: PulseResult) -> str:

    i = res.inputs
    cap = i.capacity_calls_per_s

    def opt(v: float | None, unit: str, never: str) -> str:
        return never if v is None else f"{v:,.1f}{unit}"

    rows = [
        [
            "backlog left by the pulse",
            f"{res.backlog_calls:,.0f} calls = {res.backlog_seconds:,.1f} s of engine time",
        ],
        ["backlog / deadline", f"{res.backlog_x_deadline:.2f}x the {i.deadline_s:g} s deadline"],
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
            f"{res.retried_hold_x_capacity:.2f}x capacity = {res.retried_hold_calls_per_s:.2f} calls/s",
        ],
        [
            f"largest safe pulse for {i.pulse_seconds:g} s",
            f"{res.max_pulse_x_capacity:.2f}x capacity = {res.max_pulse_x_capacity * cap:.2f} calls/s",
        ],
        [
            f"longest safe pulse at {i.pulse:g}x",
            opt(res.max_pulse_seconds, " s", "any (no backlog)"),
        ],
        ["retry ratio the hold can absorb", opt(res.max_retry_ratio, " retries/call", "none")],
    ]
    head = (
        f"Pulse {i.pulse:g}x for {i.pulse_seconds:g} s on capacity {cap:g} calls/s"
        f" (base {i.base:g}x, hold {i.hold:g}x, deadline {i.deadline_s:g} s, {i.retries} retries)"
    )
    verdict = f"Verdict: {res.verdict}. " + "; ".join(res.reasons) + "."
    return "\n".join([head, "", format_table(["figure", "value"], rows, left=(0, 1)), "", verdict])
