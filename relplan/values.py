"""Values as people type and read them: durations, times, numbers, SLOs and the missing glyph.

One module parses every kind of value that crosses the boundary (flags, input files) and formats
every value for people, so that `--from`, `--deadline` and a timestamp in a log all follow the
same rules. Inside relplan an unknown value is `None`; it is shown as `MISSING`.

The syntax every flag accepts (docs/cli.md repeats it at the top):

- A duration (`--deadline`, `--delivery-window`, `--window`, `--step`, `--bin`): a number with
  an optional unit, `s` (the default), `m`, `h`, `d` or `w`: `90`, `90s`, `2m`, `1.5h`, `30d`,
  `4w`. It must be longer than zero. A bare number is always seconds.
- A time (`--from`, `--to`): RFC 3339 with an offset (`2025-11-30T00:01:00Z`,
  `2025-11-30T01:01:00+01:00`), epoch seconds (`1764460860`), or seconds from the start of the
  data (t0): a number up to 1e8 (`120`, `-30`) or a duration (`2m`). A number above 1e8 is
  epoch seconds (a date after 1973), so `--from 120` is two minutes into the run, never 1970.
  The command resolves a relative time against its data's t0 (`resolve_time`). An absolute
  time must fall between 1973-03-03 and 2100-01-01, in options (`--from`, `--to`, `--start`,
  `--end`, `--at`) and in input files (Kubernetes events, file-name times) alike: outside it
  is a unit mistake (milliseconds given as seconds land after the year 50,000; the error says
  which unit fits) or a placeholder (Go's zero time, year 1, reads as no time), never data.
- An SLO: a percentage in (0, 100) (`99.9`) or a fraction in (0, 1) (`0.999`).
- A time zone (`--tz`): an IANA name (`UTC`, the default, `Europe/Berlin`, `America/New_York`).

Times for people are wall-clock times with the date, as Grafana shows them
(`2025-11-30 00:01:00 UTC`), in the zone `use_tz` sets for the command (UTC unless `--tz`);
seconds from t0 appear only where a duration is meant.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from relplan.errors import UsageError

MISSING = "-"

# A time on the command line larger than this (in absolute value) is epoch seconds; up to it,
# seconds from the start of the data. 1e8 s is about 3.2 years, and epoch 1e8 is 1973-03-03.
ABSOLUTE_TIME_THRESHOLD = 1e8
# The wall-clock times relplan accepts, in input files and options alike: after epoch 1e8
# (1973-03-03) and before 2100-01-01. A time outside is a unit mistake (milliseconds read as
# seconds land after the year 50,000) or a placeholder (Go's zero time, year 1), never data.
LATEST_TIME = 4102444800.0  # 2100-01-01T00:00:00Z
TIME_RANGE = "between 1973-03-03 and 2100-01-01"
# Epoch time in each unit, per second; the names errors use for them.
_UNITS_OF_TIME = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}
_UNIT_NAMES = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-zA-Z]*)\s*$")
DURATION_SYNTAX = "a duration like 90, 90s, 2m, 1.5h or 30d"
TIME_SYNTAX = (
    "seconds from t0 (120, 2m), epoch seconds or an RFC 3339 time with an offset"
    " (2025-11-30T00:01:00Z)"
)


def parse_duration(text: str, flag: str) -> float:
    """`90`, `90s`, `2m`, `1.5h`, `30d`, `4w` -> seconds (a bare number is seconds).

    Raises UsageError naming `flag` for anything else, and for zero.
    """
    seconds = _duration_seconds(text, flag)
    if seconds <= 0:
        raise UsageError(flag, f"must be longer than zero, got {text!r}")
    return seconds


def _duration_seconds(text: str, flag: str) -> float:
    m = _DURATION.match(text)
    if not m:
        raise UsageError(flag, f"expected {DURATION_SYNTAX}, got {text!r}")
    unit = m.group(2).lower() or "s"
    if unit not in _UNITS:
        raise UsageError(
            flag, f"unknown unit {m.group(2)!r} in {text!r}; use s, m, h, d or w (e.g. 30d)"
        )
    return float(m.group(1)) * _UNITS[unit]


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
    """`--from/--to`: seconds from t0 (a number up to 1e8, or a duration like `2m`), epoch
    seconds (a number above 1e8) or RFC 3339 with an offset (returned as epoch seconds).

    The result follows the one rule of `resolve_time`: up to 1e8 in absolute value it is
    relative to t0, above it absolute. Raises UsageError naming `flag` otherwise.
    """
    s = text.strip()
    if _NUMBER.match(s):
        value = float(s)
        if math.isfinite(value):
            if not is_relative(value) and (why := implausible_time(value)) is not None:
                raise UsageError(flag, f"{text!r}: {why}")
            return value
    elif _DURATION.match(s):
        seconds = _duration_seconds(s, flag)
        if seconds > ABSOLUTE_TIME_THRESHOLD:
            raise UsageError(flag, f"{text!r} is more than 1e8 s after t0; give an absolute time")
        return seconds
    else:
        epoch = parse_rfc3339(s)
        if epoch is not None:
            if epoch <= ABSOLUTE_TIME_THRESHOLD:
                raise UsageError(flag, f"times before 1973-03-03 are not supported, got {text!r}")
            if epoch >= LATEST_TIME:
                raise UsageError(flag, f"times from 2100-01-01 on are not supported, got {text!r}")
            return epoch
    raise UsageError(flag, f"expected {TIME_SYNTAX}, got {text!r}")


def _in_range(epoch: float) -> bool:
    return ABSOLUTE_TIME_THRESHOLD < epoch < LATEST_TIME


def _unit_that_fits(value: float, unit: str) -> tuple[str, dt.date] | None:
    """Another unit (its name, and the date `value` is in it) under which `value`, written
    as epoch time in `unit`, falls in TIME_RANGE; None when no other unit does."""
    for name, scale in _UNITS_OF_TIME.items():
        if name != unit and _in_range(value / scale):
            when = dt.datetime.fromtimestamp(value / scale, dt.timezone.utc).date()
            return _UNIT_NAMES[name], when
    return None


def implausible_time(epoch: float, *, dated: bool = False) -> str | None:
    """Why an absolute time (epoch seconds) cannot be a real one, or None when it can be:
    outside TIME_RANGE, naming the finer unit it reads as when one fits. `dated`: the time
    was written as a date (RFC 3339), which has no unit to mistake, so none is suggested
    (9999-12-31 is not 1978 in milliseconds)."""
    if _in_range(epoch):
        return None
    if dated:
        when = dt.datetime.fromtimestamp(epoch, dt.timezone.utc).date()
        return f"{when} is not {TIME_RANGE}"
    fits = _unit_that_fits(epoch, "s")
    if fits is not None:
        return f"{epoch:.15g} s is not {TIME_RANGE}; as {fits[0]} it is {fits[1]}: give seconds"
    return f"{epoch:.15g} s (epoch seconds) is not {TIME_RANGE}"


def misread_unit(value: float, unit: str) -> str | None:
    """Why `value`, documented as epoch time in `unit` (s, ms, us, ns), cannot be a real
    time, or None when it can: outside TIME_RANGE, naming the unit it reads as when one fits
    (an OTLP start in milliseconds, where nanoseconds are expected, reads as 1970)."""
    if _in_range(value / _UNITS_OF_TIME[unit]):
        return None
    said = f"{value:.15g} is not {TIME_RANGE} as epoch {_UNIT_NAMES[unit]}"
    fits = _unit_that_fits(value, unit)
    return said if fits is None else f"{said}; as {fits[0]} it is {fits[1]}"


def parse_instant(text: str, flag: str) -> float:
    """An absolute time (epoch seconds above 1e8 or RFC 3339) where there is no data yet to
    count from, such as a live pull's `--start/--end`."""
    value = parse_time_flag(text, flag)
    if is_relative(value):
        raise UsageError(
            flag,
            f"expected epoch seconds or an RFC 3339 time with an offset, got {text!r}"
            " (there is no data yet to count seconds from)",
        )
    return value


