"""The words of the capacity calibration (relplan/analyses/capacity.py): the input it
lacks.

The analysis names each sentence by a code (its `Said`) with its numbers and names; this table
words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable


def needs_trace_or(gauge: str) -> str:
    return f"capacity calibration needs an engine trace or the {gauge} metric"


SENTENCES: dict[str, Callable[..., str]] = {f.__name__: f for f in (needs_trace_or,)}
