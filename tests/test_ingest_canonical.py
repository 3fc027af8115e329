"""Canonical proxy and engine formats (JSONL, JSONL.gz, CSV, Parquet) and run.json round-trip
into the workspace with hand-checked values and their provenance."""

from __future__ import annotations

import gzip
import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from tests.helpers.fast_read import rows
from tests.helpers.ingest import ADAPTERS, INCIDENT, ingest, write_lines

T0 = 1764460800.0  # 2025-11-30T00:00:00Z

# (call_id, attempt, t_planned, t_sent, t_end, outcome, execution_id, attached, t_cancel,
#  status, prompt_tokens, source_row), read off tests/data/ingest/incident/proxy.jsonl:
# c1/1 has no t_planned: it takes t_sent of c1's attempt 0 (T0); c2 gives its own;
# c3's attempts all take t_sent of c3/0 (T0 + 2); the shed attempt has no execution.
EXPECTED_ATTEMPTS = [
    ("c1", 0, T0, T0, T0 + 120, "client_gone", "e1", False, T0 + 120, None, 2000, 1),
    ("c1", 1, T0, T0 + 121, T0 + 150.5, "delivered", "e2", False, None, 200, 2000, 2),
    ("c2", 0, T0 - 0.5, T0 + 1, T0 + 30, "delivered", "e3", False, None, 200, 500, 3),
    ("c3", 0, T0 + 2, T0 + 2, T0 + 2.01, "shed", None, False, None, 429, None, 4),
    ("c3", 1, T0 + 2, T0 + 3, T0 + 40, "delivered", "e4", False, None, 200, 800, 5),
    ("c3", 2, T0 + 2, T0 + 4, T0 + 40, "delivered", "e4", True, None, 200, 800, 6),
]
ATTEMPT_COLUMNS = (
    "call_id, attempt, t_planned, t_sent, t_end, outcome, execution_id, attached, t_cancel,"
    " status, prompt_tokens, source_row"
)


def _attempts(db: Path) -> list[tuple[object, ...]]:
    got = rows(db, f"select {ATTEMPT_COLUMNS} from attempts order by call_id, attempt")
    return [tuple(round(v, 6) if isinstance(v, float) else v for v in r) for r in got]


def test_proxy_jsonl_round_trip_with_defaults_and_line_numbers(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, INCIDENT / "proxy.jsonl")
    assert rep.rows_by_table == {"attempts": 6}
    assert _attempts(db) == EXPECTED_ATTEMPTS
    (src,) = rep.sources
    assert (src.kind, src.format, src.rows, src.rejected) == ("proxy", "jsonl", 6, 0)
    assert (src.t_min, src.t_max) == (T0, T0 + 150.5)
    assert src.unknown_columns == ["x_client"]
    assert rows(db, "select distinct source_id from attempts") == [(src.source_id,)]


def test_proxy_csv_with_rfc3339_times_gives_the_same_attempts(tmp_path: Path) -> None:
    """proxy.csv holds the JSONL's records with some times as RFC 3339 (one at +02:00); the
    CSV's source_row is the line (header = line 1); empty cells are NULL."""
    db = tmp_path / "w.duckdb"
    ingest(db, ADAPTERS / "proxy.csv")
    got = _attempts(db)
    want = [(*r[:11], r[11] + 1) for r in EXPECTED_ATTEMPTS]
    assert got == want


def test_proxy_parquet_round_trip(tmp_path: Path) -> None:
    pq = tmp_path / "proxy.parquet"
    con = duckdb.connect()
    con.execute(
        "copy (select * from read_json($p, format='newline_delimited')) to '"
        + str(pq).replace("'", "''")
        + "' (format parquet)",
        {"p": str(INCIDENT / "proxy.jsonl")},
    )
    con.close()
    db = tmp_path / "w.duckdb"
    rep = ingest(db, pq)
    assert rep.sources[0].format == "parquet"
    assert _attempts(db) == EXPECTED_ATTEMPTS


def test_gzipped_jsonl_is_read_and_hashed_as_stored(tmp_path: Path) -> None:
    gz = tmp_path / "proxy.jsonl.gz"
    gz.write_bytes(gzip.compress((INCIDENT / "proxy.jsonl").read_bytes()))
    db = tmp_path / "w.duckdb"
    rep = ingest(db, gz)
    assert rep.sources[0].format == "jsonl"
    assert _attempts(db) == EXPECTED_ATTEMPTS


