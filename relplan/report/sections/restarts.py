"""The report's `restarts` section: crashes, restarts and rollouts, from the `restarts`
analysis, with the budget figures measured from the same incident (docs/planning.md, budget)."""

from __future__ import annotations

from pydantic import Field

from relplan.analyses.context import RunContext
from relplan.analyses.restarts import Restarts
from relplan.models import StrictModel
from relplan.report.data import SectionBase, Table
from relplan.report.section import Section

TITLE = "Crashes, restarts and rollouts"
QUESTION = (
    "Which replicas restarted, why, on which nodes, how many streams each restart killed, "
    "and did the rollouts drain?"
)


class MeasuredBudget(StrictModel):
    """The inputs of `relplan budget --from-db`, as measured from this incident, at the
    budget's defaults (SLO 99.9 % over 30 days)."""

    crashes_per_replica_per_30d: float
    planned_per_replica_per_30d: float
    window_s: float
    streams_killed_per_crash: float | None
    restart_minutes: float | None
    break_even_stream_s: float | None


class RestartsSection(SectionBase):
    budget: MeasuredBudget | None = None
    nodes: Table | None = None
    rollouts: Table | None = None
    cordon: list[str] = Field(default_factory=list)


def _opt(v: float | int | None, fmt: str = "{:,.0f}") -> str:
    return "–" if v is None else fmt.format(v)


def build(r: Restarts, ctx: RunContext) -> RestartsSection:
    del ctx  # every time is already seconds from t0
    rows = [
        [
            x.pod,
            x.node or "–",
            f"{x.t_s:,.0f}",
            x.kind,
            x.cause,
            str(x.count),
            ", ".join(x.probes_failed_before) or "–",
            _opt(x.streams_killed),
            _opt(x.down_to_ready_s if x.down_to_ready_s is not None else x.down_to_first_served_s),
        ]
        for x in r.restarts
    ]
    nodes = Table(
        columns=["node", "crashes", "pods crashed", "Xid seen", "row remap failed", "cordon?"],
        rows=[
            [
                n.node,
                str(n.crashes),
                str(n.pods_crashed),
                ", ".join(str(x) for x in n.xid_codes) or "–",
                "yes" if n.row_remap_failure else "no",
                n.why or "no",
            ]
            for n in r.nodes
        ],
    )
    rollouts = Table(
        columns=[
            "from (s)",
            "to (s)",
            "pods",
            "streams dropped",
            "readiness failed first",
            "drained",
        ],
        rows=[
            [
                f"{x.start_s:,.0f}",
                f"{x.end_s:,.0f}",
                str(x.pods),
                _opt(x.streams_dropped),
                f"{x.readiness_failed_first} of {x.pods}",
                "–" if x.drained is None else ("yes" if x.drained else "no"),
            ]
            for x in r.rollouts
        ],
    )
    budget = MeasuredBudget(
        crashes_per_replica_per_30d=r.crashes_per_replica_per_30d,
        planned_per_replica_per_30d=r.planned_per_replica_per_30d,
        window_s=r.window_s,
        streams_killed_per_crash=r.streams_killed_per_crash,
        restart_minutes=None if r.mean_down_to_ready_s is None else r.mean_down_to_ready_s / 60,
        break_even_stream_s=r.break_even_stream_s,
    )
    return RestartsSection(
        title=TITLE,
        question=QUESTION,
        finding=" ".join(
            [r.finding, *_rollout_sentences(r), *_cordon_sentences(r), _budget_sentence(budget)]
        ).strip(),
        caption="times in seconds from t0; down = to ready again (readiness gauge), else to the"
        " first delivered stream (gateway log)",
        table=Table(
            columns=[
                "pod",
                "node",
                "at (s)",
                "kind",
                "cause",
                "restarts",
                "probes failed before",
                "streams killed",
                "down (s)",
            ],
            rows=rows,
        ),
        budget=budget,
        nodes=nodes if r.nodes else None,
        rollouts=rollouts if r.rollouts else None,
        cordon=[n.node for n in r.nodes if n.cordon_candidate],
    )


def _rollout_sentences(r: Restarts) -> list[str]:
    out = []
    for i, x in enumerate(r.rollouts):
        drained = (
            "" if x.drained is None else (" and drained" if x.drained else " and did not drain")
        )
        out.append(
            f"Rollout {i + 1} stopped {x.pods} pods from {x.start_s:,.0f} s to {x.end_s:,.0f} s,"
            f" dropped {_opt(x.streams_dropped)} stream(s){drained}; readiness failed first on"
            f" {x.readiness_failed_first} of {x.pods}."
        )
    return out


def _cordon_sentences(r: Restarts) -> list[str]:
    return [f"Node {n.node} is a cordon candidate: {n.why}." for n in r.nodes if n.cordon_candidate]


def _budget_sentence(b: MeasuredBudget) -> str:
    if not b.crashes_per_replica_per_30d and not b.planned_per_replica_per_30d:
        return ""
    text = (
        f"Measured for `relplan budget --from-db`: {b.crashes_per_replica_per_30d:,.4g} crashes and"
        f" {b.planned_per_replica_per_30d:,.4g} planned restarts per replica per 30 days"
        f" (from {b.window_s / 60:,.0f} minutes of data)"
    )
    if b.restart_minutes is not None:
        text += f", {b.restart_minutes:.1f} min down per crash"
    if b.streams_killed_per_crash is not None:
        text += f", {b.streams_killed_per_crash:.2f} streams killed per crash"
    if b.break_even_stream_s is not None:
        text += (
            f"; at SLO 99.9 % over 30 days, streams longer than {b.break_even_stream_s:,.1f} s"
            " blow the budget on crashes alone"
        )
    return text + "."


SECTION = Section(title=TITLE, question=QUESTION, model=RestartsSection, build=build)
