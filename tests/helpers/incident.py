"""A hand-built incident small enough to check on paper, inserted straight into the
workspace tables (the ingest code is built elsewhere; the analyses only read the tables).

Times below are seconds from T0. run.json: capacity 0.05 calls/s, D = 30 s, W = 100 s,
phases base [0, 60), pulse [60, 120), hold [120, 240), overload phase pulse.

Calls (proxy attempts; replica r0 unless noted):
  c1  planned 0    a0 sent 0 -> e1, delivered at 20                    (on time)
  c2  planned 10   a0 sent 10 -> e2, client_gone 40, t_cancel 40; engine aborts e2 at 40.5
                   a1 sent 42 -> e3, delivered at 60                   (retry after an abort)
  c3  planned 60   a0 sent 60 -> e4, client_gone 90, t_cancel 90; engine aborts e4 at 90.25
                   a1 sent 92: shed (no execution)                     (shed retry)
                   a2 sent 95 -> e5, delivered at 115
  c4  planned 65   a0 sent 65 -> e6, client_gone 95 (no cancel)
                   a1 sent 97 attached to e6, delivered at 110         (attached retry)
  c5  planned 70   a0 sent 70 -> e7, client_gone 100; e7 never finishes (no terminal event)
  c6  planned 75   a0 sent 75 -> e8, error at 75.1: the engine refused e8 (rejected)
  c7  planned 80   a0 sent 80 -> e9, client_gone 110; e9 finishes at 115 for nobody
  c8  planned 118  a0 sent 118 -> e10, delivered at 140 (its wait crosses pulse -> hold)
  c9  planned 150  a0 sent 150 -> e1 on replica r1 (an id repeated across replicas), delivered 160
  c10 planned 170  a0 sent 170 -> e12, delivered at 180
  c11 planned 200  a0 sent 200 -> e13, delivered at 205
  c12 planned 230  a0 sent 230: error at 230.5, no execution (an attempt with no execution)

Engine events (prompt tokens on arrived):
  e1  0 arrived(100), 2 scheduled, 4 first_token, 20 finished
  e2  10 arrived(200), 12 scheduled, 16 first_token, 40.5 aborted
  e3  42 arrived(200), 45 scheduled, 50 first_token, 60 finished
  e4  60 arrived(300), 70 scheduled, 90.25 aborted               (aborted before first output)
  e5  95 arrived(300), 96 scheduled, 100 first_token, 115 finished
  e6  65 arrived(100), 75 scheduled, 80 first_token, 82 preempted, 84 scheduled, 110 finished
  e7  70 arrived(400), 100 scheduled, 105 first_token             (no terminal event)
  e8  75 arrived(500), 75.1 rejected
  e9  80 arrived(250), 85 scheduled, 90 first_token, 115 finished
  e10 118 arrived(200), 131 scheduled, 133 first_token, 140 finished
  e1@r1 150 arrived(90), 151 scheduled, 152 first_token, 160 finished
  e12 170 arrived(60), 171 scheduled, 172 first_token, 180 finished
  e13 200 arrived(50), 201 scheduled, 202 first_token, 205 finished

Steps (t_issue, t_done, execution, prompt_computed / prompt_cached / decode):
  (2,4) e1 100/0/1   (12,16) e2 150/50/1   (18,20) e1 0/0/5
  (39,41) e2 0/0/1        in flight at e2's abort (40.5): 1 decode token
  (45,50) e3 200/0/1   (50,52) ghost 30/0/0   (steps of an execution with no event)
  (70,80) e4 150/0/0   (85,91) e4 150/0/0     in flight at e4's abort (90.25): 150 prompt
  (75,80) e6 100/0/1   (84,86) e6 100/0/0     recomputation after e6's preemption at 82
  (86,110) e6 0/0/20   (85,90) e9 250/0/1   (96,100) e5 300/0/1   (100,105) e7 400/0/1
  (131,133) e10 120/80/1   (171,172) e12 60/0/1   (201,202) e13 50/0/1   r1: (151,152) e1 90/0/1

Metrics (counters with a reset; replica from the `pod` label):
  pod r0, every 30 s from 0 to 240:
    vllm:prompt_tokens_total      0, 300, 300, 500, 50 (reset at 120), 150, 250, 250, 250
    vllm:prefix_cache_queries     0, 300, 300, 900, 1000, 100 (reset at 150), 150, 200, 200
  pod r1: both counters 0 at 150 and 90 at 180.
  vllm:num_requests_waiting (pod r0): 0 at 0, 2 at 60, 1 at 120, 0 at 180.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa

from relplan import workspace

T0 = 1_764_460_800.0

ATTEMPTS = [
    # call, attempt, planned, sent, end, outcome, execution, attached, cancel, replica, prompt
    ("c1", 0, 0, 0, 20, "delivered", "e1", False, None, "r0", 100),
    ("c2", 0, 10, 10, 40, "client_gone", "e2", False, 40, "r0", 200),
    ("c2", 1, 10, 42, 60, "delivered", "e3", False, None, "r0", 200),
    ("c3", 0, 60, 60, 90, "client_gone", "e4", False, 90, "r0", 300),
    ("c3", 1, 60, 92, 92, "shed", None, False, None, None, 300),
    ("c3", 2, 60, 95, 115, "delivered", "e5", False, None, "r0", 300),
    ("c4", 0, 65, 65, 95, "client_gone", "e6", False, None, "r0", 100),
    ("c4", 1, 65, 97, 110, "delivered", "e6", True, None, "r0", 100),
    ("c5", 0, 70, 70, 100, "client_gone", "e7", False, None, "r0", 400),
    ("c6", 0, 75, 75, 75.1, "error", "e8", False, None, "r0", 500),
    ("c7", 0, 80, 80, 110, "client_gone", "e9", False, None, "r0", 250),
    ("c8", 0, 118, 118, 140, "delivered", "e10", False, None, "r0", 200),
    ("c9", 0, 150, 150, 160, "delivered", "e1", False, None, "r1", 90),
    ("c10", 0, 170, 170, 180, "delivered", "e12", False, None, "r0", 60),
    ("c11", 0, 200, 200, 205, "delivered", "e13", False, None, "r0", 50),
    ("c12", 0, 230, 230, 230.5, "error", None, False, None, None, 70),
]

EVENTS = [
    # t, execution, event, prompt, replica
    (0, "e1", "arrived", 100, "r0"),
    (2, "e1", "scheduled", None, "r0"),
    (4, "e1", "first_token", None, "r0"),
    (20, "e1", "finished", None, "r0"),
    (10, "e2", "arrived", 200, "r0"),
    (12, "e2", "scheduled", None, "r0"),
    (16, "e2", "first_token", None, "r0"),
    (40.5, "e2", "aborted", None, "r0"),
    (42, "e3", "arrived", 200, "r0"),
    (45, "e3", "scheduled", None, "r0"),
    (50, "e3", "first_token", None, "r0"),
    (60, "e3", "finished", None, "r0"),
    (60, "e4", "arrived", 300, "r0"),
    (70, "e4", "scheduled", None, "r0"),
    (90.25, "e4", "aborted", None, "r0"),
    (95, "e5", "arrived", 300, "r0"),
    (96, "e5", "scheduled", None, "r0"),
    (100, "e5", "first_token", None, "r0"),
    (115, "e5", "finished", None, "r0"),
    (65, "e6", "arrived", 100, "r0"),
    (75, "e6", "scheduled", None, "r0"),
    (80, "e6", "first_token", None, "r0"),
    (82, "e6", "preempted", None, "r0"),
    (84, "e6", "scheduled", None, "r0"),
    (110, "e6", "finished", None, "r0"),
    (70, "e7", "arrived", 400, "r0"),
    (100, "e7", "scheduled", None, "r0"),
    (105, "e7", "first_token", None, "r0"),
    (75, "e8", "arrived", 500, "r0"),
    (75.1, "e8", "rejected", None, "r0"),
    (80, "e9", "arrived", 250, "r0"),
    (85, "e9", "scheduled", None, "r0"),
    (90, "e9", "first_token", None, "r0"),
    (115, "e9", "finished", None, "r0"),
    (118, "e10", "arrived", 200, "r0"),
    (131, "e10", "scheduled", None, "r0"),
    (133, "e10", "first_token", None, "r0"),
    (140, "e10", "finished", None, "r0"),
    (150, "e1", "arrived", 90, "r1"),
    (151, "e1", "scheduled", None, "r1"),
    (152, "e1", "first_token", None, "r1"),
    (160, "e1", "finished", None, "r1"),
    (170, "e12", "arrived", 60, "r0"),
    (171, "e12", "scheduled", None, "r0"),
    (172, "e12", "first_token", None, "r0"),
    (180, "e12", "finished", None, "r0"),
    (200, "e13", "arrived", 50, "r0"),
    (201, "e13", "scheduled", None, "r0"),
    (202, "e13", "first_token", None, "r0"),
    (205, "e13", "finished", None, "r0"),
]

STEPS = [
    # t_issue, t_done, execution, computed, cached, decode, replica
    (2, 4, "e1", 100, 0, 1, "r0"),
    (12, 16, "e2", 150, 50, 1, "r0"),
    (18, 20, "e1", 0, 0, 5, "r0"),
    (39, 41, "e2", 0, 0, 1, "r0"),
    (45, 50, "e3", 200, 0, 1, "r0"),
    (50, 52, "ghost", 30, 0, 0, "r0"),
    (70, 80, "e4", 150, 0, 0, "r0"),
    (85, 91, "e4", 150, 0, 0, "r0"),
    (75, 80, "e6", 100, 0, 1, "r0"),
    (84, 86, "e6", 100, 0, 0, "r0"),
    (86, 110, "e6", 0, 0, 20, "r0"),
    (85, 90, "e9", 250, 0, 1, "r0"),
    (96, 100, "e5", 300, 0, 1, "r0"),
    (100, 105, "e7", 400, 0, 1, "r0"),
    (131, 133, "e10", 120, 80, 1, "r0"),
    (171, 172, "e12", 60, 0, 1, "r0"),
    (201, 202, "e13", 50, 0, 1, "r0"),
    (151, 152, "e1", 90, 0, 1, "r1"),
]

_R0_PROMPT = [0, 300, 300, 500, 50, 150, 250, 250, 250]
_R0_QUERIES = [0, 300, 300, 900, 1000, 100, 150, 200, 200]
METRICS = (
    [(30 * i, "vllm:prompt_tokens_total", "r0", v) for i, v in enumerate(_R0_PROMPT)]
    + [(30 * i, "vllm:prefix_cache_queries", "r0", v) for i, v in enumerate(_R0_QUERIES)]
    + [(150, "vllm:prompt_tokens_total", "r1", 0), (180, "vllm:prompt_tokens_total", "r1", 90)]
    + [(150, "vllm:prefix_cache_queries", "r1", 0), (180, "vllm:prefix_cache_queries", "r1", 90)]
    + [(t, "vllm:num_requests_waiting", "r0", v) for t, v in ((0, 0), (60, 2), (120, 1), (180, 0))]
)

MANIFEST = {
    "name": "fixture-incident",
    "capacity_calls_per_s": 0.05,
    "deadline_s": 30,
    "delivery_window_s": 100,
    "overload_phase": "pulse",
    "phases": [
        {"name": "base", "start": 0, "end": 60},
        {"name": "pulse", "start": 60, "end": 120},
        {"name": "hold", "start": 120, "end": 240},
    ],
    "t0": T0,
}


def _insert(
    con: duckdb.DuckDBPyConnection, table: str, columns: list[str], rows: list[tuple]
) -> None:  # type: ignore[type-arg]
    """Insert through an Arrow table: DuckDB's executemany is slow past a few hundred rows."""
    data = {c: [r[i] for r in rows] for i, c in enumerate(columns)}
    frame = pa.table(data)  # noqa: F841  (read by the SQL below)
    con.execute(
        f"insert into {table} ({', '.join(columns)}) select {', '.join(columns)} from frame"
    )


