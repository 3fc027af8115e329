"""The report's `restarts` section: crashes, restarts and rollouts, from the `restarts`
analysis, with the budget figures measured from the same incident (docs/planning.md, budget)."""

from __future__ import annotations

from pydantic import Field

from relplan.analyses.context import RunContext
from relplan.analyses.restarts import Restarts
from relplan.models import StrictModel
from relplan.report.data import SectionBase, Table
from relplan.report.section import Section
from relplan.text.restarts import (
    node_report_rows,
    restart_report_rows,
    restarts_report_finding,
    rollout_report_rows,
)

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


def build(r: Restarts, ctx: RunContext) -> RestartsSection:
    del ctx  # every time is already seconds from t0
    rows = restart_report_rows(r)
    nodes = Table(
        columns=["node", "crashes", "pods crashed", "Xid seen", "row remap failed", "cordon?"],
        rows=node_report_rows(r),
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
        rows=rollout_report_rows(r),
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
        finding=restarts_report_finding(r, budget),
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


SECTION = Section(title=TITLE, question=QUESTION, model=RestartsSection, build=build)
