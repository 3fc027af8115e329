"""rp_engine_reason (queries/ingest/engine_macros.sql) is one coalesce of the checks in the
contract's order, each check's macro bound once: the first broken rule names the record,
whatever comes after it (a later rule broken too, a count too large to cast), and a record
breaking none has no reason."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import duckdb
import pytest

from relplan import sql

ARGS = [
    "type",
    "t",
    "execution_id",
    "event",
    "prompt_tokens",
    "step",
    "t_issue",
    "t_done",
    "prompt_computed",
    "prompt_cached",
    "decode_tokens",
    "num_running",
    "num_waiting",
    "num_batched_tokens",
    "kv_usage",
    "elapsed_ms",
    "num_preempted",
    "prefix_queries",
    "prefix_hits",
    "output_tokens",
    "cached_tokens",
    "preemptions",
    "max_tokens",
    "origin",
]
STEP: dict[str, Any] = {
    "type": "step",
    "execution_id": "r1",
    "step": 7.0,
    "t_issue": 1764460800.0,
    "t_done": 1764460800.5,
    "prompt_computed": 128.0,
    "kv_usage": 0.5,
    "prefix_queries": 500.0,
    "prefix_hits": 100.0,
    "origin": "canonical",
}


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    c = duckdb.connect()
    for name in ("ingest/macros", "ingest/engine_macros"):
        sql.run(c, name)
    yield c
    c.close()


def _reason(con: duckdb.DuckDBPyConnection, **changed: Any) -> str | None:
    row = dict.fromkeys(ARGS) | STEP | changed
    text = ", ".join(
        f"${a}::varchar" if a in ("type", "execution_id", "event", "origin") else f"${a}::double"
        for a in ARGS
    )
    got = con.execute(f"select rp_engine_reason({text})", row).fetchone()
    assert got is not None
    return got[0]  # type: ignore[no-any-return]


def test_a_good_step_has_no_reason(con: duckdb.DuckDBPyConnection) -> None:
    assert _reason(con) is None


@pytest.mark.parametrize(
    ("changed", "said"),
    [
        # a bad time comes before t_done < t_issue
        (
            {"t_issue": 1764460800e3, "t_done": 1.0},
            "t_issue 1764460800000.0 looks like epoch milliseconds",
        ),
        ({"t_done": 1764460799.0}, "t_done (1764460799.0) is before t_issue (1764460800.0)"),
        # a count comes before kv_usage and the prefix rule, and a huge one is no cast error
        ({"step": 0.5, "kv_usage": 2.0}, "step 0.5 is not a whole number >= 0"),
        ({"prefix_hits": 1e300, "prefix_queries": 5.0}, "prefix_hits 1e+300 is too large"),
        ({"kv_usage": 2.0, "elapsed_ms": -1.0}, "kv_usage 2.0 is outside 0..1"),
        ({"prefix_hits": 501.0}, "prefix_hits (501) exceed prefix_queries (500)"),
        ({"type": None, "step": -1.0}, "type is missing"),
    ],
)
def test_the_first_broken_rule_names_the_record(
    con: duckdb.DuckDBPyConnection, changed: dict[str, Any], said: str
) -> None:
    got = _reason(con, **changed)
    assert got is not None
    assert got.startswith(said), got


def test_the_quick_view_refuses_every_record_the_full_checks_refuse(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """The staged engine records are summarised first over ingest/engine_checked_quick.sql
    (rp_engine_ok alone): a record it passed and the full checks refuse would be stored. It
    refuses what they refuse, and of the rest only what rp_engine_ok bounds more tightly."""
    event = {"type": "event", "t": 1764460800.0, "execution_id": "r1", "origin": "canonical"}
    records: list[dict[str, Any]] = [
        STEP,
        {**STEP, "t_issue": 1764460800e3, "t_done": 1.0},
        {**STEP, "t_done": 1764460799.0},
        {**STEP, "step": 0.5},
        {**STEP, "prefix_hits": 1e300, "prefix_queries": 5.0},
        {**STEP, "kv_usage": 2.0},
        {**STEP, "kv_usage": float("nan")},
        {**STEP, "prefix_hits": 501.0},
        {**STEP, "type": None, "prompt_computed": None, "kv_usage": None},  # no type to infer
        {**STEP, "type": "other"},
        {**STEP, "execution_id": None},
        {**STEP, "perr": "step: x is not a number"},
        {"type": "stats", "step": 3.0, "origin": "canonical"},
        {"type": "stats", "step": 3.0, "t_issue": 1764460800.0, "origin": "canonical"},
        {**event, "event": "arrived", "prompt_tokens": 10.0},
        {**event, "event": "arrived"},  # a canonical trace's arrived event needs prompt_tokens
        {**event, "event": "arrived", "origin": "vllm"},  # a vLLM log's need not
        {**event, "event": "arrived", "origin": "vllm", "prompt_tokens": -1.0},
        {**event, "event": "lost"},
        {**event, "event": "finished", "t": None},
        {**STEP, "elapsed_ms": 1e301},  # fine, but past rp_engine_ok's bound
    ]
    sql.run(con, "ingest/stage_tables")
    con.execute(
        "insert into stage_sources values (1, 'e.jsonl', null);"
        " insert into stage_engine by name select unnest($rows, recursive := true)",
        {
            "rows": [
                {**dict.fromkeys(ARGS), "perr": None, **r, "source_id": 1, "ln": ln}
                for ln, r in enumerate(records, start=1)
            ]
        },
    )
    sql.run(con, "ingest/engine_typed")
    refused = {}
    for view in ("ingest/engine_checked", "ingest/engine_checked_quick"):
        sql.run(con, view)
        found = con.execute("select ln from engine_checked where reason is not null")
        refused[view] = {ln for (ln,) in found.fetchall()}
    full = refused["ingest/engine_checked"]
    assert full == {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 18, 19, 20}
    assert refused["ingest/engine_checked_quick"] == full | {len(records)}
