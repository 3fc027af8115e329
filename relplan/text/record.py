"""The lines `relplan record` prints when it stops (from relplan/record.py's `Recording`)."""

from __future__ import annotations

from pathlib import Path

from relplan.record import Recording


def _failed(rec: Recording) -> str:
    return f"; {rec.failed} failed scrape(s) skipped, last: {rec.last_error}" if rec.failed else ""


def interrupted(rec: Recording, out: Path) -> str:
    return f"relplan: interrupted; {rec.scrapes} complete scrape(s) kept in {out}{_failed(rec)}"


def recorded(rec: Recording) -> str:
    return f"relplan: recorded {rec.scrapes} scrape(s), {rec.bytes_written} bytes{_failed(rec)}"