def add_source(con: duckdb.DuckDBPyConnection, kind: str, fmt: str, path: str) -> int:
    sid = con.execute("select nextval('source_ids')").fetchone()[0]  # type: ignore[index]
    con.execute(
        "insert into sources (source_id, path, kind, format, sha256, rows, ingested_at)"
        " values (?, ?, ?, ?, ?, 0, now())",
        [sid, path, kind, fmt, f"sha-{sid}-{path}"],
    )
    return int(sid)


def insert_attempts(con: duckdb.DuckDBPyConnection, rows: list[tuple], t0: float = T0) -> None:  # type: ignore[type-arg]
    sid = add_source(con, "proxy", "jsonl", "proxy.jsonl")
    _insert(
        con,
        "attempts",
        [
            "call_id",
            "attempt",
            "t_planned",
            "t_sent",
            "t_end",
            "outcome",
            "execution_id",
            "attached",
            "t_cancel",
            "replica",
            "prompt_tokens",
            "source_id",
            "source_row",
        ],
        [
            (
                c,
                a,
                t0 + p,
                t0 + s,
                t0 + e,
                o,
                x,
                att,
                None if k is None else float(t0 + k),
                r,
                pt,
                sid,
                i + 1,
            )
            for i, (c, a, p, s, e, o, x, att, k, r, pt) in enumerate(rows)
        ],
    )


