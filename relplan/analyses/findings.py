"""`relplan analyze --fail-on ...`: which findings turn the exit code to 1 (for CI gates).

Conditions:
- `metastable`, `draining`, `overloaded`: the delivery analysis's recovery verdict is that one;
- `not-recovered`: the verdict is any of those three (insufficient data does not count);
- `counter-alarm`: the counters analysis raised at least one alarm interval;
- `health`: any engine health signal fired.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from relplan.alerts.health import HealthResult
from relplan.analyses.counters import Counters
from relplan.analyses.delivery import Delivery
from relplan.errors import UsageError

if TYPE_CHECKING:
    from relplan.analyses.result import AnalyzeResult

FAIL_ON = ("metastable", "draining", "overloaded", "not-recovered", "counter-alarm", "health")
_NOT_RECOVERED = ("metastable", "draining", "overloaded")


def parse_fail_on(values: list[str]) -> list[str]:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    bad = [n for n in names if n not in FAIL_ON]
    if bad:
        raise UsageError(
            "--fail-on", f"unknown finding {', '.join(bad)}; expected one of {', '.join(FAIL_ON)}"
        )
    return list(dict.fromkeys(names))


def findings(result: AnalyzeResult, fail_on: list[str]) -> list[str]:
    """The findings among `fail_on` that the result shows, each in one sentence."""
    out: list[str] = []
    delivery, counters, health = (
        result.get(Delivery),
        result.get(Counters),
        result.get(HealthResult),
    )
    rec = delivery.recovery if delivery else None
    verdict = rec.verdict if rec else None
    for name in fail_on:
        if name in _NOT_RECOVERED and verdict == name and rec is not None:
            out.append(f"verdict {verdict}: {rec.because}")
        elif name == "not-recovered" and verdict in _NOT_RECOVERED and rec is not None:
            out.append(f"not recovered (verdict {verdict}): {rec.because}")
        elif name == "counter-alarm" and counters and counters.alarms:
            n = len(counters.alarms)
            out.append(f"counter divergence alarm: {n} interval{'s' if n > 1 else ''}")
        elif name == "health" and health:
            fired = sorted({s.signal for s in health.signals if s.intervals})
            if fired:
                out.append(f"engine health signals fired: {', '.join(fired)}")
    return out
