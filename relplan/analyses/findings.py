"""`relplan analyze --fail-on ...`: which findings turn the exit code to 1 (for CI gates).

Conditions:
- `metastable`, `draining`, `overloaded`: the delivery analysis's recovery verdict is that one;
- `not-recovered`: the verdict is any of those three (insufficient data does not count);
- `counter-alarm`: the counters analysis raised at least one alarm interval;
- `health`: any engine health signal fired.

The sentence each finding shown is worded by relplan/text/findings.py (`fail_on_findings`).
"""

from __future__ import annotations

from relplan.errors import UsageError

FAIL_ON = ("metastable", "draining", "overloaded", "not-recovered", "counter-alarm", "health")
NOT_RECOVERED = ("metastable", "draining", "overloaded")


def parse_fail_on(values: list[str]) -> list[str]:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    bad = [n for n in names if n not in FAIL_ON]
    if bad:
        raise UsageError(
            "--fail-on", f"unknown finding {', '.join(bad)}; expected one of {', '.join(FAIL_ON)}"
        )
    return list(dict.fromkeys(names))