def insert_events(con: duckdb.DuckDBPyConnection, rows: list[tuple], t0: float = T0) -> None:  # type: ignore[type-arg]
    sid = add_source(con, "engine", "jsonl", "engine-events.jsonl")
    _insert(
        con,
        "events",
        ["t", "execution_id", "event", "prompt_tokens", "replica", "source_id", "source_row"],
        [(t0 + t, x, ev, p, r, sid, i + 1) for i, (t, x, ev, p, r) in enumerate(rows)],
    )


def insert_steps(con: duckdb.DuckDBPyConnection, rows: list[tuple], t0: float = T0) -> None:  # type: ignore[type-arg]
    sid = add_source(con, "engine", "jsonl", "engine-steps.jsonl")
    _insert(
        con,
        "steps",
        [
            "step",
            "t_issue",
            "t_done",
            "execution_id",
            "prompt_computed",
            "prompt_cached",
            "decode_tokens",
            "replica",
            "source_id",
            "source_row",
        ],
        [
            (i + 1, t0 + a, t0 + b, x, c, k, d, r, sid, i + 1)
            for i, (a, b, x, c, k, d, r) in enumerate(rows)
        ],
    )


def insert_metrics(
    con: duckdb.DuckDBPyConnection,
    rows: list[tuple],
    t0: float = T0,
    label: str = "pod",  # type: ignore[type-arg]
) -> None:
    sid = add_source(con, "metrics", "openmetrics", "metrics.om.txt")
    con.executemany(
        "insert into metric_samples (t, name, labels, value, source_id, source_row)"
        " values (?, ?, map([?, 'model_name'], [?, 'm']), ?, ?, ?)",
        [(t0 + t, n, label, r, float(v), sid, i + 1) for i, (t, n, r, v) in enumerate(rows)],
    )


