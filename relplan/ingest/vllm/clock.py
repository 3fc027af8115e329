"""The clock of a vLLM server log (relplan/ingest/vllm/log.py): vLLM's `MM-DD HH:MM:SS` has no
year and no zone, so it is taken as UTC in a year settled once per file (`year_of`):
  1. `--year`;
  2. the file itself: the first full date in its head (a container or `kubectl --timestamps`
     RFC 3339 prefix, `journalctl -o short-iso`, another logger's `[2025-08-21 07:17:09,753]`),
     or a `YYYY-MM-DD` in the file name;
  3. inferred from the file's modification time (the log's last line was written before it),
     with a note saying so.
A December -> January turn moves to the next year, once per turn and never backwards (a late
December line of another process after the turn keeps the old year). An RFC 3339 prefix on a
line, when present, is that line's time.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from relplan.ingest.outcome import say
from relplan.values import parse_rfc3339


class BadTime(ValueError):
    """A line whose date or time cannot be read (the line is refused)."""


@dataclass(frozen=True)
class Stamp:
    """The time fields of one log line."""

    ts: str | None  # an RFC 3339 prefix
    mon: str
    day: str
    hms: str
    frac: str | None


_FULL_DATE = re.compile(r"(?<!\d)((?:19|20)\d\d)-(\d\d)-(\d\d)[Tt _](\d\d):(\d\d):(\d\d)")
_NAME_DATE = re.compile(r"(?<!\d)((?:19|20)\d\d)-?(\d\d)-?(\d\d)(?!\d)")
_VLLM_DATE = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+(\d\d)-(\d\d)\s+\d\d:\d\d:\d\d")


# Where a log's year came from: --year, a full date in the file, the file name, the file's
# modification time, nowhere.
YearFrom = Literal["given", "file", "file_name", "mtime", "unknown"]


@dataclass(frozen=True)
class Year:
    year: int | None
    how: YearFrom
    seen: str = ""  # the date it was read from (the file's, its name's, the modification date)


def year_of(given: int | None, head: str, path: Path) -> Year:
    """The year of a log's first vLLM line (module docstring)."""
    if given is not None:
        return Year(given, "given")
    first = _VLLM_DATE.search(head)
    for line in head.splitlines():
        hdr = _VLLM_DATE.search(line)
        # a line's own prefix (before vLLM's header), never a prompt's text
        m = _FULL_DATE.search(line[: hdr.start() if hdr else 48])
        if m is None:
            continue
        y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if 1 <= mo <= 12 and 1 <= d <= 31:
            # A full date from another line: the vLLM lines before a New Year in the head
            # belong to the year before it.
            if first is not None and int(first.group(1)) == 12 and mo == 1:
                y -= 1
            return Year(y, "file", m.group(0)[:10])
    nm = _NAME_DATE.search(path.name)
    if nm is not None and 1 <= int(nm.group(2)) <= 12:
        return Year(int(nm.group(1)), "file_name", nm.group(0))
    try:
        mtime = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.timezone.utc)
    except OSError:
        return Year(None, "unknown")
    year = mtime.year
    if first is not None:
        mo, d = int(first.group(1)), int(first.group(2))
        try:
            start = dt.datetime(year, mo, d, tzinfo=dt.timezone.utc)
        except ValueError:
            start = None
        if start is not None and start > mtime + dt.timedelta(days=1):
            year -= 1  # the log began before a New Year the file was last written after
    return Year(year, "mtime", mtime.date().isoformat())


class Clock:
    """vLLM log time: a container RFC 3339 prefix, else MM-DD HH:MM:SS (UTC) in the year."""

    def __init__(self, year: int | None, how: YearFrom = "given", seen: str = "") -> None:
        self.year = year
        self.how: YearFrom = how
        self.seen = seen
        self.last_month: int | None = None
        self.rollovers = 0
        self.late_lines = 0  # December lines after a turn, kept in the old year
        self.last_key: tuple[int | None, int, int, str] | None = None
        self.last_t = 0.0
        self.used_year = False

    def time(self, s: Stamp) -> float:
        if s.ts:
            t = parse_rfc3339(s.ts.replace(" ", "T", 1).replace(",", "."))
            if t is None:
                raise BadTime(f"cannot read the timestamp prefix {s.ts!r}")
            return t
        if self.year is None:
            raise BadTime(
                "vLLM's timestamp has no year; pass --year YYYY, or use logs with a container"
                " RFC 3339 prefix (docker logs --timestamps, kubectl logs --timestamps)"
            )
        self.used_year = True
        month, day = int(s.mon), int(s.day)
        year = self.year
        if self.last_month is not None and month < self.last_month and self.last_month == 12:
            self.year += 1
            year = self.year
            self.rollovers += 1
            self.last_month = month
        elif (
            self.rollovers and self.last_month is not None and self.last_month <= 2 and month == 12
        ):
            year -= 1  # a late line of the old year: never move back
            self.late_lines += 1
        else:
            self.last_month = month
        key = (year, month, day, s.hms)
        if key != self.last_key:  # lines of one second share it: parse once
            self.last_key, self.last_t = key, self._seconds(year, month, day, s)
        return self.last_t + (float(s.frac.replace(",", ".")) if s.frac else 0.0)

    def _seconds(self, year: int, month: int, day: int, s: Stamp) -> float:
        hms = s.hms
        h, mi, sec = int(hms[:2]), int(hms[3:5]), int(hms[6:8])
        try:
            if h > 23 or mi > 59 or sec > 59:
                raise ValueError("time out of range")
            midnight = dt.datetime(year, month, day, tzinfo=dt.timezone.utc)
        except ValueError as exc:
            raise BadTime(
                f"cannot read the date {s.mon}-{s.day} {hms} in {year}: {exc}; expected"
                " vLLM's MM-DD HH:MM:SS"
            ) from exc
        return midnight.timestamp() + h * 3600 + mi * 60 + sec

    def notes(self) -> list[str]:
        out: list[str] = []
        if self.used_year and self.how != "given":
            out.append(say("year_read", year=self.year_start(), how=self.how, seen=self.seen))
        if self.rollovers:
            out.append(say("year_advanced", n=self.rollovers))
        if self.late_lines:
            out.append(say("late_december_lines", n=self.late_lines))
        return out

    def year_start(self) -> int | None:
        return None if self.year is None else self.year - self.rollovers
