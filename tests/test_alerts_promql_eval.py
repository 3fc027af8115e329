"""The offline PromQL evaluator against values worked out by hand from Prometheus 2.42's rules.

Every series starts at T0 (epoch ms) and is sampled every 15 s unless the test says otherwise.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from relplan.alerts import promql_ast, promql_eval, promql_parser
from relplan.alerts.health import apply_for
from relplan.alerts.promql_series import SeriesStore, make_labels
from relplan.alerts.rules import AlertRule
from relplan.errors import QueryError

T0 = 1_764_460_800_000


def store_of(**series: list[tuple[float, float]]) -> SeriesStore:
    """name=[(seconds from T0, value), ...], label pod="a"."""
    s = SeriesStore()
    for name, pts in series.items():
        s.add(
            make_labels(name, {"pod": "a"}),
            [T0 + round(t * 1000) for t, _ in pts],
            [v for _, v in pts],
        )
    return s


def at(expr: str, store: SeriesStore, *seconds: float) -> list[float | None]:
    """Value of the expression's single output series at each time (None when absent)."""
    ts = np.array([T0 + round(x * 1000) for x in seconds], dtype=np.int64)
    vec = promql_eval.evaluate(expr, store, ts)
    assert len(vec.items) <= 1, vec.items.keys()
    if not vec.items:
        return [None] * len(seconds)
    values, present = next(iter(vec.items.values()))
    return [float(v) if p else None for v, p in zip(values, present, strict=True)]


LINEAR = [(15.0 * i, 15.0 * i) for i in range(5)]  # 1 per second, 0..60


def test_increase_with_samples_on_both_edges_is_the_plain_rise() -> None:
    """Window [0, 60] holds all five samples: rise 60 - 0 = 60, no extrapolation; rate 1/s."""
    s = store_of(c=LINEAR)
    assert at("increase(c[1m])", s, 60) == [60.0]
    assert at("rate(c[1m])", s, 60) == [1.0]


def test_increase_extrapolates_to_both_edges_within_1_1_sample_intervals() -> None:
    """At 70 s the window [10, 70] holds 15..60 (values 15..60): rise 45 over 45 s; the edges
    are 5 s and 10 s away (< 1.1 x 15 s), so the interval becomes 60 s: 45 x 60/45 = 60."""
    s = store_of(c=LINEAR)
    assert at("increase(c[1m])", s, 70) == [pytest.approx(60.0, rel=1e-15)]


def test_extrapolation_stops_at_the_counters_zero_point() -> None:
    """Samples 2, 17, 32, 47 at 15..60 s, window [0, 60]: rise 45 over 45 s. The start is 15 s
    away, but the counter hits zero 45 x 2/45 = 2 s before the first sample: 45 x 47/45 = 47."""
    s = store_of(c=[(15, 2), (30, 17), (45, 32), (60, 47)])
    assert at("increase(c[1m])", s, 60) == [pytest.approx(47.0, rel=1e-15)]


def test_a_far_edge_gets_half_a_sample_interval() -> None:
    """Samples 0 and 15 at 0 s and 15 s, evaluated at 60 s: the end is 45 s away (>= 16.5 s),
    so only 7.5 s is added: 15 x 22.5/15 = 22.5."""
    s = store_of(c=[(0, 0), (15, 15)])
    assert at("increase(c[1m])", s, 60) == [22.5]


def test_a_counter_reset_adds_the_value_before_the_drop() -> None:
    """10, 20, 5, 15, 25: 25 - 10 + 20 (value before the drop) = 35, the sum of the rises
    10 + 5 + 10 + 10 with the new value counting as the rise since the reset."""
    s = store_of(c=[(0, 10), (15, 20), (30, 5), (45, 15), (60, 25)])
    assert at("increase(c[1m])", s, 60) == [35.0]


def test_delta_does_not_treat_a_drop_as_a_reset() -> None:
    s = store_of(g=[(0, 10), (15, 20), (30, 5), (45, 15), (60, 25)])
    assert at("delta(g[1m])", s, 60) == [15.0]


def test_rate_needs_two_samples() -> None:
    s = store_of(c=[(0, 5)])
    assert at("rate(c[1m])", s, 30) == [None]


