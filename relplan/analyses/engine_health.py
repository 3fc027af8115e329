"""The engine health signals as an analysis: relplan.alerts evaluates them with Prometheus's
semantics, so that the rule file `relplan alerts export` writes fires where this says it does.
With `--prometheus-url` the server evaluates the rule expressions over the analysed window
and only their results are fetched (relplan/alerts/pushdown.py).
"""

from __future__ import annotations

from relplan.alerts.health import HealthResult, evaluate_health
from relplan.analyses.inputs import Inputs
from relplan.errors import NoDataError, UsageError


def missing(i: Inputs) -> str | None:
    del i  # known only by trying: evaluate_health says which metrics it lacks
    return None


def run(i: Inputs) -> HealthResult:
    if i.opts.prometheus_url:
        from relplan.alerts import pushdown

        return pushdown.evaluate_health_remote(
            pushdown.Remote(i.opts.prometheus_url),
            start=i.ctx.window_start,
            end=i.ctx.window_end,
            step=i.opts.step,
            replica_label=i.opts.replica_label,
        )
    try:
        return evaluate_health(
            i.con,
            start=i.ctx.window_start,
            end=i.ctx.window_end,
            step=i.opts.step,
            replica_label=i.opts.replica_label,
        )
    except NoDataError as exc:  # its message already says what the signals need
        raise NoDataError(str(exc)) from exc
    except UsageError as exc:  # the evaluation grid is out of bounds: say why, skip it
        raise NoDataError(f"engine health signals not evaluated: {exc}") from exc
