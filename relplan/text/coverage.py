"""The words of the data window (relplan/analyses/coverage.py): why a source carries no load,
and how the window was drawn from the sources' spans.

The analysis names each sentence by a code (`coverage.Said`) with its numbers and labels; this
table words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable

from relplan.values import num, short, sig


def _names(labels: list[str]) -> str:
    return labels[0] if len(labels) == 1 else ", ".join(labels[:-1]) + " and " + labels[-1]


def isolated_events(lines: int) -> str:
    return (
        f"{num(lines)} event line{'s' if lines > 1 else ''} at one instant: an isolated line"
        " carries no load data"
    )


def only_source(label: str) -> str:
    return f"the window is the span of {label}, the only source with load data"


def overlap(labels: list[str], first: str, last: str) -> str:
    return (
        f"the window is where {_names(labels)} overlap: it starts with {first} and ends with {last}"
    )


def adjacent(labels: list[str], gap: float, tolerance: float, first: str, last: str) -> str:
    return (
        f"{_names(labels)} are adjacent ({sig(gap, 3)} s apart, within the"
        f" {short(tolerance)} s tolerance): the window runs from {first}'s start to"
        f" {last}'s end"
    )


def disjoint(labels: list[str], gap: float, tolerance: float, main: str, others: list[str]) -> str:
    return (
        f"{_names(labels)} are {num(gap)} s apart (more than the {short(tolerance)} s"
        f" tolerance): the window is the span of {main}, the source with the most"
        f" timestamps; {_names(others)} lie outside it (different clocks or periods)"
    )


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (isolated_events, only_source, overlap, adjacent, disjoint)
}
