"""The raw series a PromQL expression selects from (promql_eval.py evaluates over them).

Times are integer milliseconds (int64(t * 1000), truncated, as Prometheus's OpenMetrics
parser does); a label set is a sorted tuple of (name, value) pairs, `__name__` included.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from relplan.alerts import promql_ast

Labels = tuple[tuple[str, str], ...]  # sorted by label name; includes __name__ for raw series
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def make_labels(name: str | None, labels: Mapping[str, str]) -> Labels:
    items = {k: v for k, v in labels.items() if v != "" and k != "__name__"}
    if name is not None:
        items["__name__"] = name
    return tuple(sorted(items.items()))


def drop_name(labels: Labels) -> Labels:
    return tuple(kv for kv in labels if kv[0] != "__name__")


@dataclass
class Series:
    """One stored series: sample times in ms (strictly increasing) and values."""

    t: IntArray
    v: FloatArray


class SeriesStore:
    """The raw series an expression selects from, keyed by label set (with __name__)."""

    def __init__(self) -> None:
        self.series: dict[Labels, Series] = {}

    def add(self, labels: Labels, t_ms: Iterable[int], values: Iterable[float]) -> None:
        t = np.asarray(list(t_ms), dtype=np.int64)
        v = np.asarray(list(values), dtype=np.float64)
        self.add_arrays(labels, t, v)

    def add_arrays(self, labels: Labels, t: IntArray, v: FloatArray) -> None:
        """Add samples (any order; the first of two at the same millisecond is kept)."""
        order = np.argsort(t, kind="stable")
        t, v = t[order], v[order]
        if len(t) > 1:
            keep = np.concatenate(([True], np.diff(t) != 0))
            t, v = t[keep], v[keep]
        if labels in self.series:
            old = self.series[labels]
            self.add_merged(labels, old, t, v)
            return
        self.series[labels] = Series(t, v)

    def add_merged(self, labels: Labels, old: Series, t: IntArray, v: FloatArray) -> None:
        tt = np.concatenate((old.t, t))
        vv = np.concatenate((old.v, v))
        order = np.argsort(tt, kind="stable")
        tt, vv = tt[order], vv[order]
        keep = np.concatenate(([True], np.diff(tt) != 0)) if len(tt) > 1 else np.ones(1, bool)
        self.series[labels] = Series(tt[keep], vv[keep])

    def select(self, matchers: tuple[promql_ast.Matcher, ...]) -> list[tuple[Labels, Series]]:
        compiled = [(m, re.compile(m.value) if m.op in ("=~", "!~") else None) for m in matchers]
        out = []
        for labels in sorted(self.series):
            if not len(self.series[labels].t):
                continue
            d = dict(labels)
            if all(_matches(m, rx, d.get(m.label, "")) for m, rx in compiled):
                out.append((labels, self.series[labels]))
        return out


def select_one(matchers: tuple[promql_ast.Matcher, ...], labels: Labels) -> bool:
    d = dict(labels)
    return all(
        _matches(m, re.compile(m.value) if m.op in ("=~", "!~") else None, d.get(m.label, ""))
        for m in matchers
    )


def _matches(m: promql_ast.Matcher, rx: re.Pattern[str] | None, value: str) -> bool:
    if m.op == "=":
        return value == m.value
    if m.op == "!=":
        return value != m.value
    assert rx is not None
    full = rx.fullmatch(value) is not None
    return full if m.op == "=~" else not full
