"""A parser for the subset of PromQL that relplan's alert rules use.

The subset: number literals; vector selectors with `=`, `!=`, `=~`, `!~` matchers (a metric
name may contain `:`); range selectors `sel[5m]`; the functions `rate`, `increase`, `delta`,
`deriv`, `max_over_time`, `min_over_time`; the aggregations `sum`, `max`, `min`, `count`
with `by (...)` / `without (...)` before or after the argument; binary operators `+ - * /`,
the comparisons `== != > < >= <=` (as filters, or with `bool`), and the set operators
`and`, `or`, `unless`, each with optional `on (...)` / `ignoring (...)`; parentheses and
unary minus. Operator precedence and associativity follow Prometheus 2.42's parser
(`or` < `and unless` < comparisons < `+ -` < `* / %` < `^`).

Anything outside the subset (offset, `@`, subqueries, `group_left`) is refused with a
`QueryError` naming the position, so an expression relplan cannot evaluate exactly is never
evaluated approximately.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from relplan.alerts.promql_ast import (
    AGGREGATIONS,
    COMPARISONS,
    RANGE_FUNCTIONS,
    SET_OPS,
    Aggregate,
    Binary,
    Expr,
    FunctionCall,
    Matcher,
    MatrixSelector,
    Number,
    Unary,
    VectorMatching,
    VectorSelector,
    parse_duration_ms,
)
from relplan.errors import QueryError

# --- Lexer ------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<duration>\[(?:\d+(?:ms|y|w|d|h|m|s))+\])
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|0[xX][0-9a-fA-F]+|(?i:inf|nan)\b)
  | (?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
  | (?P<ident>[A-Za-z_:][A-Za-z0-9_:]*)
  | (?P<op>==|!=|>=|<=|=~|!~|[-+*/%^<>=(){}\[\],@])
    """,
    re.VERBOSE,
)

_KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "bool", "offset"}


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    pos: int


