"""The SQL loader: declared parameters must match their uses, named in the error."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from relplan import sql
from relplan.errors import QueryError


def test_declared_and_used_parameters_match() -> None:
    q = sql.parse_query("x", "queries/x.sql", "-- doc\n-- params: a, b\nselect $a + $b")
    assert q.params == {"a", "b"}
    assert q.bind({"a": 1, "b": 2}) == {"a": 1, "b": 2}


def test_declared_but_unused_is_refused_with_the_file_name() -> None:
    with pytest.raises(QueryError, match=r"queries/x.sql: parameters declared but not used: b"):
        sql.parse_query("x", "queries/x.sql", "-- params: a, b\nselect $a")


def test_used_but_undeclared_is_refused_with_the_file_name() -> None:
    with pytest.raises(QueryError, match=r"queries/y.sql: parameters used but not declared: c"):
        sql.parse_query("y", "queries/y.sql", "-- params: a\nselect $a, $c")


def test_placeholders_in_comments_and_strings_do_not_count() -> None:
    q = sql.parse_query("z", "z.sql", "-- uses $a in prose\n-- params:\nselect '$a', 1 /* $b */")
    assert q.params == frozenset()


def test_positional_parameters_are_refused() -> None:
    with pytest.raises(QueryError, match="positional"):
        sql.parse_query("p", "p.sql", "-- params:\nselect ?")


def test_missing_params_header_is_refused() -> None:
    with pytest.raises(QueryError, match="exactly one '-- params:'"):
        sql.parse_query("h", "h.sql", "select 1")


def test_binding_other_names_is_refused() -> None:
    q = sql.parse_query("b", "b.sql", "-- params: a\nselect $a")
    with pytest.raises(QueryError, match="missing \\['a'\\]"):
        q.bind({"x": 1})


@pytest.mark.parametrize("name", sql.all_names())
def test_every_shipped_query_passes_the_loader(name: str) -> None:
    assert sql.load(name).path == f"queries/{name}.sql"


@pytest.fixture
def toy_queries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A queries folder of our own in place of the shipped one."""
    (tmp_path / "toy").mkdir()
    files = {
        "toy/pairs": "-- Two rows.\n-- params: k\nselect * from (values (1, 'a'), ($k, 'b')) v(n, s)",
        "toy/none": "-- No row.\n-- params:\nselect 1 as n where false",
        "toy/same_names": "-- Two columns named n.\n-- params:\nselect 1 as n, 2 as n",
        "toy/make": "-- A table.\n-- params:\ncreate table t (n integer)",
        "toy/fill": "-- Rows into it.\n-- params: a, b\ninsert into t values ($a), ($b), (3)",
    }
    for name, text in files.items():
        (tmp_path / f"{name}.sql").write_text(text, encoding="utf-8")
    monkeypatch.setattr(sql, "queries_dir", lambda: tmp_path)
    sql.load.cache_clear()
    yield tmp_path
    sql.load.cache_clear()


def test_rows_come_back_as_dicts_keyed_by_column_name(toy_queries: Path) -> None:
    con = duckdb.connect()
    assert sql.rows(con, "toy/pairs", {"k": 7}) == [{"n": 1, "s": "a"}, {"n": 7, "s": "b"}]
    assert sql.columns(con, "toy/pairs", {"k": 7}) == ["n", "s"]


def test_by_column_is_rows_turned_column_wise(toy_queries: Path) -> None:
    con = duckdb.connect()
    assert sql.by_column(con, "toy/pairs", {"k": 7}) == {"n": [1, 7], "s": ["a", "b"]}
    assert sql.by_column(con, "toy/none") == {"n": []}  # no row: every column, empty
    with pytest.raises(QueryError, match=r"same_names.sql: columns with the same name \['n'\]"):
        sql.by_column(con, "toy/same_names")


def test_arrow_keeps_the_column_names(toy_queries: Path) -> None:
    table = sql.arrow(duckdb.connect(), "toy/pairs", {"k": 7})
    assert table.to_pydict() == {"n": [1, 7], "s": ["a", "b"]}


