"""Offline evaluation of the PromQL subset (promql_parser.py) with Prometheus 2.42's semantics.

An expression is evaluated at every time of a fixed step grid at once: an instant vector is
a map from label set to a (values, present) pair of arrays over the grid, so each operator
is a handful of numpy operations rather than a loop over evaluation times.

Semantics, as in Prometheus 2.42's engine (promql/engine.go, promql/functions.go):
- Times are integer milliseconds: a stored time t (epoch seconds) becomes int64(t * 1000),
  truncated, as Prometheus's OpenMetrics parser does.
- An instant selector at time ts takes the latest sample with t <= ts, if t >= ts - 5m
  (the lookback delta; both ends inclusive).
- A range selector `x[r]` at ts takes the samples with ts - r <= t <= ts (closed at both
  ends in 2.42; 3.0 made the start open).
- `rate`/`increase`/`delta` follow extrapolatedRate: at least two samples; the rise is
  last - first plus, for counters, the value before every drop (a reset); the sampled
  interval is extrapolated to each window edge when the edge is closer than 1.1 x the
  average sample spacing (else by half a spacing), and for counters never past the point
  where the counter would have been zero. `rate` divides by the range in seconds.
- `deriv` is the least-squares slope over the window's samples (at least two), with x in
  seconds from the window's first sample and Kahan-compensated sums, exactly 0 when every
  value is equal; `max_over_time`/`min_over_time` skip NaN unless every value is NaN.
- Functions and arithmetic drop `__name__`; comparison filters keep the left operand's
  sample (and name); `bool` comparisons give 0/1 and drop the name.
- Binary vector operations match one-to-one on all labels but `__name__`, or on/ignoring
  the listed labels; `and`/`or`/`unless` are set operations on the same signatures.
- `sum`/`max`/`min`/`count` by/without aggregate the samples present at each step, summing
  in label order.
Staleness markers cannot be told apart from NaN once samples are in the workspace, so a NaN
sample is an ordinary value here. Two samples of one series at the same millisecond: the
first one stored is kept (Prometheus refuses the second).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from relplan.alerts import promql_ast, promql_parser
from relplan.alerts.promql_range import deriv, extrapolated_rate, extreme_over_time
from relplan.alerts.promql_series import (
    BoolArray,
    FloatArray,
    IntArray,
    Labels,
    SeriesStore,
    drop_name,
    select_one,
)
from relplan.errors import QueryError

LOOKBACK_DELTA_MS = 5 * 60_000


@dataclass
class Vec:
    """An instant vector over the grid: per label set, values and presence per step."""

    items: dict[Labels, tuple[FloatArray, BoolArray]]


Value = Vec | FloatArray  # a scalar is a float array over the grid


class Evaluator:
    """Evaluates AST nodes over the evaluation times `ts_ms` (int64 ms, increasing)."""

    def __init__(
        self,
        store: SeriesStore,
        ts_ms: IntArray,
        recorded: Mapping[Labels, tuple[FloatArray, BoolArray]] | None = None,
    ) -> None:
        self.store = store
        self.ts = np.asarray(ts_ms, dtype=np.int64)
        self.n = len(self.ts)
        # Results of recording rules on this same grid: visible at their own step only.
        self.recorded = recorded or {}

    def eval(self, expr: promql_ast.Expr) -> Value:
        if isinstance(expr, promql_ast.Number):
            return np.full(self.n, expr.value, dtype=np.float64)
        if isinstance(expr, promql_ast.VectorSelector):
            return self.instant(expr)
        if isinstance(expr, promql_ast.MatrixSelector):
            raise QueryError("PromQL: a range selector must be the argument of a function")
        if isinstance(expr, promql_ast.FunctionCall):
            return self.call(expr)
        if isinstance(expr, promql_ast.Aggregate):
            return self.aggregate(expr)
        if isinstance(expr, promql_ast.Unary):
            inner = self.eval(expr.expr)
            if isinstance(inner, Vec):
                return Vec({drop_name(k): (-v, p) for k, (v, p) in inner.items.items()})
            return -inner
        return self.binary(expr)

    # --- selectors and functions -------------------------------------------------------

    def instant(self, sel: promql_ast.VectorSelector) -> Vec:
        out: dict[Labels, tuple[FloatArray, BoolArray]] = {}
        for labels, s in self.store.select(sel.matchers):
            idx = np.searchsorted(s.t, self.ts, side="right") - 1
            ok = idx >= 0
            safe = np.where(ok, idx, 0)
            present = ok & (s.t[safe] >= self.ts - LOOKBACK_DELTA_MS)
            if present.any():
                out[labels] = (s.v[safe], present)
        for labels, (values, present) in self.recorded.items():
            if select_one(sel.matchers, labels):
                out[labels] = _merge(out, labels, values, present)
        return Vec(out)

    def call(self, call: promql_ast.FunctionCall) -> Vec:
        ms = call.arg
        out: dict[Labels, tuple[FloatArray, BoolArray]] = {}
        if any(select_one(ms.selector.matchers, k) for k in self.recorded):
            raise QueryError("PromQL: range selectors over recorded series are not supported")
        for labels, s in self.store.select(ms.selector.matchers):
            lo = np.searchsorted(s.t, self.ts - ms.range_ms, side="left")
            hi = np.searchsorted(s.t, self.ts, side="right")
            if call.func in ("rate", "increase", "delta"):
                values, present = extrapolated_rate(
                    s,
                    lo,
                    hi,
                    self.ts,
                    ms.range_ms,
                    is_counter=call.func != "delta",
                    is_rate=call.func == "rate",
                )
            elif call.func == "deriv":
                values, present = deriv(s, lo, hi)
            else:
                values, present = extreme_over_time(s, lo, hi, call.func == "max_over_time")
            if present.any():
                key = drop_name(labels)
                if key in out and (out[key][1] & present).any():
                    raise QueryError(
                        f"PromQL: {call.func}() gives two series with the labels {dict(key)}"
                    )
                if key in out:
                    old_v, old_p = out[key]
                    present = old_p | present
                    values = np.where(old_p, old_v, values)
                out[key] = (values, present)
        return Vec(out)

    # --- aggregation ---------------------------------------------------------------------

    def aggregate(self, agg: promql_ast.Aggregate) -> Vec:
        inner = self.eval(agg.expr)
        if not isinstance(inner, Vec):
            raise QueryError(f"PromQL: {agg.op}() needs an instant vector, got a scalar")
        groups: dict[Labels, list[tuple[FloatArray, BoolArray]]] = defaultdict(list)
        for labels in sorted(inner.items):
            if agg.without:
                drop = {*agg.grouping, "__name__"}
                key = tuple(kv for kv in labels if kv[0] not in drop)
            else:
                keep = set(agg.grouping)
                key = tuple(kv for kv in labels if kv[0] in keep)
            groups[key].append(inner.items[labels])
        out: dict[Labels, tuple[FloatArray, BoolArray]] = {}
        for key, members in groups.items():
            present = np.zeros(self.n, dtype=bool)
            acc = np.zeros(self.n, dtype=np.float64)
            for values, p in members:
                if agg.op == "sum":
                    acc = np.where(p, np.where(present, acc + values, values), acc)
                elif agg.op == "count":
                    acc = acc + p
                elif agg.op == "max":
                    better = (acc < values) | np.isnan(acc)
                    acc = np.where(p & (~present | better), values, acc)
                else:  # min
                    better = (acc > values) | np.isnan(acc)
                    acc = np.where(p & (~present | better), values, acc)
                present = present | p
            out[key] = (acc, present)
        return Vec(out)

    # --- binary operators ----------------------------------------------------------------

    def binary(self, b: promql_ast.Binary) -> Value:
        lhs = self.eval(b.lhs)
        rhs = self.eval(b.rhs)
        if b.op in promql_ast.SET_OPS:
            if not isinstance(lhs, Vec) or not isinstance(rhs, Vec):
                raise QueryError(f"PromQL: {b.op!r} needs instant vectors on both sides")
            return self.set_op(b, lhs, rhs)
        if not isinstance(lhs, Vec) and not isinstance(rhs, Vec):
            if b.op in promql_ast.COMPARISONS and not b.return_bool:
                raise QueryError("PromQL: comparisons between scalars must use bool")
            v, _ = _apply(b.op, lhs, rhs, True)
            return v
        if isinstance(lhs, Vec) and isinstance(rhs, Vec):
            return self.vector_vector(b, lhs, rhs)
        return self.vector_scalar(b, lhs, rhs)

    def vector_scalar(self, b: promql_ast.Binary, lhs: Value, rhs: Value) -> Vec:
        out: dict[Labels, tuple[FloatArray, BoolArray]] = {}
        vec, swap = (lhs, False) if isinstance(lhs, Vec) else (rhs, True)
        scalar = rhs if not swap else lhs
        assert isinstance(vec, Vec)
        assert not isinstance(scalar, Vec)
        comparison = b.op in promql_ast.COMPARISONS
        for labels, (values, present) in vec.items.items():
            lv, rv = (scalar, values) if swap else (values, scalar)
            result, keep = _apply(b.op, lv, rv, b.return_bool)
            if comparison and not b.return_bool:
                result = values  # a filter keeps the vector's own value
            key = labels if comparison and not b.return_bool else drop_name(labels)
            p = present & keep
            if p.any():
                out[key] = _merge(out, key, result, p)
        return Vec(out)

    def vector_vector(self, b: promql_ast.Binary, lhs: Vec, rhs: Vec) -> Vec:
        sig = _signature(b.matching)
        right = self.by_signature(rhs, sig, "right")
        out: dict[Labels, tuple[FloatArray, BoolArray]] = {}
        matched: dict[Labels, BoolArray] = {}
        comparison = b.op in promql_ast.COMPARISONS
        for labels in sorted(lhs.items):
            lv, lp = lhs.items[labels]
            s = sig(labels)
            if s not in right:
                continue
            rv, rp = right[s]
            both = lp & rp
            if s in matched and (matched[s] & both).any():
                raise QueryError(
                    "PromQL: multiple matches for labels: many-to-one matching must be explicit"
                    f" (group_left/group_right), for {dict(s)}"
                )
            matched[s] = matched.get(s, np.zeros(self.n, bool)) | both
            result, keep = _apply(b.op, lv, rv, b.return_bool)
            if comparison and not b.return_bool:
                result = lv
            p = both & keep
            if not p.any():
                continue
            key = labels
            if not comparison or b.return_bool:
                key = drop_name(key)
            if b.matching.on:
                key = tuple(kv for kv in key if kv[0] in b.matching.labels)
            else:
                key = tuple(kv for kv in key if kv[0] not in b.matching.labels)
            out[key] = _merge(out, key, result, p)
        return Vec(out)

    def by_signature(
        self, vec: Vec, sig: SigFn, side: str
    ) -> dict[Labels, tuple[FloatArray, BoolArray]]:
        merged: dict[Labels, tuple[FloatArray, BoolArray]] = {}
        for labels, (v, p) in vec.items.items():
            s = sig(labels)
            if s in merged:
                ov, op = merged[s]
                if (op & p).any():
                    raise QueryError(
                        f"PromQL: many-to-many matching not allowed: two series on the {side}"
                        f" side match the labels {dict(s)}"
                    )
                merged[s] = (np.where(op, ov, v), op | p)
            else:
                merged[s] = (v, p)
        return merged

    def set_op(self, b: promql_ast.Binary, lhs: Vec, rhs: Vec) -> Vec:
        sig = _signature(b.matching)
        rhs_present: dict[Labels, BoolArray] = {}
        for labels, (_, p) in rhs.items.items():
            s = sig(labels)
            rhs_present[s] = rhs_present.get(s, np.zeros(self.n, bool)) | p
        none = np.zeros(self.n, bool)
        out: dict[Labels, tuple[FloatArray, BoolArray]] = {}
        if b.op in ("and", "unless"):
            for labels, (v, p) in lhs.items.items():
                other = rhs_present.get(sig(labels), none)
                keep = p & other if b.op == "and" else p & ~other
                if keep.any():
                    out[labels] = (v, keep)
            return Vec(out)
        lhs_present: dict[Labels, BoolArray] = {}
        for labels, (v, p) in lhs.items.items():
            s = sig(labels)
            lhs_present[s] = lhs_present.get(s, np.zeros(self.n, bool)) | p
            out[labels] = (v, p)
        for labels, (v, p) in rhs.items.items():
            keep = p & ~lhs_present.get(sig(labels), none)
            if keep.any():
                out[labels] = _merge(out, labels, v, keep) if labels in out else (v, keep)
        return Vec(out)


class SigFn:
    def __init__(self, matching: promql_ast.VectorMatching) -> None:
        self.on = matching.on
        self.labels = frozenset(matching.labels)

    def __call__(self, labels: Labels) -> Labels:
        if self.on:
            return tuple(kv for kv in labels if kv[0] in self.labels)
        return tuple(kv for kv in labels if kv[0] not in self.labels and kv[0] != "__name__")


def _signature(matching: promql_ast.VectorMatching) -> SigFn:
    return SigFn(matching)


def _merge(
    out: Mapping[Labels, tuple[FloatArray, BoolArray]], key: Labels, v: FloatArray, p: BoolArray
) -> tuple[FloatArray, BoolArray]:
    if key not in out:
        return v, p
    ov, op = out[key]
    if (op & p).any():
        raise QueryError(
            f"PromQL: vector cannot contain metrics with the same labelset {dict(key)}"
        )
    return np.where(op, ov, v), op | p


def _apply(
    op: str, lv: FloatArray, rv: FloatArray, return_bool: bool
) -> tuple[FloatArray, BoolArray]:
    """(result, keep): arithmetic keeps everything; a comparison keeps where it holds."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if op == "+":
            return lv + rv, np.ones(lv.shape, bool)
        if op == "-":
            return lv - rv, np.ones(lv.shape, bool)
        if op == "*":
            return lv * rv, np.ones(lv.shape, bool)
        if op == "/":
            return lv / rv, np.ones(lv.shape, bool)
        cmp = {
            "==": np.equal,
            "!=": np.not_equal,
            ">": np.greater,
            "<": np.less,
            ">=": np.greater_equal,
            "<=": np.less_equal,
        }[op](lv, rv)
    if return_bool:
        return cmp.astype(np.float64), np.ones(lv.shape, bool)
    return lv, cmp


def evaluate(expr: promql_ast.Expr | str, store: SeriesStore, ts_ms: IntArray) -> Vec:
    """Evaluate an expression at every time of `ts_ms`; a scalar result is refused."""
    node = promql_parser.parse(expr) if isinstance(expr, str) else expr
    result = Evaluator(store, ts_ms).eval(node)
    if not isinstance(result, Vec):
        raise QueryError("PromQL: the expression gives a scalar, an alert needs a vector")
    return result