def test_engine_jsonl_splits_events_steps_and_stats(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, INCIDENT / "engine.jsonl")
    assert rep.rows_by_table == {"events": 6, "steps": 4, "engine_stats": 1}
    assert rows(
        db,
        "select step, prompt_computed, prompt_cached, decode_tokens, source_row"
        " from steps order by step",
    ) == [
        (1, 1024, 0, 0, 3),
        (2, 976, 0, 1, 5),
        (3, 0, 0, 1, 7),  # prompt_cached absent -> 0
        (4, 48, 1952, 1, 10),
    ]
    assert rows(
        db, "select event, execution_id, prompt_tokens, source_row from events order by source_row"
    ) == [
        ("arrived", "e1", 2000, 1),
        ("scheduled", "e1", None, 2),
        ("first_token", "e1", None, 6),
        ("aborted", "e1", None, 8),
        ("arrived", "e2", 2000, 9),
        ("finished", "e2", None, 11),
    ]
    assert rows(
        db, "select step, num_running, num_batched_tokens, kv_usage, source_row from engine_stats"
    ) == [(1, 1, 1024, 0.05, 4)]


def test_engine_parquet_with_the_union_of_columns_like_the_simulator_writes(tmp_path: Path) -> None:
    pq = tmp_path / "engine.parquet"
    con = duckdb.connect()
    con.execute(
        "copy (select * from read_json($p, format='newline_delimited')) to '"
        + str(pq).replace("'", "''")
        + "' (format parquet)",
        {"p": str(INCIDENT / "engine.jsonl")},
    )
    con.close()
    db = tmp_path / "w.duckdb"
    rep = ingest(db, pq)
    assert (rep.sources[0].kind, rep.sources[0].format) == ("engine", "parquet")
    assert rep.rows_by_table == {"events": 6, "steps": 4, "engine_stats": 1}
    assert rows(db, "select sum(prompt_computed), sum(prompt_cached) from steps") == [(2048, 1952)]


def test_separate_event_and_step_files_without_a_type_column(tmp_path: Path) -> None:
    ev = write_lines(
        tmp_path / "events.jsonl",
        [
            json.dumps({"t": T0, "execution_id": "x", "event": "arrived", "prompt_tokens": 10}),
            json.dumps({"t": T0 + 1, "execution_id": "x", "event": "finished"}),
        ],
    )
    st = write_lines(
        tmp_path / "steps.jsonl",
        [
            json.dumps(
                {
                    "step": 7,
                    "t_issue": T0,
                    "t_done": T0 + 0.1,
                    "execution_id": "x",
                    "prompt_computed": 10,
                }
            ),
        ],
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, ev, st)
    assert [s.kind for s in rep.sources] == ["engine", "engine"]
    assert rep.rows_by_table == {"events": 2, "steps": 1}
    # Both files went through the fast reader into one staging table: each keeps its lines.
    assert rows(db, "select event, source_row from events order by t") == [
        ("arrived", 1),
        ("finished", 2),
    ]
    assert rows(db, "select step, source_row from steps") == [(7, 1)]


def test_blank_lines_are_not_records_and_line_numbers_stay_true(tmp_path: Path) -> None:
    lines = (INCIDENT / "proxy.jsonl").read_text().splitlines()
    p = write_lines(tmp_path / "p.jsonl", [lines[0], "", "   ", lines[1]])
    db = tmp_path / "w.duckdb"
    ingest(db, p)
    assert rows(db, "select attempt, source_row from attempts order by attempt") == [(0, 1), (1, 4)]


def test_run_manifest_and_phases(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, INCIDENT / "run.json")
    assert (rep.sources[0].kind, rep.sources[0].rows) == ("manifest", 4)
    assert rows(
        db,
        "select name, capacity_calls_per_s, deadline_s, delivery_window_s,"
        " overload_phase, t0 from manifests",
    ) == [("pulse-2.7x-retries-cancel", 2.78, 120.0, 840.0, "pulse", T0)]
    assert rows(db, "select name, start_s, end_s from phases order by start_s") == [
        ("base", 0.0, 120.0),
        ("pulse", 120.0, 227.0),
        ("hold", 227.0, 947.0),
    ]


