"""The text of the `restarts` analysis for `relplan analyze` (docs/analyses.md, `restarts`)."""

from __future__ import annotations

from typing import Protocol

from relplan.analyses.context import RunContext
from relplan.analyses.restarts import Restarts
from relplan.tables import format_table
from relplan.values import MISSING, fixed, num, sig_grouped


def render_restarts(r: Restarts, ctx: RunContext | None = None) -> str:
    del ctx
    lines = ["Crashes, restarts and rollouts"]
    if r.restarts:
        lines.append(
            format_table(
                ["pod", "node", "at s", "kind", "cause", "n", "probes failed", "killed", "down s"],
                [
                    [
                        x.pod,
                        x.node or MISSING,
                        num(x.t_s),
                        x.kind,
                        x.cause,
                        str(x.count),
                        ",".join(x.probes_failed_before) or MISSING,
                        num(x.streams_killed),
                        num(
                            x.down_to_ready_s
                            if x.down_to_ready_s is not None
                            else x.down_to_first_served_s
                        ),
                    ]
                    for x in r.restarts
                ],
                left=(0, 1, 3, 4, 6),
            )
        )
    for n in r.nodes:
        if n.cordon_candidate:
            lines.append(f"Cordon candidate {n.node}: {n.why}.")
    for i, ro in enumerate(r.rollouts):
        drained = MISSING if ro.drained is None else ("drained" if ro.drained else "did not drain")
        lines.append(
            f"Rollout {i + 1}: {ro.pods} pods from {num(ro.start_s)} s to {num(ro.end_s)} s,"
            f" {num(ro.streams_dropped)} streams dropped, {drained}; readiness failed first on"
            f" {ro.readiness_failed_first} of {ro.pods}."
        )
    lines.append(r.finding)
    return "\n".join(lines)


# --- the report's section (relplan/report/sections/restarts.py arranges it) ----------------


class BudgetFigures(Protocol):
    """The inputs of `relplan budget --from-db` measured from the incident (the report's
    MeasuredBudget)."""

    @property
    def crashes_per_replica_per_30d(self) -> float: ...
    @property
    def planned_per_replica_per_30d(self) -> float: ...
    @property
    def window_s(self) -> float: ...
    @property
    def streams_killed_per_crash(self) -> float | None: ...
    @property
    def restart_minutes(self) -> float | None: ...
    @property
    def break_even_stream_s(self) -> float | None: ...


def _opt(v: float | None) -> str:
    return "–" if v is None else num(v)


def restart_report_rows(r: Restarts) -> list[list[str]]:
    """The report's restarts table, one row per restart."""
    return [
        [
            x.pod,
            x.node or "–",
            num(x.t_s),
            x.kind,
            x.cause,
            str(x.count),
            ", ".join(x.probes_failed_before) or "–",
            _opt(x.streams_killed),
            _opt(x.down_to_ready_s if x.down_to_ready_s is not None else x.down_to_first_served_s),
        ]
        for x in r.restarts
    ]


def node_report_rows(r: Restarts) -> list[list[str]]:
    """The report's nodes table, one row per node."""
    return [
        [
            n.node,
            str(n.crashes),
            str(n.pods_crashed),
            ", ".join(str(x) for x in n.xid_codes) or "–",
            "yes" if n.row_remap_failure else "no",
            n.why or "no",
        ]
        for n in r.nodes
    ]


def rollout_report_rows(r: Restarts) -> list[list[str]]:
    """The report's rollouts table, one row per rollout."""
    return [
        [
            num(x.start_s),
            num(x.end_s),
            str(x.pods),
            _opt(x.streams_dropped),
            f"{x.readiness_failed_first} of {x.pods}",
            "–" if x.drained is None else ("yes" if x.drained else "no"),
        ]
        for x in r.rollouts
    ]


def restarts_report_finding(r: Restarts, budget: BudgetFigures) -> str:
    """The report's finding: the analysis's finding, then a sentence per rollout, per cordon
    candidate, and the measured budget figures."""
    return " ".join(
        [r.finding, *_rollout_sentences(r), *_cordon_sentences(r), _budget_sentence(budget)]
    ).strip()


def _rollout_sentences(r: Restarts) -> list[str]:
    out = []
    for i, x in enumerate(r.rollouts):
        drained = (
            "" if x.drained is None else (" and drained" if x.drained else " and did not drain")
        )
        out.append(
            f"Rollout {i + 1} stopped {x.pods} pods from {num(x.start_s)} s to {num(x.end_s)} s,"
            f" dropped {_opt(x.streams_dropped)} stream(s){drained}; readiness failed first on"
            f" {x.readiness_failed_first} of {x.pods}."
        )
    return out


def _cordon_sentences(r: Restarts) -> list[str]:
    return [f"Node {n.node} is a cordon candidate: {n.why}." for n in r.nodes if n.cordon_candidate]


def _budget_sentence(b: BudgetFigures) -> str:
    if not b.crashes_per_replica_per_30d and not b.planned_per_replica_per_30d:
        return ""
    text = (
        f"Measured for `relplan budget --from-db`: {sig_grouped(b.crashes_per_replica_per_30d, 4)} crashes and"
        f" {sig_grouped(b.planned_per_replica_per_30d, 4)} planned restarts per replica per 30 days"
        f" (from {num(b.window_s / 60)} minutes of data)"
    )
    if b.restart_minutes is not None:
        text += f", {fixed(b.restart_minutes, 1)} min down per crash"
    if b.streams_killed_per_crash is not None:
        text += f", {fixed(b.streams_killed_per_crash, 2)} streams killed per crash"
    if b.break_even_stream_s is not None:
        text += (
            f"; at SLO 99.9 % over 30 days, streams longer than {num(b.break_even_stream_s, 1)} s"
            " blow the budget on crashes alone"
        )
    return text + "."
