"""The words of the stuck-replica episodes (relplan/analyses/stuck.py): the input they lack
and why a field is empty.

The analysis names each sentence by a code (its `Said`) with its numbers and names; this table
words it (relplan/analyses/wording.py). Numbers go through relplan.values.
"""

from __future__ import annotations

from collections.abc import Callable


def needs_metrics(first: str, second: str) -> str:
    return (
        f"stuck-replica episodes need the metrics {first} and {second},"
        " or an engine trace with step records"
    )


def no_node_label(labels: list[str], series: str) -> str:
    return f"no {', '.join(labels)} label on the replica's {series} series"


def gateway_names_differ(replica: str) -> str:
    return (
        f"no proxy attempt names replica {replica}: the gateway names replicas"
        " differently from the metrics' replica label"
    )


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        needs_metrics,
        no_node_label,
        gateway_names_differ,
    )
}
