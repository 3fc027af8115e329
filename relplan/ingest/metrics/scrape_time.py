"""When a timestamp-less `/metrics` scrape was taken: from its file name, else `--at`.

Naming rule (docs/formats.md): the file name holds one time with an explicit zone, as
    metrics-2025-11-30T00:00:05Z.prom     RFC 3339
    metrics-2025-11-30T00-00-05Z.prom     the same with '-' for ':' (date -u +%Y-%m-%dT%H-%M-%SZ)
    metrics-20251130T000005Z.prom         ISO 8601 basic
    metrics-1764460805.prom               epoch seconds (10 digits, optional fraction)
    metrics-1764460805123.prom            epoch milliseconds (13 digits)
A time without a zone (`2025-11-30T00-00-05`) is not taken: relplan never guesses a zone.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from relplan.errors import UsageError
from relplan.ingest.files import LineError
from relplan.values import implausible_time, parse_number, parse_time

_EXTENDED = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt_](\d\d)[:-](\d\d)[:-](\d\d)(?:[.,](\d+))?([zZ]|[+-]\d\d(?::?\d\d)?)"
)
_BASIC = re.compile(r"(\d{4})(\d\d)(\d\d)[Tt](\d\d)(\d\d)(\d\d)(?:[.,](\d+))?([zZ]|[+-]\d{4})")
_EPOCH = re.compile(r"(?<![\d.])(\d{13}|\d{10}(?:\.\d+)?)(?![\d])")


def _iso(m: re.Match[str]) -> float | None:
    y, mo, d, h, mi, s, frac, zone = m.groups()
    try:
        if zone in ("Z", "z"):
            tz = dt.timezone.utc
        else:  # an offset of 24 h or more (`+99:99`) is no offset: ValueError
            digits = zone[1:].replace(":", "")
            minutes = int(digits[:2]) * 60 + (int(digits[2:4]) if len(digits) > 2 else 0)
            tz = dt.timezone(dt.timedelta(minutes=minutes if zone[0] == "+" else -minutes))
        stamp = dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), tzinfo=tz)
        t = stamp.timestamp() + (float("0." + frac) if frac else 0.0)
    except (ValueError, OverflowError):
        return None
    return t if implausible_time(t) is None else None


def time_from_name(path: Path) -> tuple[float, str] | None:
    """(epoch seconds, the text it came from) when the file name carries a time."""
    name = path.name
    for rx in (_EXTENDED, _BASIC):
        m = rx.search(name)
        if m:
            t = _iso(m)
            if t is not None:
                return t, m.group(0)
    m = _EPOCH.search(name)
    if m:
        text = m.group(1)
        value = float(text)
        t = value / 1000.0 if len(text) == 13 else value
        if implausible_time(t) is None:
            return t, text
    return None


def unread_name_time(path: Path) -> LineError | None:
    """Why a time-like part of the file name was not taken (an offset of 24 h or more, a
    time outside 1973-2100), for the error that asks for --at; None when there is none."""
    name = path.name
    for rx in (_EXTENDED, _BASIC):
        m = rx.search(name)
        if m and _iso(m) is None:
            return LineError(
                f"the time in the file name ({m.group(0)}) is not a real time (an offset of"
                " 24 h or more, or outside 1973-03-03..2100-01-01), so it was not taken"
            )
    return None


def parse_at(text: str) -> float:
    """`--at TIME` for IngestOptions(at=...): epoch seconds or RFC 3339 with an offset."""
    t = parse_time(text)
    if t is None:
        raise UsageError(
            "--at",
            f"cannot read {text[:60]!r} as a time; expected RFC 3339 with an offset"
            " (2025-11-30T00:00:05Z) or epoch seconds",
        )
    why = implausible_time(t, dated=parse_number(text) is None)
    if why is not None:
        raise UsageError("--at", f"{text[:60]!r}: {why}")
    return t
