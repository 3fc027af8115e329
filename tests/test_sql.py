"""The SQL loader: declared parameters must match their uses, named in the error."""

from __future__ import annotations

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