def _lex(text: str) -> list[_Tok]:
    toks: list[_Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise QueryError(f"PromQL: unexpected character {text[pos]!r} at position {pos + 1}")
        kind = m.lastgroup or ""
        if kind != "ws":
            toks.append(_Tok(kind, m.group(), pos))
        pos = m.end()
    toks.append(_Tok("eof", "", len(text)))
    return toks


def _unquote(raw: str) -> str:
    body = raw[1:-1]
    out: list[str] = []
    i = 0
    escapes = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'"}
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(escapes.get(nxt, "\\" + nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


# --- Parser -----------------------------------------------------------------------------

# Binary precedence, lowest first (Prometheus parser/lex.go).
_LEVELS: list[frozenset[str]] = [
    frozenset({"or"}),
    frozenset({"and", "unless"}),
    COMPARISONS,
    frozenset({"+", "-"}),
    frozenset({"*", "/", "%"}),
    frozenset({"^"}),
]


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _lex(text)
        self.i = 0

    def peek(self) -> _Tok:
        return self.toks[self.i]

    def next(self) -> _Tok:
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def fail(self, tok: _Tok, expected: str) -> QueryError:
        got = repr(tok.text) if tok.text else "end of expression"
        return QueryError(
            f"PromQL: expected {expected} at position {tok.pos + 1}, got {got} in {self.text!r}"
        )

    def expect(self, text: str) -> _Tok:
        tok = self.next()
        if tok.text != text:
            raise self.fail(tok, repr(text))
        return tok

    def op_at(self) -> str | None:
        tok = self.peek()
        if tok.kind == "op" and tok.text in (
            "==",
            "!=",
            ">=",
            "<=",
            ">",
            "<",
            "+",
            "-",
            "*",
            "/",
            "%",
            "^",
        ):
            return tok.text
        if tok.kind == "ident" and tok.text in SET_OPS:
            return tok.text
        return None

    def parse(self) -> Expr:
        expr = self.binary(0)
        tok = self.peek()
        if tok.kind != "eof":
            raise self.fail(tok, "an operator or the end of the expression")
        return expr

    def binary(self, level: int) -> Expr:
        if level == len(_LEVELS):
            return self.unary()
        lhs = self.binary(level + 1)
        while True:
            op = self.op_at()
            if op is None or op not in _LEVELS[level]:
                return lhs
            tok = self.next()
            if op in ("%", "^"):
                raise QueryError(
                    f"PromQL: operator {op!r} at position {tok.pos + 1} is not supported"
                )
            return_bool = False
            if self.peek().text == "bool":
                if op not in COMPARISONS:
                    raise self.fail(self.peek(), "an expression ('bool' only follows a comparison)")
                self.next()
                return_bool = True
            matching = VectorMatching()
            if self.peek().text in ("on", "ignoring"):
                on = self.next().text == "on"
                matching = VectorMatching(on=on, labels=self.label_list())
                if self.peek().text in ("group_left", "group_right"):
                    raise QueryError(
                        f"PromQL: {self.peek().text} at position {self.peek().pos + 1} is not supported"
                    )
            rhs = self.binary(level + 1)
            lhs = Binary(op, lhs, rhs, return_bool, matching)

    def label_list(self) -> tuple[str, ...]:
        self.expect("(")
        names: list[str] = []
        while self.peek().text != ")":
            tok = self.next()
            if tok.kind != "ident":
                raise self.fail(tok, "a label name")
            names.append(tok.text)
            if self.peek().text == ",":
                self.next()
            elif self.peek().text != ")":
                raise self.fail(self.peek(), "',' or ')'")
        self.expect(")")
        return tuple(names)

    def unary(self) -> Expr:
        tok = self.peek()
        if tok.kind == "op" and tok.text in ("-", "+"):
            self.next()
            inner = self.unary()
            if isinstance(inner, Number):
                return Number(-inner.value if tok.text == "-" else inner.value)
            return inner if tok.text == "+" else Unary("-", inner)
        return self.postfix()

    def postfix(self) -> Expr:
        expr = self.primary()
        tok = self.peek()
        if tok.kind == "duration":
            self.next()
            if not isinstance(expr, VectorSelector):
                raise QueryError(
                    f"PromQL: a range [..] at position {tok.pos + 1} must follow a metric selector"
                    " (subqueries are not supported)"
                )
            return MatrixSelector(expr, parse_duration_ms(tok.text[1:-1]))
        if tok.text == "[":
            raise QueryError(f"PromQL: subqueries at position {tok.pos + 1} are not supported")
        if tok.text in ("offset", "@"):
            raise QueryError(f"PromQL: {tok.text!r} at position {tok.pos + 1} is not supported")
        return expr

    def primary(self) -> Expr:
        tok = self.peek()
        if tok.kind == "number":
            self.next()
            return Number(
                float(int(tok.text, 16)) if tok.text[:2].lower() == "0x" else float(tok.text)
            )
        if tok.text == "(":
            self.next()
            inner = self.binary(0)
            self.expect(")")
            return inner
        if tok.text == "{":
            ms = self.matchers()
            if all(_matches_empty(m) for m in ms):
                raise QueryError(
                    f"PromQL: the selector at position {tok.pos + 1} needs at least one"
                    " matcher that does not match the empty string"
                )
            return VectorSelector(ms)
        if tok.kind == "ident" and tok.text not in _KEYWORDS:
            self.next()
            name = tok.text
            if name in AGGREGATIONS:
                return self.aggregate(name)
            if self.peek().text == "(":
                return self.call(name, tok)
            extra = self.matchers() if self.peek().text == "{" else ()
            return VectorSelector((Matcher("__name__", "=", name), *extra))
        raise self.fail(tok, "an expression")

    def aggregate(self, op: str) -> Expr:
        grouping: tuple[str, ...] = ()
        without = False
        if self.peek().text in ("by", "without"):
            without = self.next().text == "without"
            grouping = self.label_list()
            self.expect("(")
            inner = self.binary(0)
            self.expect(")")
        else:
            self.expect("(")
            inner = self.binary(0)
            self.expect(")")
            if self.peek().text in ("by", "without"):
                without = self.next().text == "without"
                grouping = self.label_list()
        return Aggregate(op, inner, grouping, without)

    def call(self, name: str, tok: _Tok) -> Expr:
        if name not in RANGE_FUNCTIONS:
            raise QueryError(
                f"PromQL: function {name}() at position {tok.pos + 1} is not supported"
            )
        self.expect("(")
        arg = self.binary(0)
        self.expect(")")
        if not isinstance(arg, MatrixSelector):
            raise QueryError(f"PromQL: {name}() at position {tok.pos + 1} needs a range selector")
        return FunctionCall(name, arg)

    def matchers(self) -> tuple[Matcher, ...]:
        self.expect("{")
        out: list[Matcher] = []
        while self.peek().text != "}":
            label = self.next()
            if label.kind != "ident":
                raise self.fail(label, "a label name")
            op = self.next()
            if op.text not in ("=", "!=", "=~", "!~"):
                raise self.fail(op, "=, !=, =~ or !~")
            value = self.next()
            if value.kind != "string":
                raise self.fail(value, "a quoted string")
            matcher = Matcher(label.text, op.text, _unquote(value.text))
            _matches_empty(matcher)  # refuses an invalid regular expression here
            out.append(matcher)
            if self.peek().text == ",":
                self.next()
            elif self.peek().text != "}":
                raise self.fail(self.peek(), "',' or '}'")
        self.expect("}")
        return tuple(out)


def _matches_empty(m: Matcher) -> bool:
    if m.op in ("=", "!="):
        return (m.value == "") == (m.op == "=")
    try:
        full = re.fullmatch(m.value, "") is not None
    except re.error as exc:
        raise QueryError(f"PromQL: invalid regular expression {m.value!r}: {exc}") from exc
    return full == (m.op == "=~")


def parse(text: str) -> Expr:
    """Parse a PromQL expression of the supported subset into an AST."""
    return _Parser(text).parse()
