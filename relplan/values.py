"""Values as people type and read them: durations, times, numbers, SLOs and the missing glyph.

One module parses every kind of value that crosses the boundary (flags, input files) and formats
every value for people, so that `--from`, `--deadline` and a timestamp in a log all follow the
same rules. Inside relplan an unknown value is `None`; it is shown as `MISSING`.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from datetime import datetime

from relplan.errors import UsageError

MISSING = "-"

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


_RFC3339 = re.compile(r"^(\d{4}-\d\d-\d\d)[Tt ](\d\d:\d\d:\d\d)(\.\d+)?\s*([zZ]|[+-]\d\d:?\d\d)$")
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def parse_rfc3339(text: str) -> float | None:
    m = _RFC3339.match(text.strip())
    if not m:
        return None
    date, hms, frac, off = m.groups()
    frac = (frac or ".0")[:7]  # datetime keeps microseconds
    off = "+00:00" if off in ("Z", "z") else (off if ":" in off else off[:3] + ":" + off[3:])
    try:
        return dt.datetime.fromisoformat(f"{date}T{hms}{frac}{off}").timestamp()
    except ValueError:
        return None


def parse_time(text: str) -> float | None:
    """Epoch seconds from a number or an RFC 3339 string with an offset; None otherwise."""
    s = text.strip()
    if _NUMBER.match(s):
        v = float(s)
        return v if math.isfinite(v) else None
    return parse_rfc3339(s)


def parse_number(text: str) -> float | None:
    """A decimal number, or Prometheus' NaN/+Inf/-Inf; None otherwise."""
    s = text.strip()
    if _NUMBER.match(s):
        return float(s)
    if s in ("NaN", "nan"):
        return math.nan
    if s in ("+Inf", "Inf", "inf", "+inf"):
        return math.inf
    if s in ("-Inf", "-inf"):
        return -math.inf
    return None


def parse_time_flag(text: str, flag: str) -> float:
    """`--from/--to`: a number (seconds from t0, or epoch seconds when > 1e8) or RFC 3339
    with an offset (returned as epoch seconds)."""
    try:
        return float(text)
    except ValueError:
        pass
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        when = None
    if when is None or when.tzinfo is None:
        raise UsageError(
            flag,
            "expected seconds from t0, epoch seconds or an RFC 3339 time with an offset,"
            f" got {text!r}",
        )
    return when.timestamp()


def num(value: float | None, digits: int = 0) -> str:
    """Thousands separators; `-` for a missing value."""
    if value is None:
        return MISSING
    return f"{value:,.{digits}f}"


def pct(value: float | None, digits: int = 1) -> str:
    if value is None:
        return MISSING
    return f"{value * 100:.{digits}f} %"