def is_relative(value: float) -> bool:
    """Whether a parsed command-line time is seconds from t0 (not epoch seconds)."""
    return abs(value) <= ABSOLUTE_TIME_THRESHOLD


def resolve_time(value: float, t0: float) -> float:
    """Epoch seconds of a parsed command-line time, given the data's t0."""
    return t0 + value if is_relative(value) else value


# One `--phases` entry: name, start, end (each relative to t0 or epoch, see resolve_time).
PhaseBounds = tuple[str, float, float]


def parse_phases(text: str) -> list[PhaseBounds]:
    """`--phases base=0:120,pulse=120:227` -> [(name, start, end)], parsed once, where the
    flag is read; each bound is a raw number, seconds from t0 or epoch seconds (resolve_time)."""
    out: list[PhaseBounds] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, eq, span = part.partition("=")
        start, colon, end = span.partition(":")
        try:
            a, b = float(start), float(end)
        except ValueError:
            a = b = float("nan")
        if not eq or not colon or not name.strip() or math.isnan(a) or math.isnan(b):
            raise UsageError(
                "--phases", f"expected NAME=START:END[,NAME=START:END...], got {part!r}"
            )
        if b <= a:
            raise UsageError(
                "--phases", f"phase {name.strip()!r}: end {b:g} must be after start {a:g}"
            )
        out.append((name.strip(), a, b))
    if not out:
        raise UsageError("--phases", "expected at least one NAME=START:END")
    names = [n for n, _, _ in out]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UsageError("--phases", f"phase names must be unique, repeated: {', '.join(dup)}")
    return out