def test_deriv_is_the_least_squares_slope() -> None:
    """y = 1, 2, 2, 4, 6 at x = 0..60 s: cov = 180, var = 2250, slope 0.08 per second."""
    s = store_of(g=[(0, 1), (15, 2), (30, 2), (45, 4), (60, 6)])
    assert at("deriv(g[1m])", s, 60) == [pytest.approx(0.08, rel=1e-15)]


def test_deriv_of_a_constant_is_exactly_zero() -> None:
    s = store_of(g=[(15 * i, 0.1) for i in range(6)])
    assert at("deriv(g[1m])", s, 75) == [0.0]


def test_range_selector_is_closed_at_both_ends() -> None:
    """A lone sample at 0 s is inside [60 - 60, 60] and outside [60.001 - 60, 60.001]."""
    s = store_of(g=[(0, 7)])
    assert at("max_over_time(g[1m])", s, 60, 60.001) == [7.0, None]


def test_instant_selector_looks_back_five_minutes_inclusive() -> None:
    s = store_of(g=[(0, 7)])
    assert at("g", s, 0, 300, 300.001) == [7.0, 7.0, None]
    assert at("g", s, -0.001) == [None]


def test_max_over_time_skips_nan_unless_all_are_nan() -> None:
    s = store_of(g=[(0, math.nan), (15, 3), (30, math.nan), (45, 2)])
    assert at("max_over_time(g[1m])", s, 45) == [3.0]
    assert at("min_over_time(g[1m])", s, 45) == [2.0]
    only_nan = at("max_over_time(g[10s])", s, 30)[0]
    assert only_nan is not None
    assert math.isnan(only_nan)


def test_comparison_filter_keeps_the_name_and_arithmetic_drops_it() -> None:
    s = store_of(g=[(0, 7)])
    ts = np.array([T0], dtype=np.int64)
    assert list(promql_eval.evaluate("g > 5", s, ts).items) == [(("__name__", "g"), ("pod", "a"))]
    assert list(promql_eval.evaluate("g + 0", s, ts).items) == [(("pod", "a"),)]
    assert promql_eval.evaluate("g > 8", s, ts).items == {}
    assert at("g > bool 8", s, 0) == [0.0]


def test_and_on_matches_per_replica_and_keeps_the_left_value() -> None:
    s = SeriesStore()
    for pod, kv, waiting in (("a", 0.99, 12), ("b", 0.99, 3), ("c", 0.5, 20)):
        s.add(make_labels("kv", {"pod": pod, "engine": "0"}), [T0], [kv])
        s.add(make_labels("w", {"pod": pod}), [T0], [waiting])
    ts = np.array([T0], dtype=np.int64)
    vec = promql_eval.evaluate("max by (pod) (kv) > 0.95 and on (pod) sum by (pod) (w) > 10", s, ts)
    assert {k: float(v[0]) for k, (v, _) in vec.items.items()} == {(("pod", "a"),): 0.99}


def test_sum_by_groups_and_divides_one_to_one() -> None:
    s = SeriesStore()
    s.add(make_labels("x", {"pod": "a", "engine": "0"}), [T0], [3])
    s.add(make_labels("x", {"pod": "a", "engine": "1"}), [T0], [5])
    s.add(make_labels("y", {"pod": "a"}), [T0], [4])
    assert at("sum by (pod) (x) / sum by (pod) (y)", s, 0) == [2.0]
    assert at("1 - sum(x) / sum(y)", s, 0) == [-1.0]


def test_division_by_zero_gives_inf_and_nan_like_go() -> None:
    s = store_of(a=[(0, 1)], b=[(0, 0)], z=[(0, 0)])
    assert at("sum(a) / sum(b)", s, 0) == [math.inf]
    nan = at("sum(z) / sum(b)", s, 0)[0]
    assert nan is not None
    assert math.isnan(nan)


def test_many_to_many_matching_is_refused() -> None:
    s = SeriesStore()
    s.add(make_labels("x", {"pod": "a", "engine": "0"}), [T0], [3])
    s.add(make_labels("x", {"pod": "a", "engine": "1"}), [T0], [5])
    s.add(make_labels("y", {"pod": "a"}), [T0], [4])
    ts = np.array([T0], dtype=np.int64)
    with pytest.raises(QueryError, match="many-to-one matching must be explicit"):
        promql_eval.evaluate("x / on (pod) y", s, ts)
    with pytest.raises(QueryError, match="many-to-many matching not allowed"):
        promql_eval.evaluate("y / on (pod) x", s, ts)
    # Duplicates on the left that match nothing on the right are no error (as in Prometheus).
    assert promql_eval.evaluate('x / on (pod) y{pod="b"}', s, ts).items == {}


