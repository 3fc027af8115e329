"""Loads `queries/**/*.sql` and checks each file's declared parameters against its uses.

Rules (docs/development.md, the section on SQL files): one query per file; the header comment is its docstring and has a line
`-- params: a, b` (or `-- params:` with nothing after it); DuckDB named parameters (`$a`)
only. A parameter declared but unused, or used but undeclared, is refused with the file's
name. Placeholders inside comments and string literals do not count as uses.

Running a query: `rows(con, name, params)` gives its rows as dicts keyed by column name,
`one(...)` the only row (or None), `affected(...)` the row count an insert or delete reports,
`columns(...)` the names of the columns it returns, `arrow(...)` its result as an Arrow table
(columns by name, for large results), and `run(...)` runs a statement whose result is not
read. Code never indexes a result row by position.

The files live in `queries/` at the top of a checkout and are force-included into the wheel
as `relplan/queries/`, so an installed relplan finds them with importlib.resources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relplan.errors import QueryError

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa

_PARAMS_LINE = re.compile(r"^\s*--\s*params:(.*)$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
# Comments, single-quoted strings (with '' escapes) and double-quoted identifiers.
_NOT_CODE = re.compile(r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"", re.DOTALL)


@dataclass(frozen=True)
class Query:
    name: str
    path: str
    text: str
    params: frozenset[str]

    def bind(self, values: dict[str, Any]) -> dict[str, Any]:
        """Check that `values` names exactly the declared parameters and return them."""
        given = set(values)
        if given != self.params:
            missing = sorted(self.params - given)
            extra = sorted(given - self.params)
            raise QueryError(
                f"{self.path}: parameters do not match the declaration"
                f" (missing {missing}, not declared {extra})"
            )
        return values


def queries_dir() -> Traversable:
    """The installed `relplan/queries`, else the checkout's top-level `queries/`."""
    packaged = resources.files("relplan").joinpath("queries")
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "queries"