def test_a_directory_ingests_everything_in_one_call(tmp_path: Path) -> None:
    d = tmp_path / "incident"
    shutil.copytree(INCIDENT, d)
    (d / "README.md").write_text("not an input")
    db = tmp_path / "w.duckdb"
    rep = ingest(db, d)
    assert sorted(s.kind for s in rep.sources) == ["engine", "manifest", "metrics", "proxy"]
    assert [s.reason for s in rep.skipped] == ["not a known input (a Markdown document)"]
    assert rep.rows_by_table == {
        "attempts": 6,
        "events": 6,
        "steps": 4,
        "engine_stats": 1,
        "metric_samples": 8,
    }


@pytest.mark.slow
def test_reingesting_the_same_content_adds_nothing_and_says_so(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, INCIDENT)
    copy = tmp_path / "renamed.jsonl"
    shutil.copy(INCIDENT / "proxy.jsonl", copy)
    rep = ingest(db, INCIDENT, copy)
    assert rep.sources == []
    assert rep.rows_by_table == {}
    assert len(rep.skipped) == 5
    assert all("already in the workspace" in s.reason for s in rep.skipped)
    assert rows(db, "select count(*) from attempts") == [(6,)]
    assert rows(db, "select count(*) from sources") == [(4,)]


def test_the_same_content_twice_in_one_call_is_stored_once(tmp_path: Path) -> None:
    copy = tmp_path / "copy.jsonl"
    shutil.copy(INCIDENT / "engine.jsonl", copy)
    db = tmp_path / "w.duckdb"
    rep = ingest(db, INCIDENT / "engine.jsonl", copy)
    assert len(rep.sources) == 1
    assert "earlier in this ingest" in rep.skipped[0].reason
    assert rows(db, "select count(*) from steps") == [(4,)]


@pytest.mark.parametrize(("kind", "fmt"), [("proxy", None), (None, "jsonl")])
def test_kind_and_format_can_be_forced(tmp_path: Path, kind: str | None, fmt: str | None) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, INCIDENT / "proxy.jsonl", kind=kind, fmt=fmt)
    assert (rep.sources[0].kind, rep.sources[0].format) == ("proxy", "jsonl")


