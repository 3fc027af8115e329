"""How the report writes figures and sentences (the page's table cells and reasons)."""

from __future__ import annotations

ALL_REPLICAS = "all replicas"


def times(v: float | None) -> str:
    """A multiple of capacity: `2.40×`, or `–` when unknown."""
    return "–" if v is None else f"{v:.2f}×"


def fixed(v: float | None, digits: int = 1) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def count_times(count: int | None, x: float | None) -> str:
    if count is None:
        return "–"
    return f"{count:,} ({times(x)})" if x is not None else f"{count:,}"


def span(start_s: float, end_s: float) -> str:
    return f"{start_s:,.0f}–{end_s:,.0f} s"


def sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith(".") else text + "."