def parse_query(name: str, path: str, text: str) -> Query:
    declared_lines = _PARAMS_LINE.findall(text)
    if len(declared_lines) != 1:
        raise QueryError(
            f"{path}: expected exactly one '-- params:' header line, found {len(declared_lines)}"
        )
    declared = frozenset(p.strip() for p in declared_lines[0].split(",") if p.strip())
    bad = sorted(p for p in declared if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", p))
    if bad:
        raise QueryError(f"{path}: invalid parameter names in '-- params:': {bad}")
    code = _NOT_CODE.sub(" ", text)
    used = frozenset(_PLACEHOLDER.findall(code))
    if "?" in code or re.search(r"\$\d", code):
        raise QueryError(f"{path}: positional parameters are not allowed; use $name")
    unused = sorted(declared - used)
    undeclared = sorted(used - declared)
    if unused:
        raise QueryError(f"{path}: parameters declared but not used: {', '.join(unused)}")
    if undeclared:
        raise QueryError(f"{path}: parameters used but not declared: {', '.join(undeclared)}")
    return Query(name=name, path=path, text=text, params=declared)


@cache
def load(name: str) -> Query:
    """Load and check `queries/<name>.sql`; a name may have folders (`ingest/macros`)."""
    if not re.fullmatch(r"[a-z0-9_]+(/[a-z0-9_]+)*", name):
        raise QueryError(f"invalid query name {name!r}")
    entry = queries_dir().joinpath(*f"{name}.sql".split("/"))
    if not entry.is_file():
        raise QueryError(f"queries/{name}.sql: no such query file")
    return parse_query(name, f"queries/{name}.sql", entry.read_text(encoding="utf-8"))


def all_names() -> list[str]:
    """Every query's name: its path below `queries/` without `.sql` (`ingest/macros`)."""

    def walk(folder: Traversable, prefix: str) -> list[str]:
        names: list[str] = []
        for e in folder.iterdir():
            if e.is_dir():
                names += walk(e, f"{prefix}{e.name}/")
            elif e.name.endswith(".sql"):
                names.append(prefix + e.name.removesuffix(".sql"))
        return names

    return sorted(walk(queries_dir(), ""))


Params = dict[str, Any]


# Each query's statements as DuckDB parsed them, once per process: a parsed statement runs on
# any connection without being parsed again (the macro files alone took DuckDB about 4 ms of
# parsing per ingest). Empty for a text DuckDB cannot split into statements, which then runs
# as text and fails as it would have.
_PARSED: dict[str, tuple[duckdb.Statement, ...]] = {}


def _statements(con: duckdb.DuckDBPyConnection, q: Query) -> tuple[duckdb.Statement, ...]:
    found = _PARSED.get(q.name)
    if found is None:
        import duckdb

        try:
            found = tuple(con.extract_statements(q.text))
        except duckdb.Error:
            found = ()
        _PARSED[q.name] = found
    return found


def run(
    con: duckdb.DuckDBPyConnection, name: str, params: Params | None = None
) -> duckdb.DuckDBPyConnection:
    """Run `queries/<name>.sql` with `params` (checked against its declaration): each of its
    statements in order, each given the parameters it names; the result is the last one's."""
    q = load(name)
    bound = q.bind(params or {})
    statements = _statements(con, q)
    if not statements:
        return con.execute(q.text, bound) if bound else con.execute(q.text)
    for st in statements:
        mine = {k: bound[k] for k in st.named_parameters}
        cur = con.execute(st, mine) if mine else con.execute(st)
    return cur


def arrow(con: duckdb.DuckDBPyConnection, name: str, params: Params | None = None) -> pa.Table:
    """The result of `queries/<name>.sql` as an Arrow table (no copy through Python rows)."""
    q = load(name)
    bound = q.bind(params or {}) or None
    statements = _statements(con, q)
    query: str | duckdb.Statement = statements[0] if len(statements) == 1 else q.text
    return con.sql(query, params=bound).to_arrow_table()


def columns(con: duckdb.DuckDBPyConnection, name: str, params: Params | None = None) -> list[str]:
    """The names of the columns `queries/<name>.sql` returns, in order."""
    return [str(d[0]) for d in run(con, name, params).description or []]


def rows(
    con: duckdb.DuckDBPyConnection, name: str, params: Params | None = None
) -> list[dict[str, Any]]:
    """Every row of `queries/<name>.sql`, each a dict keyed by column name.

    The one way relplan runs a query that returns rows: callers read columns by name, never
    by position, and bind values only as named parameters."""
    cur = run(con, name, params)
    names = _column_names(cur, name)
    return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def by_column(
    con: duckdb.DuckDBPyConnection, name: str, params: Params | None = None
) -> dict[str, list[Any]]:
    """Every column of `queries/<name>.sql` as a list of its values, keyed by column name:
    `rows` turned column-wise, for a long result read a column at a time (no dict per row:
    the drain's ~20,000 backlog points of a replay took 9 ms as rows)."""
    cur = run(con, name, params)
    names = _column_names(cur, name)
    columns = [list(c) for c in zip(*cur.fetchall(), strict=True)] or [[] for _ in names]
    return dict(zip(names, columns, strict=True))


def one(
    con: duckdb.DuckDBPyConnection, name: str, params: Params | None = None
) -> dict[str, Any] | None:
    """The row of a query that returns at most one, as a dict; None when it returns none.
    More than one row is a bug in the query (or in the code calling it) and raises."""
    found = rows(con, name, params)
    if len(found) > 1:
        raise QueryError(f"queries/{name}.sql: expected at most one row, got {len(found)}")
    return found[0] if found else None


def affected(con: duckdb.DuckDBPyConnection, name: str, params: Params | None = None) -> int:
    """The number of rows an insert, update or delete in `queries/<name>.sql` changed."""
    row = one(con, name, params)
    if row is None or set(row) != {"Count"}:
        raise QueryError(f"queries/{name}.sql: expected a row count, got {row!r}")
    return int(row["Count"])


def _column_names(cur: duckdb.DuckDBPyConnection, name: str) -> list[str]:
    names = [str(d[0]) for d in cur.description or []]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise QueryError(f"queries/{name}.sql: columns with the same name {dup}; name each one")
    return names