def test_large_inputs_stage_in_the_workspace_file_and_leave_no_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inputs above half the memory limit stage in the workspace file (inside the ingest
    transaction); the result is the same and no staging table survives, committed or not."""
    from relplan.errors import InputError
    from relplan.ingest import driver

    monkeypatch.setattr(driver, "memory_limit_bytes", lambda: 0)
    db = tmp_path / "w.duckdb"
    rep = ingest(db, INCIDENT)
    assert rep.rows_by_table == {
        "attempts": 6,
        "events": 6,
        "steps": 4,
        "engine_stats": 1,
        "metric_samples": 8,
    }
    assert _attempts(db) == EXPECTED_ATTEMPTS
    bad = write_lines(tmp_path / "bad.jsonl", ['{"call_id": 1'])
    with pytest.raises(InputError):
        ingest(db, bad)
    assert rows(db, "select count(*) from duckdb_tables() where table_name like 'stage_%'") == [
        (0,)
    ]


# --- the vLLM plugin's fields (schema version 3, issue 26) -----------------------------------

# Lines 21, 57 and 60 of tests/data/lab/traced-no-retries/operator/trace.jsonl.gz (the relplan
# vLLM plugin on the lab, vLLM 0.32.0): a step with prefix-cache hits, and the arrival and end
# of the request whose prompt they served (vllm_iteration is the one field still ignored).
PLUGIN_RECORDS = [
    {"type": "stats", "step": 17, "t_issue": 1796350891.5981486, "num_batched_tokens": 117,
     "prompt_computed": 116, "decode_tokens": 1, "num_preempted": 0, "replica": None,
     "elapsed_ms": 276.04566199988767, "vllm_iteration": 16, "num_running": 2,
     "num_waiting": 0, "kv_usage": 0.004398826979472137, "prefix_queries": 500,
     "prefix_hits": 384},
    {"type": "event", "execution_id": "cmpl-c000001-0-0", "replica": None,
     "t": 1796350891.2839546, "event": "arrived", "prompt_tokens": 500, "max_tokens": 32},
    {"type": "event", "execution_id": "cmpl-c000001-0-0", "replica": None,
     "t": 1796350893.7317905, "event": "finished", "finish_reason": "length",
     "output_tokens": 32, "cached_tokens": 384, "preemptions": 0},
]  # fmt: skip
STATS_V3 = "prompt_computed, decode_tokens, elapsed_ms, num_preempted, prefix_queries, prefix_hits"
EVENTS_V3 = "finish_reason, output_tokens, cached_tokens, preemptions, max_tokens"


def _plugin_file(tmp_path: Path, fmt: str) -> Path:
    if fmt in ("jsonl", "jsonl_lines"):
        gap = [""] if fmt == "jsonl_lines" else []  # a blank line: the line reader
        return write_lines(
            tmp_path / "trace.jsonl", [json.dumps(PLUGIN_RECORDS[0]), *gap]
            + [json.dumps(r) for r in PLUGIN_RECORDS[1:]],
        )  # fmt: skip
    import polars as pl

    # replica is always null: typed as text, so Parquet takes the direct insert
    frame = pl.DataFrame(PLUGIN_RECORDS, infer_schema_length=None).with_columns(
        pl.col("replica").cast(pl.String)
    )
    path = tmp_path / f"trace.{fmt}"
    if fmt == "csv":
        frame.write_csv(path)
    else:
        frame.write_parquet(path)
    return path


@pytest.mark.parametrize("fmt", ["jsonl", "jsonl_lines", "csv", "parquet"])
def test_the_plugins_step_and_finish_fields_are_stored(tmp_path: Path, fmt: str) -> None:
    """Every reader (the fast JSON one, the line reader, CSV, Parquet's direct insert) keeps
    the stats record's prefill/decode split, elapsed time, preemptions and prefix-cache
    lookups, and the events' finish fields and max_tokens."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, _plugin_file(tmp_path, fmt))
    stored = {t: n for t, n in rep.rows_by_table.items() if t != "request_ids"}
    # (request_ids: the staged readers give the arrival's row; Parquet's direct insert, which
    # stages nothing, gives none)
    assert stored == {"events": 2, "engine_stats": 1}
    assert rep.sources[0].unknown_columns == ["vllm_iteration"]
    assert rows(db, f"select step, num_batched_tokens, {STATS_V3} from engine_stats") == [
        (17, 117, 116, 1, 276.04566199988767, 0, 500, 384)
    ]
    assert rows(db, f"select event, {EVENTS_V3} from events order by t") == [
        ("arrived", None, None, None, None, 32),
        ("finished", "length", 32, 384, 0, None),
    ]


def test_an_older_trace_stores_what_it_did_and_null_in_the_new_columns(tmp_path: Path) -> None:
    """tests/data/ingest/incident/engine.jsonl has none of version 3's fields: its rows are
    those of test_engine_jsonl_splits_events_steps_and_stats, the new columns NULL, nothing
    more reported as ignored."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, INCIDENT / "engine.jsonl")
    assert rep.sources[0].unknown_columns == []
    new_stats = " or ".join(f"{c} is not null" for c in STATS_V3.split(", "))
    new_events = " or ".join(f"{c} is not null" for c in EVENTS_V3.split(", "))
    assert rows(db, f"select count(*) from engine_stats where {new_stats}") == [(0,)]
    assert rows(db, f"select count(*) from events where {new_events}") == [(0,)]


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("prefix_hits", 501, "prefix_hits (501) exceed prefix_queries (500)"),
        ("elapsed_ms", -1.5, "elapsed_ms -1.5 is not a duration"),
        ("num_preempted", 0.5, "num_preempted"),
        ("cached_tokens", -3, "cached_tokens"),
    ],
)
def test_a_bad_plugin_field_is_refused_naming_its_line(
    tmp_path: Path, field: str, value: float, said: str
) -> None:
    from relplan.errors import InputError

    records = [dict(r) for r in PLUGIN_RECORDS]
    target = next(r for r in records if field in r and r.get("event") != "arrived")
    target[field] = value
    line = records.index(target) + 1
    path = write_lines(tmp_path / "trace.jsonl", [json.dumps(r) for r in records])
    db = tmp_path / "w.duckdb"
    with pytest.raises(InputError, match=rf"trace\.jsonl:{line}: .*{re.escape(said)}"):
        ingest(db, path)
    assert not db.exists()


def test_a_version_2_workspace_is_read_as_it_is_and_ingest_migrates_it(tmp_path: Path) -> None:
    """A workspace of schema version 2 (events and engine_stats without version 3's
    columns): read-only it reads the new columns as NULL and is left untouched; the next
    ingest adds them (after the provenance columns, as a new workspace has them), keeps
    every stored row and stores the new fields."""
    from relplan import workspace
    from tests.helpers.fast_read import whole_state

    db = tmp_path / "v2.duckdb"
    ingest(db, INCIDENT / "engine.jsonl")
    con = duckdb.connect(str(db))
    for table, cols in (("engine_stats", STATS_V3), ("events", EVENTS_V3)):
        for c in cols.split(", "):
            con.execute(f"alter table {table} drop column {c}")
    con.execute("update relplan_meta set value = '2'")
    con.close()
    before = whole_state(db)
    with workspace.open_workspace(db, read_only=True) as ro:
        assert ro.execute(f"select step, {STATS_V3} from engine_stats").fetchall() == [
            (1, None, None, None, None, None, None)
        ]
        assert ro.execute("select count(*), count(finish_reason) from events").fetchone() == (
            6,
            0,
        )
    assert whole_state(db) == before
    ingest(db, _plugin_file(tmp_path, "jsonl"))
    assert rows(db, "select value from relplan_meta") == [("3",)]
    assert rows(db, f"select step, {STATS_V3} from engine_stats order by step") == [
        (1, None, None, None, None, None, None),
        (17, 116, 1, 276.04566199988767, 0, 500, 384),
    ]
    fresh = tmp_path / "new.duckdb"
    workspace.connect(fresh).close()
    for table in ("events", "engine_stats"):
        order = f"select column_name from duckdb_columns() where table_name = '{table}' order by column_index"
        assert rows(db, order) == rows(fresh, order)


def test_attached_plugin_parquet_gives_the_same_columns_as_a_copy(tmp_path: Path) -> None:
    """`ingest --attach` reads the same fields in place: the views' engine_stats and events
    hold version 3's columns with the values a copy stores."""
    from relplan.ingest import IngestOptions
    from relplan.ingest.attach import attach_globs
    from relplan.workspace import open_workspace

    parts = tmp_path / "parts"
    parts.mkdir()
    _plugin_file(parts, "parquet")
    db = tmp_path / "w.duckdb"
    attach_globs(db, [f"{parts}/*.parquet"], IngestOptions())
    with open_workspace(db, read_only=True) as con:
        stats = con.execute(f"select step, {STATS_V3} from engine_stats").fetchall()
        events = con.execute(f"select event, {EVENTS_V3} from events order by t").fetchall()
    assert stats == [(17, 116, 1, 276.04566199988767, 0, 500, 384)]
    assert events == [
        ("arrived", None, None, None, None, 32),
        ("finished", "length", 32, 384, 0, None),
    ]


def test_the_engine_tables_hold_their_trace_columns_then_version_3s_after_provenance() -> None:
    """queries/schema.sql against relplan/ingest/columns.py ENGINE_TABLE_COLUMNS, and the
    columns after source_row against what the migration adds (workspace.ADDED_IN_3)."""
    from relplan import sql, workspace
    from relplan.ingest.columns import ENGINE_TABLE_COLUMNS

    con = duckdb.connect()
    sql.run(con, "schema")
    for table, want in ENGINE_TABLE_COLUMNS.items():
        cols = [str(r[0]) for r in con.execute(f"describe {table}").fetchall()]
        own = [c for c in cols if c not in ("source_id", "source_row")]
        assert own == list(want)
        after = cols[cols.index("source_row") + 1 :]
        assert tuple(after) == workspace.ADDED_IN_3.get(table, ())
    con.close()
