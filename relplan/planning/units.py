"""Parsing of the planners' duration and SLO inputs, with errors that name the flag."""

from __future__ import annotations

import re

from relplan.errors import UsageError

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_duration(text: str, flag: str, default_unit: str = "s") -> float:
    """`30d`, `720h`, `4w`, `90m`, `45s` or a bare number in `default_unit` -> seconds."""
    m = _DURATION.match(text)
    if not m:
        raise UsageError(flag, f"expected a duration like 30d, 720h or 4w, got {text!r}")
    unit = m.group(2).lower() or default_unit
    if unit not in _UNITS:
        raise UsageError(
            flag, f"unknown unit {m.group(2)!r} in {text!r}; use s, m, h, d or w (e.g. 30d)"
        )
    seconds = float(m.group(1)) * _UNITS[unit]
    if seconds <= 0:
        raise UsageError(flag, f"must be longer than zero, got {text!r}")
    return seconds


def parse_slo(value: float, flag: str = "--slo") -> float:
    """Accept 99.9 (percent) or 0.999 (fraction); return the fraction.

    A value in (0, 1) is a fraction; a value in [1, 100) is a percentage. 0 or less and 100 or
    more make no SLO (100 % allows no failure at all, so every burn would be infinite).
    """
    if not value > 0 or value >= 100:
        raise UsageError(
            flag, f"must be a percentage in (0, 100) or a fraction in (0, 1), got {value}"
        )
    # Rounded so that 99.9 and 0.999 give the same float (99.9 / 100 = 0.9990000000000001).
    return value if value < 1 else round(value / 100.0, 12)


def positive(value: float, flag: str, *, allow_zero: bool = False) -> float:
    if value != value or value < 0 or (value == 0 and not allow_zero):
        need = "zero or more" if allow_zero else "greater than zero"
        raise UsageError(flag, f"must be {need}, got {value:g}")
    return value


def human_duration(seconds: float) -> str:
    if seconds >= 86400 and seconds % 86400 == 0:
        return f"{seconds / 86400:g}d"
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"{seconds / 3600:g}h"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g}m"
    return f"{seconds:g}s"
