"""Streaming evaluation: a rule's series split into shards that can be evaluated one batch at
a time, so memory follows the largest batch, not the fleet.

A rule can be sharded by a label X when no operation in it combines series with different
values of X: every aggregation keeps X (`by (..X..)`, or `without (...)` not naming it) and
every binary operation matches on X (`on (..X..)`, or `ignoring (...)` not naming it; the
default one-to-one matching on all labels does). Functions keep every label but the name.
Then the result series for X = x depend only on the input series whose X is x (a series
without X counts as X = "", as PromQL reads a missing label), and evaluating the shards
apart gives the same series, the same values and the same alert timelines as evaluating
them together. Every health rule shards by its replica label; the retry-amplification rule
by `envoy_cluster_name`.

Shards are packed into batches of at most `budget` samples (whole shards: a shard larger
than the budget is a batch of its own), in shard order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from relplan.alerts import promql_ast


def shard_label(expr: promql_ast.Expr) -> str | None:
    """The label `expr` can be sharded by (the first, sorted, of its `by` groupings that
    every operation keeps), or None when it must see all its series at once."""
    aggs = [n for n in promql_ast.subexpressions(expr) if isinstance(n, promql_ast.Aggregate)]
    by_sets = [set(a.grouping) for a in aggs if not a.without]
    if not by_sets:
        return None
    for label in sorted(set.intersection(*by_sets)):
        if _keeps(expr, label):
            return label
    return None


def _keeps(expr: promql_ast.Expr, label: str) -> bool:
    for node in promql_ast.subexpressions(expr):
        if isinstance(node, promql_ast.Aggregate):
            kept = label in node.grouping if not node.without else label not in node.grouping
            if not kept:
                return False
        if isinstance(node, promql_ast.Binary):
            m = node.matching
            if (m.on and label not in m.labels) or (not m.on and label in m.labels):
                return False
    return True


@dataclass(frozen=True)
class Shard:
    value: str  # the shard label's value ("" for series without the label)
    samples: int


def shards(values_and_counts: Iterable[tuple[str, int]]) -> list[Shard]:
    """Sample counts per shard value, in value order."""
    totals: dict[str, int] = {}
    for value, count in values_and_counts:
        totals[value] = totals.get(value, 0) + int(count)
    return [Shard(v, totals[v]) for v in sorted(totals)]


def batches(items: Sequence[Shard], budget: int | None) -> list[list[str]]:
    """Shard values packed into consecutive batches of at most `budget` samples each (None:
    one batch); a shard over the budget goes alone."""
    if budget is None:
        return [[s.value for s in items]] if items else []
    out: list[list[str]] = []
    current: list[str] = []
    size = 0
    for s in items:
        if current and size + s.samples > budget:
            out.append(current)
            current, size = [], 0
        current.append(s.value)
        size += s.samples
    if current:
        out.append(current)
    return out