def insert_manifest(con: duckdb.DuckDBPyConnection, manifest: dict) -> None:  # type: ignore[type-arg]
    sid = add_source(con, "manifest", "run_json", "run.json")
    con.execute(
        "insert into manifests (source_id, name, capacity_calls_per_s, deadline_s,"
        " delivery_window_s, overload_phase, t0, notes, manifest)"
        " values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            sid,
            manifest["name"],
            manifest.get("capacity_calls_per_s"),
            manifest.get("deadline_s"),
            manifest.get("delivery_window_s"),
            manifest.get("overload_phase"),
            manifest.get("t0"),
            manifest.get("notes"),
            json.dumps(manifest),
        ],
    )
    con.executemany(
        "insert into phases (source_id, name, start_s, end_s) values (?, ?, ?, ?)",
        [(sid, p["name"], p["start"], p["end"]) for p in manifest.get("phases", [])],
    )


def build_incident(
    path: Path,
    *,
    proxy: bool = True,
    engine: bool = True,
    metrics: bool = True,
    manifest: bool = True,
) -> Path:
    """Write the fixture workspace to `path` (parts can be left out to test the skips): a copy
    of a template built once per test run (tests/helpers/templates.py)."""
    from tests.helpers.templates import from_template

    parts = {"proxy": proxy, "engine": engine, "metrics": metrics, "manifest": manifest}
    if path.exists():  # adding to an existing file: insert, as before
        return _insert_incident(path, **parts)
    return from_template(path, f"incident {parts}", lambda p: _insert_incident(p, **parts))


def _insert_incident(
    path: Path, *, proxy: bool, engine: bool, metrics: bool, manifest: bool
) -> Path:
    con = workspace.connect(path)
    try:
        if proxy:
            insert_attempts(con, ATTEMPTS)
        if engine:
            insert_events(con, EVENTS)
            insert_steps(con, STEPS)
        if metrics:
            insert_metrics(con, METRICS)
        if manifest:
            insert_manifest(con, MANIFEST)
    finally:
        con.close()
    return path
