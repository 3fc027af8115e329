"""The words of the counter divergence (relplan/analyses/counters.py): the input it lacks
and why a figure is empty.

The analysis names each sentence by a code (its `Said`) with its numbers and names; this table
words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable


def no_execution(replica: str) -> str:
    return f"no engine execution on replica {replica}"


def needs_metrics(lacking: list[str]) -> str:
    return f"counter divergence needs the metrics {' and '.join(lacking)}"


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        no_execution,
        needs_metrics,
    )
}