def sig_grouped(value: float | None, digits: int) -> str:
    """`digits` significant digits with thousands separators: `sig_grouped(1234.5, 4)` is
    `1,234` (`sig` writes `1234`)."""
    return MISSING if value is None else f"{value:,.{digits}g}"


def num(value: float | None, digits: int = 0) -> str:
    """Thousands separators; `-` for a missing value."""
    if value is None:
        return MISSING
    return f"{value:,.{digits}f}"


def pct(value: float | None, digits: int = 1) -> str:
    """`12.3 %`; a value that rounds to zero is `0.0 %`, never `-0.0 %`."""
    if value is None:
        return MISSING
    text = f"{value * 100:.{digits}f}"
    if text.startswith("-") and float(text) == 0:
        text = text[1:]
    return f"{text} %"


# The one number formatter: every number shown to a person goes through `num`, `pct` above or
# one of these (tests/test_text_room.py fails on a format spec anywhere else). Each names a
# style, so a change of how numbers look is made here, once.


def short(value: float | None) -> str:
    """The shortest exact-looking form, up to 6 significant digits: `2`, `0.25`, `1e+06`."""
    return MISSING if value is None else f"{value:g}"


def sig(value: float | None, digits: int) -> str:
    """`digits` significant digits, no separators: `sig(1234.5, 3)` is `1.23e+03`."""
    return MISSING if value is None else f"{value:.{digits}g}"


def fixed(value: float | None, digits: int) -> str:
    """`digits` decimals, no thousands separators: `fixed(0.25, 3)` is `0.250`."""
    return MISSING if value is None else f"{value:.{digits}f}"


def percent(value: float | None, digits: int = 0) -> str:
    """A fraction as a percentage with no space: `percent(0.1)` is `10%` (`pct`: `10.0 %`)."""
    return MISSING if value is None else f"{value:.{digits}%}"


def signed(value: float, digits: int | None = None, *, sig_digits: int | None = None) -> str:
    """With its sign always shown: `+3`, `+1.5` (`digits` decimals), `+0.0123` (`sig_digits`)."""
    if sig_digits is not None:
        return f"{value:+.{sig_digits}g}"
    if digits is None:
        return f"{int(value):+d}"
    return f"{value:+.{digits}f}"


# --- wall-clock time for people ------------------------------------------------------------

UTC_NAME = "UTC"
_DISPLAY_TZ: ContextVar[str] = ContextVar("relplan_display_tz", default=UTC_NAME)


def parse_tz(name: str, flag: str = "--tz") -> str:
    """An IANA time zone name (`UTC`, `Europe/Berlin`), checked against zoneinfo's database."""
    text = name.strip()
    if text.upper() in ("UTC", "Z"):
        return UTC_NAME
    try:
        ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise UsageError(
            flag, f"unknown time zone {name!r}; give an IANA name such as UTC or Europe/Berlin"
        ) from exc
    return text