def test_rows_check_the_parameters_against_the_declaration(toy_queries: Path) -> None:
    with pytest.raises(QueryError, match=r"queries/toy/pairs.sql: .*missing \['k'\]"):
        sql.rows(duckdb.connect(), "toy/pairs")


def test_one_is_none_without_a_row_and_refuses_two(toy_queries: Path) -> None:
    con = duckdb.connect()
    assert sql.one(con, "toy/none") is None
    with pytest.raises(QueryError, match=r"toy/pairs\.sql: expected at most one row, got 2"):
        sql.one(con, "toy/pairs", {"k": 2})


def test_two_columns_with_one_name_are_refused(toy_queries: Path) -> None:
    with pytest.raises(QueryError, match=r"same_names.sql: columns with the same name \['n'\]"):
        sql.rows(duckdb.connect(), "toy/same_names")


def test_affected_is_the_row_count_of_an_insert(toy_queries: Path) -> None:
    con = duckdb.connect()
    sql.run(con, "toy/make")
    assert sql.affected(con, "toy/fill", {"a": 1, "b": 2}) == 3
    with pytest.raises(QueryError, match="expected a row count"):
        sql.affected(con, "toy/none")


# --- no SQL assembled in Python ------------------------------------------------------------

_RUNNERS = {"execute", "executemany", "sql", "query", "from_query"}
_SQL_WORD = re.compile(r"\b(select|insert|create|delete|update|from)\b", re.IGNORECASE)
_SQL_START = re.compile(
    r"^\s*(select\b|insert\s+into\b|create\s+(or\s+replace\s+)?(temp\s+)?(table|view|macro)\b"
    r"|delete\s+from\b|update\s+\w+\s+set\b|drop\s+(table|view)\b|with\s+\w+\s+as\s*\()",
    re.IGNORECASE,
)


def _literal_text(node: ast.AST) -> str | None:
    """The constant text of an f-string, `"..." % x`, `"..." + x` or `"...".format(x)`;
    None for anything that is not text assembled at run time."""
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
        parts = [_literal_text(node.left), _literal_text(node.right)]
        for side in (node.left, node.right):
            if isinstance(side, ast.Constant) and isinstance(side.value, str):
                parts.append(side.value)
        found = [p for p in parts if p]
        return " ".join(found) if found else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
    ):
        return node.func.value.value
    return None


def assembled_sql(source: str) -> list[int]:
    """Lines where SQL text is assembled at run time: text built with an f-string (or %, +,
    .format) that is passed to execute/sql/query and names a SQL keyword, or that starts like
    a SQL statement wherever it is."""
    found: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else None
            if isinstance(node.func, ast.Name):
                name = node.func.id
            if name in _RUNNERS:
                for arg in node.args[:1]:
                    text = _literal_text(arg)
                    if text is not None and _SQL_WORD.search(text):
                        found.add(node.lineno)
        if isinstance(node, ast.JoinedStr):
            text = _literal_text(node)
            if text is not None and _SQL_START.search(text):
                found.add(node.lineno)
    return sorted(found)


def test_the_assembled_sql_detector_finds_what_it_should() -> None:
    code = "\n".join(
        [
            'con.execute(f"select count(*) from {table}")',
            'con.sql("delete from %s" % table)',
            'q = f"insert into {table} values (1)"',
            'con.execute("select 1 from t where a = " + x)',
            'con.execute("update {} set a = 1".format(t))',
            'raise InputError(f"t_end is before t_sent (from {a} s)")',
            "con.execute(f\"set memory_limit = '{limit}'\")",
            "con.execute(sql.load(name).text, params)",
        ]
    )
    assert assembled_sql(code) == [1, 2, 3, 4, 5]


def test_no_sql_is_assembled_with_f_strings_in_relplan() -> None:
    """SQL lives in queries/ with $parameters; an identifier that must vary is a choice
    among fixed query files by name."""
    root = Path(__file__).resolve().parent.parent / "relplan"
    offenders = [
        f"{path.relative_to(root.parent)}:{line}"
        for path in sorted(root.rglob("*.py"))
        for line in assembled_sql(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
