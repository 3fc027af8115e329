"""vLLM log lines no one has published a real example of, HAND-MADE from the templates in vLLM's
source that tests/data/published/SOURCES.md quotes (V1 abort pair, `Request X failed (...)`,
`Generated response`, the DEBUG details line, newer stats fields, run-in stats lines), plus
bad input. The prefix is the V1 one of the published issue 34503."""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan.errors import InputError
from tests.helpers.fast_read import rows, state
from tests.helpers.ingest import ADAPTERS, ingest, write_lines

T0 = 1764460800.0  # 2025-11-30T00:00:00Z
P = "(APIServer pid=1) INFO 11-30 00:00:{:02d} [{}] "


def line(sec: int, where: str, msg: str) -> str:
    return P.format(sec, where) + msg


def events(db: Path) -> list[tuple[object, ...]]:
    return rows(
        db,
        "select execution_id, event, t - $t0, source_row from events order by source_row, execution_id",
        {"t0": T0},
    )


def test_v1_abort_pair_in_either_order_is_one_event(tmp_path: Path) -> None:
    f = write_lines(
        tmp_path / "v1.log",
        [
            line(1, "async_llm.py:382", "Added request chatcmpl-a-0b1c2d3e."),
            line(2, "async_llm.py:382", "Added request chatcmpl-b-1c2d3e4f."),
            line(3, "async_llm.py:431", "Aborted request(s) chatcmpl-a-0b1c2d3e."),
            line(3, "async_llm.py:402", "Request chatcmpl-a aborted."),
            line(4, "async_llm.py:402", "Request chatcmpl-b aborted."),
            line(4, "async_llm.py:431", "Aborted request(s) chatcmpl-b-1c2d3e4f."),
        ],
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f, year=2025)
    assert events(db) == [
        ("chatcmpl-a-0b1c2d3e", "arrived", 1.0, 1),
        ("chatcmpl-b-1c2d3e4f", "arrived", 2.0, 2),
        ("chatcmpl-a-0b1c2d3e", "aborted", 3.0, 3),
        ("chatcmpl-b-1c2d3e4f", "aborted", 4.0, 5),
    ]
    assert rows(db, "select execution_id, client_id from request_ids order by 1") == [
        ("chatcmpl-a-0b1c2d3e", "a"),
        ("chatcmpl-b-1c2d3e4f", "b"),
    ]
    notes = rep.sources[0].notes
    assert "2 merged (2 second terminal line of an execution)" in notes[0]
    assert any("2 external ids derived" in n for n in notes)


def test_aborted_request_list_gives_one_event_per_id(tmp_path: Path) -> None:
    f = write_lines(
        tmp_path / "v1.log",
        [line(5, "async_llm.py:431", "Aborted request(s) cmpl-x-0-0b1c2d3e,cmpl-x-1-1c2d3e4f.")],
    )
    db = tmp_path / "w.duckdb"
    ingest(db, f, year=2025)
    assert [e[:2] for e in events(db)] == [
        ("cmpl-x-0-0b1c2d3e", "aborted"),
        ("cmpl-x-1-1c2d3e4f", "aborted"),
    ]
    assert rows(db, "select distinct client_id from request_ids") == [("x",)]


def test_failed_requests_are_rejected_or_aborted_by_reason(tmp_path: Path) -> None:
    f = write_lines(
        tmp_path / "v1.log",
        [
            line(
                1,
                "logger.py:49",
                "Received request chatcmpl-bad: params: SamplingParams(n=1), lora_request: None.",
            ),
            line(
                1,
                "async_llm.py:500",
                "Request chatcmpl-bad failed (bad request): max_tokens must be at least 1.",
            ),
            line(2, "async_llm.py:382", "Added request chatcmpl-dead-0b1c2d3e."),
            line(3, "async_llm.py:490", "Request chatcmpl-dead failed (engine dead)."),
            line(4, "async_llm.py:382", "Added request chatcmpl-boom-1c2d3e4f."),
            line(5, "async_llm.py:510", "Request chatcmpl-boom failed due to ValueError: boom."),
        ],
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f, year=2025)
    terminal = [e[:2] for e in events(db) if e[1] != "arrived"]
    assert terminal == [
        ("chatcmpl-bad", "rejected"),
        ("chatcmpl-dead-0b1c2d3e", "aborted"),
        ("chatcmpl-boom-1c2d3e4f", "aborted"),
    ]
    assert any(
        "failed requests: (bad request) 1x, (engine dead) 1x, due to ValueError 1x" in n
        for n in rep.sources[0].notes
    )


def test_generated_response_finishes_and_deltas_are_ignored(tmp_path: Path) -> None:
    out = "output: 'Hi', output_token_ids: [13347], finish_reason: "
    f = write_lines(
        tmp_path / "v1.log",
        [
            line(1, "async_llm.py:382", "Added request chatcmpl-s-0b1c2d3e."),
            line(
                2,
                "logger.py:71",
                "Generated response chatcmpl-s (streaming delta): " + out + "None",
            ),
            line(
                3,
                "logger.py:71",
                "Generated response chatcmpl-s (streaming complete): " + out + "stop",
            ),
            line(4, "async_llm.py:382", "Added request chatcmpl-t-1c2d3e4f."),
            line(5, "logger.py:71", "Generated response chatcmpl-t: " + out + "abort"),
        ],
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f, year=2025)
    assert [e[:2] for e in events(db) if e[1] != "arrived"] == [
        ("chatcmpl-s-0b1c2d3e", "finished"),
        ("chatcmpl-t-1c2d3e4f", "aborted"),
    ]
    assert "1 streaming delta (finish_reason None)" in rep.sources[0].notes[0]


