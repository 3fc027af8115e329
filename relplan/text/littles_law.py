"""The words of Little's law (relplan/analyses/littles_law.py): the input it lacks and why
a figure is empty.

The analysis names each sentence by a code (its `Said`) with its numbers and names; this table
words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable


def no_gauge_samples(gauge: str) -> str:
    return f"no {gauge} samples cover this window"


def needs_trace_or(gauge: str) -> str:
    return f"Little's law needs an engine trace (lifecycle events) or the {gauge} metric"


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        no_gauge_samples,
        needs_trace_or,
    )
}
