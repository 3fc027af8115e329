"""The text of `relplan alerts slo` (the tiers) and of its offline evaluation, and the words
of its rules: the burn alerts' annotations, the tiers left out and the rule file's header
(relplan/alerts/slo.py names each by a code of its `Said`; `SENTENCES` words it,
relplan/wording.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from relplan.alerts.slo import BurnTier, SloRuleSet
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


# --- the rules' words (relplan/alerts/slo.py's `Said`) -------------------------------------


def tier_left_out(severity: str, share: float, long_s: float, window_s: float) -> str:
    return (
        f"{severity} tier {percent(share)} in {human_duration(long_s)}: longer than the"
        f" {human_duration(window_s)} SLO window"
    )


def burn_summary(who: str, severity: str) -> str:
    return f"SLO {who}: error budget burning ({severity})"


def burn_description(slo: float, value: str, tiers: list[BurnTier]) -> str:
    """`value`: Prometheus's template of the alert's value (the burn rate)."""
    described = "; ".join(
        f"{percent(t.budget_share)} of the budget in {t.long_window} (burn {short(t.burn_rate)}x,"
        f" confirmed over {t.short_window})"
        for t in tiers
    )
    return (
        f"Errors burn the {sig(slo, 6)} SLO budget at {value}x (long window)."
        f" Fires on: {described}."
    )


def burn_runbook() -> str:
    return (
        "Find the cause in the window: relplan ingest the proxy log and engine"
        " metrics, run `relplan analyze` (delivery and recovery, amplification);"
        " size the budget with `relplan budget`."
    )


def slo_header(rs: SloRuleSet) -> str:
    """The comment at the top of the SLO rule file, one line a line."""
    header = (
        "SLO burn-rate rules written by `relplan alerts slo` (SRE workbook, chapter 5).\n"
        f"SLO {sig(rs.slo, 6)} over {human_duration(rs.window_s)}; error budget"
        f" {short(rs.error_budget)}.\n"
        f"errors: {rs.errors_expr}\ntotal:  {rs.total_expr}\n"
        "Check: promtool check rules FILE. Deploy: list FILE under rule_files in prometheus.yml.\n"
    )
    for s in rs.skipped:
        header += f"Left out: {s}.\n"
    return header


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (tier_left_out, burn_summary, burn_description, burn_runbook, slo_header)
}
