"""The PromQL subset's syntax tree (promql_parser.py builds it, promql_eval.py evaluates it),
its operator sets and durations, and the tree back to text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from relplan.errors import QueryError

RANGE_FUNCTIONS = frozenset(
    {"rate", "increase", "delta", "deriv", "max_over_time", "min_over_time"}
)
AGGREGATIONS = frozenset({"sum", "max", "min", "count"})
COMPARISONS = frozenset({"==", "!=", ">", "<", ">=", "<="})
ARITHMETIC = frozenset({"+", "-", "*", "/"})
SET_OPS = frozenset({"and", "or", "unless"})

_DURATION_UNITS_MS = {
    "ms": 1,
    "s": 1000,
    "m": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
    "w": 604_800_000,
    "y": 31_536_000_000,
}
_DURATION = re.compile(r"^(?:(\d+)(ms|y|w|d|h|m|s))+$")
_DURATION_PART = re.compile(r"(\d+)(ms|y|w|d|h|m|s)")


def parse_duration_ms(text: str) -> int:
    """A Prometheus duration (`5m`, `1h30m`, `90s`) in milliseconds."""
    if not _DURATION.match(text):
        raise QueryError(f"not a Prometheus duration: {text!r}")
    return sum(int(n) * _DURATION_UNITS_MS[u] for n, u in _DURATION_PART.findall(text))


def format_duration_ms(ms: int) -> str:
    """Milliseconds as the shortest Prometheus duration string (`300000` -> `5m`)."""
    if ms <= 0:
        return "0s"
    out = []
    for unit in ("w", "d", "h", "m", "s", "ms"):
        size = _DURATION_UNITS_MS[unit]
        if ms >= size:
            out.append(f"{ms // size}{unit}")
            ms %= size
    return "".join(out)


# --- AST -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Number:
    value: float


@dataclass(frozen=True)
class Matcher:
    label: str
    op: str  # = != =~ !~
    value: str


@dataclass(frozen=True)
class VectorSelector:
    matchers: tuple[Matcher, ...]


@dataclass(frozen=True)
class MatrixSelector:
    selector: VectorSelector
    range_ms: int


@dataclass(frozen=True)
class FunctionCall:
    func: str
    arg: MatrixSelector


@dataclass(frozen=True)
class Aggregate:
    op: str
    expr: Expr
    grouping: tuple[str, ...] = ()
    without: bool = False


@dataclass(frozen=True)
class VectorMatching:
    on: bool = False  # False: ignoring(...) (possibly empty)
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Binary:
    op: str
    lhs: Expr
    rhs: Expr
    return_bool: bool = False
    matching: VectorMatching = field(default_factory=VectorMatching)


@dataclass(frozen=True)
class Unary:
    op: str
    expr: Expr


Expr = Number | VectorSelector | MatrixSelector | FunctionCall | Aggregate | Binary | Unary


def max_lookback_ms(expr: Expr, lookback_delta_ms: int) -> int:
    """How far before an evaluation time the expression reads samples."""
    if isinstance(expr, VectorSelector):
        return lookback_delta_ms
    if isinstance(expr, MatrixSelector):
        return expr.range_ms
    if isinstance(expr, FunctionCall):
        return expr.arg.range_ms
    if isinstance(expr, Aggregate | Unary):
        return max_lookback_ms(expr.expr, lookback_delta_ms)
    if isinstance(expr, Binary):
        return max(
            max_lookback_ms(expr.lhs, lookback_delta_ms),
            max_lookback_ms(expr.rhs, lookback_delta_ms),
        )
    return 0


def metric_names(expr: Expr) -> set[str]:
    """Metric names selected by equality (`name{...}` or `{__name__="name"}`)."""
    if isinstance(expr, VectorSelector):
        return {m.value for m in expr.matchers if m.label == "__name__" and m.op == "="}
    if isinstance(expr, MatrixSelector):
        return metric_names(expr.selector)
    if isinstance(expr, FunctionCall):
        return metric_names(expr.arg)
    if isinstance(expr, Aggregate | Unary):
        return metric_names(expr.expr)
    if isinstance(expr, Binary):
        return metric_names(expr.lhs) | metric_names(expr.rhs)
    return set()


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_string(expr: Expr) -> str:
    """PromQL text for an AST (fully parenthesised binary operands; parses back equal)."""
    if isinstance(expr, Number):
        v = expr.value
        if v != v:
            return "NaN"
        if v in (float("inf"), float("-inf")):
            return "Inf" if v > 0 else "-Inf"
        return repr(v) if v != int(v) or abs(v) >= 1e15 else str(int(v))
    if isinstance(expr, VectorSelector):
        name = next((m.value for m in expr.matchers if m.label == "__name__" and m.op == "="), None)
        rest = [
            m
            for m in expr.matchers
            if not (m.label == "__name__" and m.op == "=" and m.value == name)
        ]
        inner = ", ".join(f"{m.label}{m.op}{_quote(m.value)}" for m in rest)
        if name is None:
            return "{" + inner + "}"
        return name + ("{" + inner + "}" if rest else "")
    if isinstance(expr, MatrixSelector):
        return f"{to_string(expr.selector)}[{format_duration_ms(expr.range_ms)}]"
    if isinstance(expr, FunctionCall):
        return f"{expr.func}({to_string(expr.arg)})"
    if isinstance(expr, Aggregate):
        grouping = ""
        if expr.grouping or expr.without:
            grouping = f" {'without' if expr.without else 'by'} ({', '.join(expr.grouping)})"
        return f"{expr.op}{grouping} ({to_string(expr.expr)})"
    if isinstance(expr, Unary):
        return f"-({to_string(expr.expr)})"
    mod = " bool" if expr.return_bool else ""
    if expr.matching.on or expr.matching.labels:
        kind = "on" if expr.matching.on else "ignoring"
        mod += f" {kind} ({', '.join(expr.matching.labels)})"
    return f"({to_string(expr.lhs)}) {expr.op}{mod} ({to_string(expr.rhs)})"


def subexpressions(expr: Expr) -> list[Expr]:
    """Every node of the tree that yields an instant vector or scalar, outermost first."""
    out: list[Expr] = [expr]
    if isinstance(expr, Aggregate | Unary):
        out += subexpressions(expr.expr)
    elif isinstance(expr, Binary):
        out += subexpressions(expr.lhs) + subexpressions(expr.rhs)
    return [e for e in out if not isinstance(e, MatrixSelector)]
