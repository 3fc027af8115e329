"""Loads `queries/**/*.sql` and checks each file's declared parameters against its uses.

Rules (STYLE.md): one query per file; the header comment is its docstring and has a line
`-- params: a, b` (or `-- params:` with nothing after it); DuckDB named parameters (`$a`)
only. A parameter declared but unused, or used but undeclared, is refused with the file's
name. Placeholders inside comments and string literals do not count as uses.

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


def rows(
    con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """Run `queries/<name>.sql` with `params`; the rows as dicts keyed by column name.

    The one way relplan runs a query that returns rows: callers read columns by name, never
    by position, and bind values only as named parameters.
    """
    q = load(name)
    cur = con.execute(q.text, q.bind(params or {}))
    cols = [d[0] for d in cur.description or []]
    return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]


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
