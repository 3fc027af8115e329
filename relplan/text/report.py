"""How the report writes figures and sentences (the page's table cells and reasons); numbers
through relplan.values, the one number formatter."""

from __future__ import annotations

from collections.abc import Sequence

from relplan.values import clock, clock_span, clock_spans, fixed, num

ALL_REPLICAS = "all replicas"


def times(v: float | None) -> str:
    """A multiple of capacity: `2.40×`, or `–` when unknown."""
    return "–" if v is None else f"{fixed(v, 2)}×"


def cell_number(v: float | None, digits: int = 1) -> str:
    """A table cell's number: thousands separators, `–` when unknown."""
    return "–" if v is None else num(v, digits)


def count_times(count: int | None, x: float | None) -> str:
    if count is None:
        return "–"
    return f"{num(count)} ({times(x)})" if x is not None else num(count)


def phase_words(name: str, detected: bool) -> str:
    """A phase in a sentence: `the hold`; the detected `before` and `after` windows are
    `the time before the overload` and `the time after the overload` (never `the after`)."""
    if detected and name in ("before", "after"):
        return f"the time {name} the overload"
    return f"the {name}"


def clock_span_s(t0: float, start_s: float, end_s: float) -> str:
    """A stretch of the run as wall-clock times: `2025-11-30 00:05:00–00:07:30 UTC`."""
    return clock_span(t0 + start_s, t0 + end_s)


def span_column(t0: float, spans: list[tuple[float, float]]) -> tuple[str, list[str]]:
    """A table's span column: its header (`span (2025-11-30, UTC)`) and cells (`00:02:00–
    00:03:47`), the date said once when every row lies within one day."""
    if not spans:
        return "span", []
    head, cells = clock_spans([(t0 + a, t0 + b) for a, b in spans])
    return (f"span ({head})" if head else "span"), cells


def at_s(t0: float, s: float) -> str:
    """An instant of the run as a wall-clock time: `2025-11-30 00:05:00 UTC`."""
    return clock(t0 + s)


def sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith(".") else text + "."


def coincide_caption(names: Sequence[str]) -> str:
    """`“a” coincides with another line: drawn dashed on top of it.` (names from
    relplan.report.charts.coinciding), or nothing."""
    if not names:
        return ""
    listed = ", ".join(f"“{n}”" for n in names)
    verb = "coincides" if len(names) == 1 else "coincide"
    return f"{listed} {verb} with another line: drawn dashed on top of it."