def test_for_makes_an_alert_pending_then_firing_and_a_gap_resets_it() -> None:
    """Present at steps 0-5 and 7-10 (15 s apart), for 30s: firing at 2-5 (30 s after the
    start of the run) and 9-10; step 6 resets, so 7 and 8 are pending again."""
    ts = T0 + 15_000 * np.arange(11, dtype=np.int64)
    present = np.array([1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1], dtype=bool)
    vec = promql_eval.Vec({(("pod", "a"),): (np.ones(11), present)})
    rule = AlertRule(
        signal="s",
        alert="A",
        expr="x",
        for_s=30,
        labels={"severity": "page"},
        annotations={},
        group="g",
    )
    tl = apply_for(vec, rule, ts)
    fire, _ = tl.firing[(("pod", "a"), ("severity", "page"))]
    assert np.nonzero(fire)[0].tolist() == [2, 3, 4, 5, 9, 10]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rate(x)", "needs a range selector"),
        ("histogram_quantile(0.9, x)", "not supported"),
        ("x offset 5m", "not supported"),
        ("x / on (a) group_left y", "group_left"),
        ("rate(x[5m])[10m:1m]", "subqueries"),
        ("sum by (pod (x)", "expected"),
        ("x > ", "expected an expression"),
    ],
)
def test_outside_the_subset_is_refused_with_the_position(text: str, message: str) -> None:
    with pytest.raises(QueryError, match=message):
        promql_parser.parse(text)


def test_precedence_follows_prometheus() -> None:
    """`1 - a / b > 0.2 and c > 0` is ((1 - (a / b)) > 0.2) and (c > 0)."""
    tree = promql_parser.parse("1 - a / b > 0.2 and c > 0")
    assert isinstance(tree, promql_ast.Binary)
    assert tree.op == "and"
    assert isinstance(tree.lhs, promql_ast.Binary)
    assert tree.lhs.op == ">"
    assert promql_ast.to_string(tree) == "(((1) - ((a) / (b))) > (0.2)) and ((c) > (0))"
    assert promql_parser.parse(promql_ast.to_string(tree)) == tree


# --- properties --------------------------------------------------------------------------

increments = st.lists(st.tuples(st.integers(0, 1000), st.booleans()), min_size=9, max_size=40)


def _counter(incs: list[tuple[int, bool]]) -> list[float]:
    """Cumulative counter; a True flag resets it to the increment (a replica restart)."""
    out: list[float] = []
    v = 0.0
    for inc, reset in incs:
        v = float(inc) if (reset and out) else v + inc
        out.append(v)
    return out


