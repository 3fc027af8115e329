"""The words of the run context (relplan/analyses/context.py): its notes on the window and
on sources that do not overlap in time.

The analysis names each sentence by a code (its `Said`) with its numbers and names; this table
words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable

from relplan.values import fixed, short


def adjacent_samples(tolerance: float) -> str:
    return (
        "every proxy/engine record lies at one instant: the window includes the"
        f" adjacent metric samples (within {short(tolerance)} s)"
    )


def no_overlap(
    first: str,
    first_span: tuple[float, float],
    second: str,
    second_span: tuple[float, float],
    tolerance: float,
) -> str:
    (a0, a1), (b0, b1) = first_span, second_span
    return (
        f"the {first} ({fixed(a0, 3)}..{fixed(a1, 3)}) and the {second}"
        f" ({fixed(b0, 3)}..{fixed(b1, 3)}) do not overlap in time (more than"
        f" {short(tolerance)} s apart): different clocks or files from different periods;"
        " figures joining them will be empty"
    )


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        adjacent_samples,
        no_overlap,
    )
}
