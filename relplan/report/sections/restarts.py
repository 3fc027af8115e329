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
    """The inputs of `relplan budget --from-db`, as measured from this incident."""

    crashes_per_replica: float
    planned_per_replica: float
    window_s: float
    streams_killed_per_crash: float | None
    restart_minutes: float | None


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
    return RestartsSection(
        title=TITLE,
        question=QUESTION,
        finding=r.finding,
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
        budget=MeasuredBudget(
            crashes_per_replica=r.crashes_per_replica,
            planned_per_replica=r.planned_per_replica,
            window_s=r.window_s,
            streams_killed_per_crash=r.streams_killed_per_crash,
            restart_minutes=None if r.mean_down_to_ready_s is None else r.mean_down_to_ready_s / 60,
        ),
        nodes=nodes if r.nodes else None,
        rollouts=rollouts if r.rollouts else None,
        cordon=[n.node for n in r.nodes if n.cordon_candidate],
    )


SECTION = Section(title=TITLE, question=QUESTION, model=RestartsSection, build=build)