def test_debug_details_line_gives_prompt_tokens_unless_cut(tmp_path: Path) -> None:
    det = "Request {} details: prompt: {}, prompt_token_ids: {}, prompt_embeds shape: None."
    f = write_lines(
        tmp_path / "v1.log",
        [
            line(
                1,
                "logger.py:49",
                "Received request chatcmpl-a: params: SamplingParams(n=1), lora_request: None.",
            ),
            P.format(1, "logger.py:53").replace("INFO", "DEBUG")
            + det.format("chatcmpl-a", "'Hello there'", "[9906, 1070]"),
            line(1, "async_llm.py:382", "Added request chatcmpl-a-0b1c2d3e."),
            # --max-log-len 3 cut both to 3: the count cannot be trusted.
            line(
                2,
                "logger.py:49",
                "Received request chatcmpl-b: params: SamplingParams(n=1), lora_request: None.",
            ),
            P.format(2, "logger.py:53").replace("INFO", "DEBUG")
            + det.format("chatcmpl-b", "'Hel'", "[9906, 1070, 11]"),
            line(2, "async_llm.py:382", "Added request chatcmpl-b-1c2d3e4f."),
        ],
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f, year=2025)
    assert rows(db, "select execution_id, prompt_tokens from events order by 1") == [
        ("chatcmpl-a-0b1c2d3e", 2),
        ("chatcmpl-b-1c2d3e4f", None),
    ]
    assert "1 prompt details without a usable token count" in rep.sources[0].notes[0]
    assert "1 merged (1 prompt details)" in rep.sources[0].notes[0]


def test_newer_stats_fields_are_noted_and_run_in_lines_split(tmp_path: Path) -> None:
    stats = (
        "Engine 001: Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0"
        " tokens/s, Running: 3 reqs, Waiting: 4 reqs, Preemptions: 2, GPU KV cache usage: 50.0%,"
        " Prefix cache hit rate: 25.0%"
    )
    f = write_lines(
        tmp_path / "v1.log",
        [
            line(10, "loggers.py:259", stats),
            # Two records on one physical line, as issue 18115 shows (hand-made here).
            line(20, "loggers.py:118", stats) + "INFO 11-30 00:00:21 [loggers.py:118] " + stats,
        ],
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f, year=2025)
    got = rows(
        db,
        "select t - $t0, source_row, value, labels from metric_samples"
        " where name = 'vllm:num_requests_running' order by t",
        {"t0": T0},
    )
    assert got == [
        (10.0, 1, 3.0, {"engine": "1"}),
        (20.0, 2, 3.0, {"engine": "1"}),
        (21.0, 2, 3.0, {"engine": "1"}),
    ]
    assert rows(
        db, "select value from metric_samples where name = 'vllm:kv_cache_usage_perc' limit 1"
    ) == [(0.5,)]
    assert "stats fields not stored: Preemptions (3x)" in rep.sources[0].notes


def test_v0_prefix_cache_rates_split_into_gpu_and_cpu(tmp_path: Path) -> None:
    msg = (
        "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 9.9 tokens/s, Running: 1"
        " reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 1.0%, CPU KV cache usage:"
        " 0.0%, Prefix cache hit rate: GPU: 40.00%, CPU: 0.00%."
    )
    f = write_lines(tmp_path / "v0.log", ["INFO 11-30 00:00:05 metrics.py:449] " + msg])
    db = tmp_path / "w.duckdb"
    ingest(db, f, year=2025)
    assert rows(
        db, "select name, value from metric_samples where name like '%prefix%' order by name"
    ) == [("vllm:cpu_prefix_cache_hit_rate", 0.0), ("vllm:gpu_prefix_cache_hit_rate", 0.4)]


def test_bad_date_names_the_line_or_is_kept_as_a_reject(tmp_path: Path) -> None:
    f = write_lines(
        tmp_path / "v1.log",
        [
            line(1, "async_llm.py:382", "Added request chatcmpl-a-0b1c2d3e."),
            "INFO 02-30 00:00:02 [async_llm.py:382] Added request chatcmpl-b-1c2d3e4f.",
        ],
    )
    db = tmp_path / "w.duckdb"
    with pytest.raises(InputError) as err:
        ingest(db, f, year=2025)
    assert str(err.value).startswith(f"{f}:2: cannot read the date 02-30 00:00:02 in 2025")
    assert all(not v for v in state(db).values())  # nothing stored
    rep = ingest(db, f, year=2025, on_error="skip")
    assert rep.sources[0].rejected == 1
    assert "1 rejected" in rep.sources[0].notes[0]
    assert rows(db, "select line from rejects") == [(2,)]


def test_events_samples_and_ids_of_one_log_are_one_transaction(tmp_path: Path) -> None:
    """A log feeding three tables is one source: a bad second file stores none of them."""
    db = tmp_path / "w.duckdb"
    bad = write_lines(
        tmp_path / "bad.log", ["INFO 13-01 00:00:01 [async_llm.py:1] Added request x."]
    )
    with pytest.raises(InputError):
        ingest(db, ADAPTERS / "vllm_v1.log", bad, year=2025)
    assert all(not v for v in state(db).values())
    rep = ingest(db, ADAPTERS / "vllm_v1.log", year=2025)
    counts = rows(
        db,
        "select (select count(*) from events), (select count(*) from metric_samples),"
        " (select count(*) from request_ids), (select rows from sources)",
    )
    assert counts == [(4, 6, 3, 13)]
    assert rep.sources[0].rows == 13
    again = ingest(db, ADAPTERS / "vllm_v1.log", year=2025)
    assert again.sources == []
    assert len(again.skipped) == 1
