"""Check the fit before trusting it: the as-observed replay beside the incident.

The fit error is the largest absolute difference, over the incident's windows (each phase
and `overload+later`), of the delivered share and of the on-time share between the incident
and the median as-observed replay (the seed whose overload+later delivered share is the
median). Controls are ranked only when every seed's as-observed replay reaches the
incident's verdict and the error is at most `MAX_ERROR`; otherwise the check says why.
"""

from __future__ import annotations

from typing import Literal

from relplan.analyses.wording import Words
from relplan.whatif.model import Figures, FitCheck

# The check's reasons, worded by relplan/text/whatif.py (relplan/analyses/wording.py).
Said = Literal[
    "check_no_verdict", "check_verdict_differs", "check_error_too_large", "check_trusted"
]
_say: Words[Said] = Words("relplan.text.whatif")

MAX_ERROR = 0.10  # shares: 10 points of delivered or on-time share


def fit_error(incident: Figures, replay: Figures) -> tuple[float | None, str | None]:
    worst: float | None = None
    where: str | None = None
    for w in incident.windows:
        r = replay.window(w.window)
        if r is None or w.calls == 0:
            continue
        for a, b in ((w.delivered_share, r.delivered_share), (w.on_time_share, r.on_time_share)):
            if a is None or b is None:
                continue
            if worst is None or abs(a - b) > worst:
                worst, where = abs(a - b), w.window
    return worst, where


def check_fit(incident: Figures, runs: list[Figures], seeds: list[int]) -> FitCheck:
    from relplan.whatif.replay import median_run

    replay = median_run(runs)
    err, where = fit_error(incident, replay)
    verdicts = [r.verdict for r in runs]
    matches = all(v == incident.verdict for v in verdicts)
    if incident.verdict == "insufficient data":
        trusted, reason = False, _say("check_no_verdict")
    elif not matches:
        trusted = False
        reason = _say(
            "check_verdict_differs", replayed=sorted(set(verdicts)), incident=incident.verdict
        )
    elif err is not None and err > MAX_ERROR:
        trusted = False
        reason = _say("check_error_too_large", error=err, window=where, most=MAX_ERROR)
    else:
        trusted = True
        reason = _say("check_trusted", verdict=incident.verdict, error=err, window=where)
    return FitCheck(
        incident=incident,
        replay=replay,
        replay_seeds=seeds,
        error=err,
        error_window=where,
        verdict_matches=matches,
        trusted=trusted,
        reason=reason,
    )
