"""Adapters for what deployments already have (docs/formats.md: Metrics, vLLM server log, Envoy access log), on realistic samples in
tests/data/ingest/adapters, with hand-checked rows."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

from relplan.errors import InputError
from tests.helpers.fast_read import rows, state
from tests.helpers.ingest import ADAPTERS, INCIDENT, ingest, write_lines

T0 = 1764460800.0  # 2025-11-30T00:00:00Z
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


# --- metrics: OpenMetrics, scrape logs, query_range ---------------------------------------


def test_openmetrics_samples_meta_and_created_dropped(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, INCIDENT / "metrics.om.txt")
    (src,) = rep.sources
    assert (src.kind, src.format, src.rows) == ("metrics", "openmetrics", 8)
    assert src.notes == [
        "dropped 1 `_created` samples (counter creation times, not samples of the counter)"
    ]
    assert rows(
        db,
        "select t, value, source_row from metric_samples"
        " where name = 'vllm:prompt_tokens_total' order by t",
    ) == [(T0, 0.0, 3), (T0 + 5, 2000.0, 4), (T0 + 10, 2500.0, 5)]
    assert rows(
        db,
        "select labels from metric_samples where name = 'vllm:request_success_total' and value = 1",
    ) == [({"engine": "0", "finished_reason": "stop", "model_name": "llama-8b"},)]
    assert rows(db, "select name, type, help from metric_meta order by name") == [
        ("vllm:num_requests_running", "gauge", "Number of requests in model execution batches."),
        ("vllm:prompt_tokens", "counter", "Number of prefill tokens processed."),
        ("vllm:request_success", "counter", "Count of successfully processed requests."),
    ]


def test_scrape_log_takes_each_scrape_time_and_drops_created_gauges(tmp_path: Path) -> None:
    """Two scrapes (epoch, then RFC 3339), 16 samples each of which 4 are `_created` gauges."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, ADAPTERS / "scrape.log")
    (src,) = rep.sources
    assert (src.format, src.rows) == ("scrape", 24)
    assert "dropped 8 `_created` samples" in src.notes[1]
    assert rows(db, "select count(*) from metric_samples where name like '%_created'") == [(0,)]
    assert rows(
        db,
        "select t, value, labels from metric_samples"
        " where name = 'vllm:prompt_tokens_total' order by t",
    ) == [
        (T0, 4000.0, {"engine": "0", "model_name": MODEL}),
        (T0 + 5, 6000.0, {"engine": "0", "model_name": MODEL}),
    ]
    assert rows(
        db,
        "select value from metric_samples where name ="
        " 'vllm:e2e_request_latency_seconds_bucket' and labels['le'] = '+Inf'"
        " order by t",
    ) == [(2.0,), (3.0,)]


def test_scrape_log_with_old_vllm_names_keeps_them_and_says_so(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, ADAPTERS / "scrape_old_names.log")
    notes = rep.sources[0].notes
    assert any("vllm:gpu_cache_usage_perc stored as exported" in n for n in notes)
    assert any("vllm:gpu_prefix_cache_queries_total" in n and "blocks" in n for n in notes)
    assert rows(
        db, "select value, labels from metric_samples where name = 'vllm:gpu_cache_usage_perc'"
    ) == [(0.125, {"model_name": MODEL})]


