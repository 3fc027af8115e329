"""`--fail-if`: a small expression language over figure names.

    EXPR   := FIGURE OP NUMBER [UNIT] [ "vs" SIDE ]
    FIGURE := a name of `relplan compare --list-figures`, e.g. on_time.hold
    OP     := <  <=  >  >=
    NUMBER := [+|-] digits [. digits]
    UNIT   := pt   percentage points: the difference of two shares × 100
            | %    relative: the difference ÷ |baseline| × 100
            |      (none) the difference in the figure's own unit (s, ratio, count)

The difference is always side minus baseline (the first side); with several sides every
side is checked unless `vs SIDE` names one. A line fails when its condition holds and the
difference is beyond noise (docs/compare.md); where a figure has no band the line is not
judged (a bare difference is never called a regression) and says so. `%` against a baseline
of 0 is an infinite change (+inf% or -inf%). A malformed line is a usage error naming its
position.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from relplan.errors import UsageError
from relplan.values import signed


@dataclass(frozen=True)
class Gate:
    expr: str
    figure: str
    op: str
    threshold: float
    unit: str  # "pt", "%" or ""
    side: str | None

    def holds(self, value: float) -> bool:
        return {
            "<": value < self.threshold,
            "<=": value <= self.threshold,
            ">": value > self.threshold,
            ">=": value >= self.threshold,
        }[self.op]


def _error(expr: str, pos: int, what: str) -> UsageError:
    return UsageError("--fail-if", f"{expr!r}: position {pos + 1}: expected {what}")


def parse_gate(expr: str) -> Gate:
    """One --fail-if line; a UsageError naming the 1-based position of the first bad token."""
    pos = 0
    m = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.]*)").match(expr, pos)
    if m is None:
        raise _error(expr, len(expr) - len(expr.lstrip()), "a figure name such as on_time.hold")
    figure, pos = m.group(1), m.end()
    m = re.compile(r"\s*(<=|>=|<|>)").match(expr, pos)
    if m is None:
        raise _error(expr, _skip(expr, pos), "a comparison: <, <=, > or >=")
    op, pos = m.group(1), m.end()
    m = re.compile(r"\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))").match(expr, pos)
    if m is None:
        raise _error(expr, _skip(expr, pos), "a number such as -5 or +10")
    threshold, pos = float(m.group(1)), m.end()
    unit = ""
    m = re.compile(r"\s*(pt|%)(?![A-Za-z0-9_])").match(expr, pos)
    if m is not None:
        unit, pos = m.group(1), m.end()
    side = None
    m = re.compile(r"\s+vs\s+(\S+)").match(expr, pos)
    if m is not None:
        side, pos = m.group(1), m.end()
    if expr[pos:].strip():
        raise _error(expr, _skip(expr, pos), "a unit (pt or %), `vs SIDE` or the end")
    return Gate(expr, figure, op, threshold, unit, side)


def _skip(expr: str, pos: int) -> int:
    return pos + len(expr[pos:]) - len(expr[pos:].lstrip())


def measure(gate: Gate, diff: float, rel: float | None, unit: str) -> tuple[float | None, str]:
    """The difference in the gate's unit, and how it is shown."""
    if gate.unit == "pt":
        return diff * 100, signed(diff * 100, 1) + "pt"
    if gate.unit == "%":
        if rel is None:  # the baseline is 0: any change is an infinite relative change
            if diff == 0:
                return 0.0, "+0.0% (baseline is 0)"
            return math.copysign(math.inf, diff), f"{'+' if diff > 0 else '-'}inf% (baseline is 0)"
        return rel * 100, signed(rel * 100, 1) + "%"
    return diff, signed(diff, sig_digits=4) + (f" {unit}" if unit in ("s", "per_s") else "")
