"""Check the fit before trusting it: the as-observed replay beside the incident.

The fit error is the largest absolute difference, over the incident's windows (each phase
and `overload+later`), of the delivered share and of the on-time share between the incident
and the median as-observed replay (the seed whose overload+later delivered share is the
median). Controls are ranked only when every seed's as-observed replay reaches the
incident's verdict and the error is at most `MAX_ERROR`; otherwise the check says why.
"""

from __future__ import annotations

from relplan.values import percent
from relplan.whatif.model import Figures, FitCheck

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
        trusted, reason = False, "the incident itself has no verdict (insufficient data)"
    elif not matches:
        trusted = False
        reason = (
            f"the as-observed replay reached {', '.join(sorted(set(verdicts)))} where the "
            f"incident was {incident.verdict}: the fitted scenario does not reproduce the "
            "incident, so its controls' outcomes would not say what the incident would have "
            "done; check the fit's parts (docs/whatif.md, The fit) and give the flags that fix them"
        )
    elif err is not None and err > MAX_ERROR:
        trusted = False
        reason = (
            f"the as-observed replay differs by {percent(err)} of calls in {where} (more than "
            f"{percent(MAX_ERROR)}): the controls' figures would carry that error"
        )
    else:
        trusted = True
        reason = f"every as-observed seed reached the incident's verdict ({incident.verdict})" + (
            "" if err is None else f" and the shares differ by at most {percent(err, 1)} ({where})"
        )
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