def test_query_range_json_with_nan(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, ADAPTERS / "query_range.json")
    assert (rep.sources[0].format, rep.sources[0].rows) == ("query_range", 5)
    got = rows(
        db,
        "select t, value, labels['instance'], source_row from metric_samples order by source_row",
    )
    assert [g[0] for g in got] == [T0, T0 + 15, T0 + 30, T0, T0 + 15.5]
    assert [g[1] for g in got][:4] == [0.0, 4.0, 12.0, 1.0]
    assert math.isnan(got[4][1])
    assert got[3][2] == "10.0.0.8:8000"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("# TYPE a gauge\na 1 1764460800\n", 3, "no '# EOF' line at the end"),
        ("a 1 1764460800\n# EOF\na 2 1764460801\n", 3, "content after # EOF"),
        ("a 1\n# EOF\n", 1, "sample has no time"),
        ('a{x="1" 1 1764460800\n# EOF\n', 1, "malformed labels"),
        ('a{x="1"} one 1764460800\n# EOF\n', 1, "value 'one' is not a number"),
    ],
)
def test_bad_openmetrics_names_the_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    p = tmp_path / "m.om.txt"
    p.write_text(text)
    db = tmp_path / "w.duckdb"
    with pytest.raises(InputError) as err:
        ingest(db, p, fmt="openmetrics")
    assert str(err.value).startswith(f"{p}:{line}: {message}"), str(err.value)
    assert state(db) in ({}, {k: [] for k in state(db)})


def test_a_failed_query_range_response_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "q.json"
    p.write_text(json.dumps({"status": "error", "errorType": "bad_data", "error": "parse error"}))
    with pytest.raises(InputError, match="status 'error': parse error"):
        ingest(tmp_path / "w.duckdb", p)


# --- vLLM request logs --------------------------------------------------------------------

V1_EVENTS = [
    # (execution_id, event, t, source_row): Received gives the arrival time, Added the id;
    # "Request ... aborted." repeats the abort of line 8 and adds nothing; the resend of
    # X-Request-Id call-7 at line 10 is a new execution.
    ("chatcmpl-a269fdcb7c6ce890-a8a65d16", "arrived", T0 + 1, 2),
    ("chatcmpl-call-7-0b1c2d3e", "arrived", T0 + 2, 5),
    ("chatcmpl-call-7-0b1c2d3e", "aborted", T0 + 122, 8),
    ("chatcmpl-call-7-9f8e7d6c", "arrived", T0 + 123, 10),
]


def _events(db: Path) -> list[tuple[object, ...]]:
    return rows(db, "select execution_id, event, t, source_row from events order by source_row")


def test_vllm_v1_log_with_year(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, ADAPTERS / "vllm_v1.log", year=2025)
    assert (rep.sources[0].kind, rep.sources[0].format) == ("engine", "vllm_log")
    assert _events(db) == V1_EVENTS
    assert "2 ignored (1 not a vLLM log line, 1 other vLLM line)" in rep.sources[0].notes[0]


def test_vllm_v1_log_with_container_timestamps_needs_no_year(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, ADAPTERS / "vllm_v1_docker.log")
    assert _events(db) == [(e, ev, t + 0.25, ln) for e, ev, t, ln in V1_EVENTS]


def test_vllm_log_without_year_takes_it_from_the_modification_time(tmp_path: Path) -> None:
    """Issue 23: no --year and no dated prefix: the year is inferred, with a note."""
    f = tmp_path / "vllm.log"
    f.write_bytes((ADAPTERS / "vllm_v1.log").read_bytes())
    os.utime(f, (1764547200.0, 1764547200.0))  # 2025-12-01T00:00:00Z, after the log's 11-30
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f)
    assert _events(db) == V1_EVENTS
    assert (
        "vLLM's MM-DD timestamps read in 2025 inferred from the file's modification time"
        " (2025-12-01); pass --year to set it"
    ) in rep.sources[0].notes


def test_vllm_log_year_inferred_across_new_year_is_the_start_year(tmp_path: Path) -> None:
    """Written up to January 2026, the log's 11-30 lines are of 2025, never 2026."""
    f = tmp_path / "vllm.log"
    f.write_bytes((ADAPTERS / "vllm_v1.log").read_bytes())
    os.utime(f, (1767830400.0, 1767830400.0))  # 2026-01-08
    db = tmp_path / "w.duckdb"
    ingest(db, f)
    assert _events(db) == V1_EVENTS