@settings(max_examples=60, deadline=None)
@given(increments, st.integers(1, 4))
def test_increase_over_adjacent_edge_aligned_windows_adds_up(
    incs: list[tuple[int, bool]], k: int
) -> None:
    """With samples on both edges of every window there is no extrapolation, so
    increase[a, b] + increase[b, c] = increase[a, c] (the sample at b is shared), resets
    included."""
    values = _counter(incs)
    s = store_of(c=[(15.0 * i, v) for i, v in enumerate(values)])
    w = 15 * k
    end = 15 * (len(values) - 1)
    if end < 2 * w:
        return
    first, second = at(f"increase(c[{w}s])", s, end - w, end)
    both = at(f"increase(c[{2 * w}s])", s, end)[0]
    assert first is not None
    assert second is not None
    assert both == pytest.approx(first + second, rel=1e-12, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(
    st.floats(0.01, 100),
    st.integers(1, 60),
    st.integers(0, 14_999),
    st.sampled_from([60, 120, 300]),
)
def test_rate_of_a_linear_counter_is_its_slope(
    slope: float, interval_s: int, phase_ms: int, range_s: int
) -> None:
    """Regular samples well away from the counter's zero: both edges are within one sample
    interval, so the extrapolated interval is the whole range and rate = slope."""
    if 2 * interval_s > range_s:
        return
    start = 10_000.0  # the counter is far from zero: no zero-point clamp
    n = range_s // interval_s + 3  # samples cover more than the whole range
    pts = [(phase_ms / 1000 + interval_s * i, slope * (start + interval_s * i)) for i in range(n)]
    s = store_of(c=pts)
    end = pts[-1][0] + 0.5
    got = at(f"rate(c[{range_s}s])", s, end)[0]
    assert got == pytest.approx(slope, rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.floats(-50, 50), st.lists(st.integers(1, 30_000), min_size=3, max_size=30))
def test_deriv_of_a_linear_gauge_is_its_slope(slope: float, gaps_ms: list[int]) -> None:
    t = np.cumsum([0, *gaps_ms])
    s = SeriesStore()
    s.add(make_labels("g", {}), (T0 + t).tolist(), (3.0 + slope * t / 1000).tolist())
    ts = np.array([T0 + int(t[-1])], dtype=np.int64)
    vec = promql_eval.evaluate(f"deriv(g[{int(t[-1]) + 1}ms])", s, ts)
    ((values, _),) = vec.items.values()
    assert float(values[0]) == pytest.approx(slope, rel=1e-6, abs=1e-9)


# --- parser round trip ---------------------------------------------------------------------

_names = st.sampled_from(["x", "vllm:num_requests_waiting", "up", "a_b:c"])
_labels = st.sampled_from(["pod", "instance", "job", "le"])


def _valid_regex(m: promql_ast.Matcher) -> bool:
    if m.op in ("=", "!="):
        return True
    try:
        re.compile(m.value)
    except re.error:
        return False
    return True


_matchers = st.lists(
    st.builds(
        promql_ast.Matcher,
        _labels,
        st.sampled_from(["=", "!=", "=~", "!~"]),
        st.text(alphabet='ab"\\\n .*', max_size=5),
    ).filter(_valid_regex),
    max_size=2,
)
_selectors = st.builds(
    lambda name, ms: promql_ast.VectorSelector((promql_ast.Matcher("__name__", "=", name), *ms)),
    _names,
    _matchers,
)
_calls = st.builds(
    lambda f, sel, r: promql_ast.FunctionCall(f, promql_ast.MatrixSelector(sel, r)),
    st.sampled_from(sorted(promql_ast.RANGE_FUNCTIONS)),
    _selectors,
    st.sampled_from([1000, 60_000, 300_000, 90_000, 3_600_000]),
)
_numbers = st.builds(
    promql_ast.Number, st.floats(min_value=0, allow_nan=False, allow_infinity=True)
)


def _extend(inner: st.SearchStrategy[promql_ast.Expr]) -> st.SearchStrategy[promql_ast.Expr]:
    matching = st.builds(
        promql_ast.VectorMatching, st.booleans(), st.lists(_labels, max_size=2).map(tuple)
    )
    return st.one_of(
        st.builds(
            promql_ast.Aggregate,
            st.sampled_from(sorted(promql_ast.AGGREGATIONS)),
            inner,
            st.lists(_labels, max_size=2).map(tuple),
            st.booleans(),
        ),
        st.builds(
            lambda op, a, b, m: promql_ast.Binary(op, a, b, False, m),
            st.sampled_from(sorted(promql_ast.ARITHMETIC | promql_ast.SET_OPS)),
            inner,
            inner,
            matching,
        ),
        st.builds(
            lambda op, a, b, m: promql_ast.Binary(op, a, b, True, m),
            st.sampled_from(sorted(promql_ast.COMPARISONS)),
            inner,
            inner,
            matching,
        ),
        st.builds(lambda e: promql_ast.Unary("-", e), _selectors | _calls),
    )


_exprs = st.recursive(_selectors | _calls | _numbers, _extend, max_leaves=6)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(_exprs)
def test_printing_then_parsing_gives_the_same_tree(expr: promql_ast.Expr) -> None:
    assert promql_parser.parse(promql_ast.to_string(expr)) == expr


@pytest.mark.parametrize(
    ("text", "message"),
    [('{pod=""}', "does not match the empty string"), ('x{pod=~"("}', "invalid regular")],
)
def test_bad_selectors_are_refused(text: str, message: str) -> None:
    with pytest.raises(QueryError, match=message):
        promql_parser.parse(text)


def test_a_series_without_samples_selects_nothing() -> None:
    s = SeriesStore()
    s.add(make_labels("g", {"pod": "a"}), [], [])
    ts = np.array([T0], dtype=np.int64)
    assert promql_eval.evaluate("g", s, ts).items == {}
    assert promql_eval.evaluate("rate(g[1m])", s, ts).items == {}
