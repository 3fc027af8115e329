"""Multiwindow, multi-burn-rate SLO alerts in the form of Google's SRE workbook (chapter 5).

Four tiers, each "this share of the error budget spent within the long window", confirmed
by a short window (1/12 of the long one) so the alert resets soon after the burn stops:

    page    2 % of the budget in 1h  (short 5m)   burn 14.4 for a 30-day SLO window
    page    5 % of the budget in 6h  (short 30m)  burn 6
    ticket 10 % of the budget in 1d  (short 2h)   burn 3
    ticket 10 % of the budget in 3d  (short 6h)   burn 1

The burn rate of a tier is budget share x SLO window / long window, so other SLO windows
scale it (7 days: 3.36, 1.4, 0.7, 0.233...). A tier whose long window is longer than the SLO
window is left out (and the file says so). Burn rates are written with at most 6
significant digits.

Recording rules `slo:sli_error:ratio_rate<W>{slo="NAME"}` hold errors / total over each
window W the tiers use; the alerts divide them by the error budget (1 - SLO) so that an
alert's value is the burn rate over its long window.

`--errors`/`--total` are PromQL expressions containing `$window` where the range goes
(`sum(rate(http_requests_total{code=~"5.."}[$window]))`), or bare counter selectors, which
become `sum(rate(SELECTOR[$window]))`.
"""

from __future__ import annotations

import re
from typing import Literal

from relplan.alerts import promql_ast, promql_parser
from relplan.alerts.rules import (
    VALUE_TEMPLATE,
    AlertRule,
    RecordingRule,
    check_label,
    dump_yaml,
    num_text,
    rule_file_dict,
)
from relplan.errors import UsageError
from relplan.models import StrictModel
from relplan.values import human_duration
from relplan.wording import Words

# The annotations, the tiers left out and the rule file's header, worded by
# relplan/text/slo.py (relplan/wording.py).
Said = Literal["tier_left_out", "burn_summary", "burn_description", "burn_runbook", "slo_header"]
_say: Words[Said] = Words("relplan.text.slo")

# (severity, budget share, long window s, short window s), the SRE workbook's table.
WORKBOOK_TIERS: tuple[tuple[str, float, int, int], ...] = (
    ("page", 0.02, 3600, 300),
    ("page", 0.05, 6 * 3600, 1800),
    ("ticket", 0.10, 86400, 2 * 3600),
    ("ticket", 0.10, 3 * 86400, 6 * 3600),
)
_SELECTOR = re.compile(r"^\s*[A-Za-z_:][A-Za-z0-9_:]*\s*(\{[^{}]*\})?\s*$")
_NAME = re.compile(r"^[A-Za-z0-9_.:-]+$")


class BurnTier(StrictModel):
    severity: str
    budget_share: float
    long_window: str
    short_window: str
    burn_rate: float
    error_ratio_threshold: float


class SloRuleSet(StrictModel):
    name: str
    slo: float
    window_s: float
    error_budget: float
    errors_expr: str
    total_expr: str
    tiers: list[BurnTier]
    skipped: list[str]
    records: list[RecordingRule]
    alerts: list[AlertRule]


def window_expr(text: str, flag: str) -> str:
    """The user's expression with `$window` kept as the placeholder, validated."""
    text = text.strip()
    if not text:
        raise UsageError(flag, "expected a PromQL expression, got nothing")
    if "$window" not in text:
        if not _SELECTOR.match(text):
            raise UsageError(
                flag,
                "expected a PromQL expression with [$window] where the range goes (e.g."
                " 'sum(rate(http_requests_total{code=~\"5..\"}[$window]))') or a counter"
                f" selector, got {text!r}",
            )
        text = f"sum(rate({text}[$window]))"
    if "[$window]" not in text:
        raise UsageError(flag, f"$window must be a range, written [$window], in {text!r}")
    probe = text.replace("$window", "5m")
    if probe.count("(") != probe.count(")") or probe.count("{") != probe.count("}"):
        raise UsageError(flag, f"unbalanced brackets in {text!r}")
    return text


