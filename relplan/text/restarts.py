"""The text of the `restarts` analysis for `relplan analyze` (docs/analyses.md, `restarts`)."""

from __future__ import annotations

from relplan.analyses.context import RunContext
from relplan.analyses.restarts import Restarts
from relplan.tables import format_table
from relplan.values import MISSING, num


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
