"""The words of the delivery analysis (relplan/analyses/delivery.py): why it judged no
recovery.

The analysis names each sentence by a code (its `Said`) with its numbers and names; this table
words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable


def untimed(untimed: str) -> str:
    return f"recovery is judged on the on-time share; {untimed}"


def overload_to_the_end(phase: str | None) -> str:
    return f"the overload phase {phase} ends at or after the end of the data"


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        untimed,
        overload_to_the_end,
    )
}
