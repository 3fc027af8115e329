"""The words of the drain (relplan/analyses/drain.py): why it has no figure.

The analysis names each sentence by a code (its `Said`) with its numbers and names; this table
words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable

from relplan.values import num


def no_terminal(missing: int, executions: int) -> str:
    return (
        f"the engine trace has no terminal event for {num(missing)} of"
        f" {num(executions)} executions and no finish line at all (it cannot"
        " see completions)"
    )


def not_drained(end: float, pre: float) -> str:
    return (
        f"not drained by the end of the data: backlog {num(end)} at the end"
        f" against {num(pre, 1)} before the overload"
    )


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        no_terminal,
        not_drained,
    )
}
