"""Attempt outcomes: attempts sent per window, and of them those shed or ending in an error."""

from __future__ import annotations

from relplan import sql
from relplan.analyses.common import WindowRow, ratio
from relplan.analyses.context import window_params
from relplan.analyses.inputs import Inputs
from relplan.models import StrictModel
from relplan.values import pct


class OutcomeWindow(WindowRow):
    attempts: int
    shed: int
    errors: int
    refused_share: float | None


class AttemptOutcomes(StrictModel):
    windows: list[OutcomeWindow]
    finding: str


def missing(i: Inputs) -> str | None:
    return None if i.ctx.has_proxy else "attempt outcomes need a proxy log"


def run(i: Inputs) -> AttemptOutcomes:
    windows = i.ctx.phase_windows()
    rows = {
        r["win_name"]: r
        for r in sql.rows(i.con, "analyses/attempt_outcomes_by_window", window_params(windows))
    }
    out = []
    for w in windows:
        r = rows[w.name]
        why: dict[str, str] = {}
        out.append(
            OutcomeWindow(
                window=w.name,
                start_s=i.ctx.s(w.a),
                end_s=i.ctx.s(w.b),
                attempts=r["attempts"],
                shed=r["shed"],
                errors=r["errors"],
                refused_share=ratio(
                    r["shed"] + r["errors"], r["attempts"], why, "refused_share", "no attempts"
                ),
                null_reasons=why,
            )
        )
    return AttemptOutcomes(
        windows=out, finding=f"{pct(out[0].refused_share)} of attempts were shed or failed."
    )
