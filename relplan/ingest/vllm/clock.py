"""The clock of a vLLM server log (relplan/ingest/vllm/log.py): vLLM's `MM-DD HH:MM:SS` has no
year and no zone, so it is taken as UTC in `--year`, moving to the next year at a December ->
January turn; a container runtime's RFC 3339 prefix, when present, is used instead."""

from __future__ import annotations

import datetime as dt
import re

from relplan.errors import InputError
from relplan.values import parse_rfc3339


class BadTime(ValueError):
    """A line whose date or time cannot be read (the line is refused)."""


class Clock:
    """vLLM log time: a container RFC 3339 prefix, else MM-DD HH:MM:SS (UTC) in --year."""

    def __init__(self, year: int | None) -> None:
        self.year = year
        self.last_month: int | None = None
        self.rollovers = 0
        self.last_key: tuple[int | None, int, int, str] | None = None
        self.last_t = 0.0

    def time(self, m: re.Match[str], path: str, n: int) -> float:
        if m.group("ts"):
            t = parse_rfc3339(m.group("ts"))
            if t is None:
                raise BadTime(f"cannot read the timestamp prefix {m.group('ts')!r}")
            return t
        if self.year is None:
            raise InputError(
                "vLLM's timestamp has no year; pass --year YYYY, or use logs with a container"
                " RFC 3339 prefix (docker logs --timestamps, kubectl logs --timestamps)",
                path,
                n,
            )
        month, day = int(m.group("mon")), int(m.group("day"))
        if self.last_month is not None and month < self.last_month and self.last_month == 12:
            self.year += 1
            self.rollovers += 1
        self.last_month = month
        frac = m.group("frac")
        hms = m.group("hms")
        key = (self.year, month, day, hms)
        if key != self.last_key:  # lines of one second share it: parse once
            self.last_key, self.last_t = key, self._seconds(month, day, hms, m)
        return self.last_t + (float(frac.replace(",", ".")) if frac else 0.0)

    def _seconds(self, month: int, day: int, hms: str, m: re.Match[str]) -> float:
        h, mi, sec = int(hms[:2]), int(hms[3:5]), int(hms[6:8])
        try:
            if h > 23 or mi > 59 or sec > 59:
                raise ValueError("time out of range")
            midnight = dt.datetime(self.year or 0, month, day, tzinfo=dt.timezone.utc)
        except ValueError as exc:
            raise BadTime(
                f"cannot read the date {m.group('mon')}-{m.group('day')} {hms}"
                f" in {self.year}: {exc}; expected vLLM's MM-DD HH:MM:SS"
            ) from exc
        return midnight.timestamp() + h * 3600 + mi * 60 + sec
