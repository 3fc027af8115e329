"""Times in inputs: epoch seconds (a number) or RFC 3339 with an offset -> UTC epoch seconds."""

from __future__ import annotations

import datetime as dt
import math
import re

_RFC3339 = re.compile(
    r"^(\d{4}-\d\d-\d\d)[Tt ](\d\d:\d\d:\d\d)(\.\d+)?\s*([zZ]|[+-]\d\d:?\d\d)$"
)
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