@contextmanager
def use_tz(name: str) -> Iterator[str]:
    """Show wall-clock times in zone `name` (an IANA name) inside the block."""
    token = _DISPLAY_TZ.set(parse_tz(name))
    try:
        yield _DISPLAY_TZ.get()
    finally:
        _DISPLAY_TZ.reset(token)


def display_tz() -> str:
    """The zone wall-clock times are shown in: UTC unless a command's `--tz` said otherwise."""
    return _DISPLAY_TZ.get()


def _local(epoch: float, tz: str | None) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch, ZoneInfo(tz or display_tz()))


def _zone_label(moment: dt.datetime, tz: str) -> str:
    return UTC_NAME if tz == UTC_NAME else (moment.tzname() or tz)


def tz_offset_s(epoch: float, tz: str | None = None) -> float:
    """The zone's offset from UTC at `epoch`, in seconds (0 for UTC)."""
    offset = _local(epoch, tz).utcoffset()
    return 0.0 if offset is None else offset.total_seconds()


def _hms(moment: dt.datetime, frac: bool) -> str:
    text = moment.strftime("%H:%M:%S")
    return text + f".{moment.microsecond // 1000:03d}" if frac else text


def clock(epoch: float | None, tz: str | None = None, *, frac: bool = False) -> str:
    """`2025-11-30 00:01:00 UTC`: the date, the time to the second (to the millisecond with
    `frac`) and the zone; `-` for a missing time."""
    if epoch is None:
        return MISSING
    zone = tz or display_tz()
    moment = _local(epoch, zone)
    return f"{moment:%Y-%m-%d} {_hms(moment, frac)} {_zone_label(moment, zone)}"


def clock_span(start: float, end: float, tz: str | None = None) -> str:
    """`2025-11-30 00:01:00–00:03:00 UTC` (the date once when both ends share it)."""
    zone = tz or display_tz()
    a, b = _local(start, zone), _local(end, zone)
    right = _hms(b, False) if a.date() == b.date() else f"{b:%Y-%m-%d} {_hms(b, False)}"
    return f"{a:%Y-%m-%d} {_hms(a, False)}–{right} {_zone_label(b, zone)}"


def clock_spans(spans: list[tuple[float, float]], tz: str | None = None) -> tuple[str, list[str]]:
    """A table column of stretches: (the date and zone for its header, one cell per stretch).

    When every stretch lies within one day the header carries the date once
    (`2025-11-30, UTC`) and the cells only the times (`00:02:00–00:03:47`); otherwise the
    header is empty and each cell is a whole `clock_span`."""
    zone = tz or display_tz()
    moments = [(_local(a, zone), _local(b, zone)) for a, b in spans]
    dates = {m.date() for pair in moments for m in pair}
    if len(dates) != 1:
        return "", [clock_span(a, b, zone) for a, b in spans]
    first = moments[0][0]
    head = f"{first:%Y-%m-%d}, {_zone_label(first, zone)}"
    return head, [f"{_hms(a, False)}–{_hms(b, False)}" for a, b in moments]


def iso_utc(epoch: float | None) -> str | None:
    """RFC 3339 in UTC with milliseconds (`2025-11-30T00:01:00.000Z`), for JSON."""
    if epoch is None:
        return None
    moment = dt.datetime.fromtimestamp(epoch, dt.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def clock_span_list(spans: list[tuple[float, float]], tz: str | None = None) -> str:
    """Stretches in a sentence: `2025-11-30 00:05:45–00:06:30, 00:07:30–00:08:30 UTC` (the
    date and zone once when every stretch lies within one day), `-` for none."""
    if not spans:
        return MISSING
    zone = tz or display_tz()
    head, cells = clock_spans(spans, zone)
    if not head:
        return ", ".join(cells)
    first = _local(spans[0][0], zone)
    return f"{first:%Y-%m-%d} {', '.join(cells)} {_zone_label(first, zone)}"


def plural(n: float, noun: str, many: str | None = None) -> str:
    """`1 lifecycle event`, `2 lifecycle events`, `1,200 retries` (`many` for irregular
    plurals: `plural(n, "retry", "retries")`); thousands separators."""
    word = noun if n == 1 else (many or noun + "s")
    text = f"{n:,}" if isinstance(n, int) or float(n).is_integer() else f"{n:,.2f}"
    return f"{text.removesuffix('.0')} {word}"