def _six_digits(x: float) -> float:
    return float(f"{x:.6g}")


def slo_rules(
    slo: float, window_s: float, errors: str, total: str, *, name: str = "relplan"
) -> SloRuleSet:
    """Recording and alerting rules for an SLO (fraction, e.g. 0.999) over `window_s`."""
    if not _NAME.match(name):
        raise UsageError("--name", f"use letters, digits and _.:- only, got {name!r}")
    check_label("slo", "--name")
    err = window_expr(errors, "--errors")
    tot = window_expr(total, "--total")
    budget = round(1 - slo, 12)
    budget_s = repr(budget)
    tiers: list[BurnTier] = []
    skipped: list[str] = []
    for severity, share, long_s, short_s in WORKBOOK_TIERS:
        if long_s > window_s:
            skipped.append(
                _say(
                    "tier_left_out",
                    severity=severity,
                    share=share,
                    long_s=long_s,
                    window_s=window_s,
                )
            )
            continue
        burn = _six_digits(share * window_s / long_s)
        tiers.append(
            BurnTier(
                severity=severity,
                budget_share=share,
                long_window=promql_ast.format_duration_ms(long_s * 1000),
                short_window=promql_ast.format_duration_ms(short_s * 1000),
                burn_rate=burn,
                error_ratio_threshold=burn * budget,
            )
        )
    if not tiers:
        raise UsageError(
            "--window",
            f"{human_duration(window_s)} is shorter than every alert window (1h at least)",
        )
    group = f"relplan-slo-{name}"
    windows = sorted(
        {promql_ast.parse_duration_ms(t.long_window) for t in tiers}
        | {promql_ast.parse_duration_ms(t.short_window) for t in tiers}
    )
    records = []
    for w in windows:
        wtext = promql_ast.format_duration_ms(w)
        records.append(
            RecordingRule(
                record=f"slo:sli_error:ratio_rate{wtext}",
                expr=f"({err.replace('$window', wtext)})\n/\n({tot.replace('$window', wtext)})",
                labels={"slo": name},
                group=group,
            )
        )
    alerts = []
    for severity in ("page", "ticket"):
        mine = [t for t in tiers if t.severity == severity]
        if not mine:
            continue
        parts = []
        for t in mine:
            sel = f'{{slo="{name}"}}'
            burn_text = num_text(t.burn_rate)
            parts.append(
                f"(\n  slo:sli_error:ratio_rate{t.long_window}{sel} / {budget_s} > {burn_text}\n"
                f"and\n  slo:sli_error:ratio_rate{t.short_window}{sel} / {budget_s} > {burn_text}\n)"
            )
        expr = "\nor\n".join(parts)
        alerts.append(
            AlertRule(
                signal=f"slo_burn_{severity}",
                alert=f"SLOErrorBudgetBurn{severity.capitalize()}",
                expr=expr,
                for_s=0,
                labels={"severity": severity},
                annotations={
                    "summary": _say("burn_summary", who="{{ $labels.slo }}", severity=severity),
                    "description": _say(
                        "burn_description", slo=slo, value=VALUE_TEMPLATE, tiers=mine
                    ),
                    "runbook": _say("burn_runbook"),
                },
                group=group,
            )
        )
    for a in alerts:
        promql_parser.parse(a.expr)  # relplan's own text; the user's expressions go to promtool
    return SloRuleSet(
        name=name,
        slo=slo,
        window_s=window_s,
        error_budget=budget,
        errors_expr=err,
        total_expr=tot,
        tiers=tiers,
        skipped=skipped,
        records=records,
        alerts=alerts,
    )


def export_slo_rules(rs: SloRuleSet) -> str:
    return dump_yaml(rule_file_dict(rs.alerts, rs.records), _say("slo_header", rs=rs))
