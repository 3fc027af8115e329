"""The quick test of the proxy attempts (queries/ingest/proxy_checked_quick.sql) refuses every
attempt ingest/proxy_checked.sql gives a reason (and, of the others, only the first of two
lines giving a call the same attempt number): it stands in for that table on a clean file, so
an attempt it passed and the full checks refuse would be stored. Each rule's edge
values, one attempt each (NaN, infinities, epoch milliseconds, a count past its column, a
duplicate, an attempt already in the workspace), are run through both queries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from relplan import sql
from relplan.errors import InputError
from tests.helpers.fast_read import rows
from tests.helpers.ingest import INCIDENT, ingest, write_lines

T = 1764460800.0
GOOD: dict[str, Any] = {
    "perr": None,
    "attempt": 0.0,
    "t_planned": None,
    "t_sent": T,
    "t_end": T + 1,
    "outcome": "delivered",
    "execution_id": "e",
    "attached": True,
    "t_cancel": None,
    "status": 200.0,
    "prompt_tokens": 10.0,
    "max_tokens": 20.0,
}
NAN, INF = float("nan"), float("inf")
CHANGES: list[dict[str, Any]] = [
    {},
    {"perr": "attempt: x is not a number"},
    {"attempt": None},
    {"attempt": -1.0},
    {"attempt": 1.5},
    {"attempt": NAN},
    {"attempt": INF},
    {"attempt": 2147483647.0},
    {"attempt": 2147483648.0},
    {"t_sent": None},
    {"t_end": None},
    {"outcome": None},
    {"outcome": "lost"},
    {"outcome": "shed", "execution_id": None, "attached": False},
    {"outcome": "shed"},
    {"attached": True, "execution_id": None},
    {"attached": None, "execution_id": None},
    {"t_end": T - 1},
    {"t_planned": T - 0.5},
    {"t_planned": -1.0},
    {"t_planned": NAN},
    {"t_cancel": T * 1000},
    {"t_cancel": 4102444799.0, "t_end": 4102444799.5, "t_sent": 4102444799.0},
    {"t_sent": 4102444800.0, "t_end": 4102444801.0},
    {"t_sent": T * 1e6, "t_end": T * 1e6},
    {"t_end": -INF, "t_sent": -INF},
    {"t_sent": 0.0, "t_end": 0.0},
    {"status": None},
    {"status": -1.0},
    {"status": 2147483648.0},
    {"status": NAN},
    {"prompt_tokens": 9007199254740992.0},
    {"prompt_tokens": 9007199254740994.0},
    {"prompt_tokens": 0.5},
    {"max_tokens": INF},
    {"max_tokens": -0.0},
]
COLUMNS = (
    "source_id, ln, raw, perr, origin, call_id, attempt, t_planned, t_sent, t_end, outcome, "
    "execution_id, attached, t_cancel, status, model, replica, prompt_tokens, max_tokens"
)


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    c = duckdb.connect()
    c.execute(sql.load("schema").text)
    for name in ("ingest/macros", "ingest/proxy_macros", "ingest/engine_macros"):
        sql.run(c, name)
    sql.run(c, "ingest/stage_tables")
    c.execute("insert into stage_sources values (1, 'p.jsonl', null)")
    yield c
    c.close()


def _stage(con: duckdb.DuckDBPyConnection, rows: list[dict[str, Any]]) -> None:
    con.execute("delete from stage_proxy")
    fixed = {"source_id": 1, "raw": "", "origin": "canonical", "model": None, "replica": None}
    staged = []
    for ln, r in enumerate(rows, start=1):
        given = {**fixed, **GOOD, "ln": ln, "call_id": f"c{ln}", **r}
        staged.append({c: given[c] for c in COLUMNS.split(", ")})  # the table's column order
    con.execute(
        f"insert into stage_proxy ({COLUMNS}) select unnest(r, recursive := true)"
        " from (select unnest($rows) as r)",
        {"rows": staged},
    )


def _checked(con: duckdb.DuckDBPyConnection, query: str) -> list[tuple[Any, ...]]:
    sql.run(con, query)
    return con.execute(
        "select ln, reason, t_planned_filled from proxy_checked order by ln"
    ).fetchall()


def test_the_quick_test_refuses_what_the_full_checks_refuse(
    con: duckdb.DuckDBPyConnection,
) -> None:
    con.execute(
        "insert into attempts (call_id, attempt, t_planned, t_sent, t_end, outcome, attached,"
        " source_id, source_row) values ('stored', 0, 1, 1, 2, 'delivered', false, 9, 1)"
    )
    rows = [
        *CHANGES,
        {"call_id": "twice"},
        {"call_id": "twice"},  # the same attempt again: the later line is refused
        {"call_id": "stored"},  # attempt 0 of a call already in the workspace
    ]
    try:
        _stage(con, rows)
        full = _checked(con, "ingest/proxy_checked")
        quick = _checked(con, "ingest/proxy_checked_quick")
    finally:
        con.execute("delete from attempts")
    assert len(full) == len(rows)
    refused = {ln for ln, reason, _ in full if reason is not None}
    # Stricter by one attempt: the first of the two lines giving a call's attempt number
    # (the full checks refuse the second, the quick test both).
    assert {ln for ln, reason, _ in quick if reason is not None} == refused | {len(rows) - 2}
    assert 1 not in refused
    assert {2, 3, 4, len(rows) - 1, len(rows)} <= refused
    assert len(refused) < len(rows) - 5  # the edge values that pass are passed by both


def test_on_a_clean_file_the_quick_table_is_the_full_one(con: duckdb.DuckDBPyConnection) -> None:
    # With no reason anywhere, t_planned_filled (attempt 0's t_sent of the call, else its
    # earliest) is the same in both tables.
    rows = [
        {"call_id": "a", "attempt": 0.0, "t_sent": T + 2, "t_end": T + 3},
        {"call_id": "a", "attempt": 1.0, "t_sent": T + 1, "t_end": T + 4},
        {"call_id": "b", "attempt": 1.0, "t_sent": T + 5, "t_end": T + 6},
        {"call_id": "b", "attempt": 2.0, "t_sent": T + 4, "t_end": T + 6},
        {"call_id": "c", "attempt": 0.0, "t_planned": T, "t_sent": T + 1, "t_end": T + 2},
    ]
    _stage(con, rows)
    full = _checked(con, "ingest/proxy_checked")
    assert [r[1] for r in full] == [None] * 5
    assert [r[2] for r in full] == [T + 2, T + 2, T + 4, T + 4, T]
    assert _checked(con, "ingest/proxy_checked_quick") == full


def test_an_ingest_refusing_an_attempt_names_the_full_checks_reason(tmp_path: Path) -> None:
    # The driver makes proxy_checked again with every reason when the quick test refused
    # some attempt: the error of fail mode and the reject of skip mode say the real reason.
    lines = (INCIDENT / "proxy.jsonl").read_text().splitlines()
    src = write_lines(tmp_path / "proxy.jsonl", [*lines, lines[1]])
    why = "already appears on line 2; expected distinct attempt numbers per call"
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "fail.duckdb", src)
    assert (err.value.line, why in err.value.reason) == (len(lines) + 1, True)
    ingest(tmp_path / "skip.duckdb", src, on_error="skip")
    got = rows(tmp_path / "skip.duckdb", "select line, reason from rejects")
    assert [(ln, why in reason) for ln, reason in got] == [(len(lines) + 1, True)]
    assert rows(tmp_path / "skip.duckdb", "select count(*) from attempts") == [(len(lines),)]
