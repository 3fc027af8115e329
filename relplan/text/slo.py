"""The text of `relplan alerts slo` (the tiers) and of its offline evaluation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from relplan.alerts.slo import SloRuleSet
from relplan.tables import format_table
from relplan.values import clock, human_duration, num, percent, short, sig

if TYPE_CHECKING:  # slo_eval imports numpy and duckdb; `relplan alerts slo` needs neither
    from relplan.alerts.slo_eval import SloEvaluation


def render_slo(rs: SloRuleSet) -> str:
    rows = [
        [
            t.severity,
            f"{percent(t.budget_share)}",
            t.long_window,
            t.short_window,
            f"{short(t.burn_rate)}",
            f"{sig(t.error_ratio_threshold, 4)}",
        ]
        for t in rs.tiers
    ]
    table = format_table(
        ["severity", "budget", "long", "short", "burn rate", "error ratio >"], rows, left=(0,)
    )
    lines = [
        f"SLO {sig(rs.slo, 6)} over {human_duration(rs.window_s)}: error budget {short(rs.error_budget)};"
        f" {len(rs.records)} recording rules, {len(rs.alerts)} alerts.",
        table,
    ]
    lines += [f"Left out: {s}." for s in rs.skipped]
    return "\n".join(lines)


def render_slo_evaluation(ev: SloEvaluation) -> str:
    """The burn rates' peaks per window and the burn alerts' firing intervals."""
    burn = ", ".join(
        f"{b.window} {sig(b.peak_burn_rate, 3)}x"
        if b.peak_burn_rate is not None
        else f"{b.window} -"
        for b in ev.burn
    )
    rows: list[list[str]] = []
    for s in ev.signals:
        if not s.intervals:
            rows.append([s.signal, "-", "-", "-", "-", "never fired"])
        for i in s.intervals:
            who = ",".join(f"{k}={v}" for k, v in i.labels.items() if k != "severity") or "-"
            peak = f"{sig(i.peak_value, 3)}x" if i.peak_value is not None else "-"
            rows.append(
                [
                    s.signal,
                    who,
                    clock(i.start),
                    clock(i.end) + (" (ongoing)" if i.ongoing else ""),
                    peak,
                    f"{num(i.end - i.start)} s firing",
                ]
            )
    table = format_table(
        ["signal", "series", "from", "to", "burn", "note"], rows, left=(0, 1, 2, 3, 5)
    )
    return "\n".join([f"SLO {ev.name}: peak burn rate per window: {burn}", table])