def test_vllm_v0_log_finished_and_aborted_across_new_year(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, ADAPTERS / "vllm_v0.log", year=2025)
    new_year = 1767225600.0  # 2026-01-01T00:00:00Z
    assert _events(db) == [
        ("cmpl-3ab8b1fe7d3946de8143ce0ae9ce9652-0", "arrived", new_year - 2, 1),
        ("cmpl-3ab8b1fe7d3946de8143ce0ae9ce9652-0", "finished", new_year + 3, 3),
        ("cmpl-71db974fad6f4d9ebd9b449c17b3c033-0", "arrived", new_year + 4, 4),
        ("cmpl-71db974fad6f4d9ebd9b449c17b3c033-0", "aborted", new_year + 6, 6),
    ]
    assert any("year advanced 1" in n for n in rep.sources[0].notes)


# --- Envoy access logs --------------------------------------------------------------------


def test_envoy_log_maps_outcomes_and_numbers_attempts_by_start_time(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, ADAPTERS / "envoy.jsonl")
    assert (rep.sources[0].kind, rep.sources[0].format) == ("proxy", "envoy")
    assert rows(
        db,
        "select call_id, attempt, t_planned, t_sent, t_end, outcome, status,"
        " replica, execution_id, source_row from attempts order by call_id, attempt",
    ) == [
        ("call-1", 0, T0, T0, T0 + 120, "client_gone", None, "10.0.0.7:8000", None, 1),
        ("call-1", 1, T0, T0 + 121, T0 + 150.5, "delivered", 200, "10.0.0.7:8000", None, 2),
        ("call-2", 0, T0 + 2, T0 + 2, T0 + 2.003, "shed", 429, None, None, 3),
        # UPSTREAM_REQUEST_ATTEMPT_COUNT 2: Envoy's own first try, known by count only.
        ("call-2", 1, T0 + 2, T0 + 3, T0 + 3, "error", None, None, None, 4),
        ("call-2", 2, T0 + 2, T0 + 3, T0 + 63, "error", 504, "10.0.0.8:8000", None, 4),
        # x-stainless-retry-count went back to 0 here; START_TIME order still says attempt 3.
        ("call-2", 3, T0 + 2, T0 + 70.5, T0 + 72, "delivered", 200, "10.0.0.8:8000", None, 5),
    ]
    assert "x-stainless-retry-count" in rep.sources[0].unknown_columns


def test_envoy_call_id_field_is_configurable(tmp_path: Path) -> None:
    recs = [
        {
            "START_TIME": "2025-11-30T00:00:00Z",
            "DURATION": 1000,
            "RESPONSE_CODE": 200,
            "RESPONSE_FLAGS": "-",
            "x-idempotency-key": "k1",
            "x-request-id": "r1",
        },
        {
            "START_TIME": "2025-11-30T00:00:05Z",
            "DURATION": "2000",
            "RESPONSE_CODE": "200",
            "RESPONSE_FLAGS": "-",
            "x-idempotency-key": "k1",
            "x-request-id": "r2",
        },
    ]
    p = write_lines(tmp_path / "access.jsonl", [json.dumps(r) for r in recs])
    db = tmp_path / "w.duckdb"
    ingest(db, p, call_id_field="x-idempotency-key")
    assert rows(db, "select call_id, attempt, t_end from attempts order by attempt") == [
        ("k1", 0, T0 + 1),
        ("k1", 1, T0 + 7),
    ]


def test_envoy_record_without_the_call_id_field_names_its_line(tmp_path: Path) -> None:
    lines = (ADAPTERS / "envoy.jsonl").read_text().splitlines()
    rec = json.loads(lines[2])
    del rec["x-request-id"]
    p = write_lines(tmp_path / "access.jsonl", [*lines[:2], json.dumps(rec)])
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "w.duckdb", p)
    assert str(err.value).startswith(f"{p}:3: x-request-id or request_id is missing or empty")
