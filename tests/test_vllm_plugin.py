"""The vLLM plugin's writer (relplan/vllm_plugin/writer.py) on fake stats objects shaped as
vLLM 0.32's (vllm/v1/metrics/stats.py: SchedulerStats, SchedulerIterationDetails,
PrefixCacheStats, IterationStats, PromptTokenStats, FinishedRequestStats). No vLLM needed."""

from __future__ import annotations

import ast
import enum
import json
import logging
import queue
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from relplan.vllm_plugin import writer as w

ROOT = Path(__file__).resolve().parent.parent


class FinishReason(enum.IntEnum):  # vllm/v1/engine/__init__.py
    STOP = 0
    LENGTH = 1
    ABORT = 2


@dataclass
class PrefixCacheStats:
    reset: bool = False
    requests: int = 0
    queries: int = 0
    hits: int = 0


@dataclass
class SchedulerIterationDetails:
    iteration_index: int
    num_ctx_requests: int
    num_ctx_tokens: int
    num_generation_requests: int
    num_generation_tokens: int
    elapsed_ms: float


@dataclass
class SchedulerStats:
    num_running_reqs: int = 0
    num_waiting_reqs: int = 0
    num_skipped_waiting_reqs: int = 0
    step_counter: int = 0
    kv_cache_usage: float = 0.0
    iteration_details: SchedulerIterationDetails | None = None
    prefix_cache_stats: PrefixCacheStats = field(default_factory=PrefixCacheStats)


@dataclass
class PromptTokenStats:
    computed: int = 0
    local_cache_hit: int = 0
    cached_tokens: int = 0
    total: int = 0


@dataclass
class FinishedRequestStats:
    finish_reason: FinishReason
    request_id: str | None = None
    e2e_latency: float = 0.0
    num_prompt_tokens: int = 0
    num_preemptions: int = 0
    num_generation_tokens: int = 0
    max_tokens_param: int | None = None
    queued_time: float = 0.0
    prefill_time: float = 0.0
    inference_time: float = 0.0
    decode_time: float = 0.0
    num_cached_tokens: int = 0


@dataclass
class IterationStats:
    iteration_timestamp: float = 1764460800.0
    num_generation_tokens: int = 0
    prompt_token_stats: PromptTokenStats = field(default_factory=PromptTokenStats)
    num_preempted_reqs: int = 0
    finished_requests: list[FinishedRequestStats] = field(default_factory=list)


def _read(directory: Path) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for p in sorted(directory.glob("*.jsonl")):
        rows.extend(json.loads(line) for line in p.read_text().splitlines())
    return rows


def test_step_record_takes_the_scheduler_split_when_iteration_details_are_on() -> None:
    sched = SchedulerStats(
        num_running_reqs=5,
        num_waiting_reqs=3,
        num_skipped_waiting_reqs=1,
        step_counter=41,
        kv_cache_usage=0.25,
        iteration_details=SchedulerIterationDetails(41, 1, 512, 4, 4, 12.5),
        prefix_cache_stats=PrefixCacheStats(queries=600, hits=88),
    )
    it = IterationStats(num_generation_tokens=5, prompt_token_stats=PromptTokenStats(computed=9))
    row = w.step_row(7, sched, it, "r0")
    assert row == {
        "type": "stats",
        "step": 7,
        "t_issue": 1764460800.0,
        "num_batched_tokens": 516,
        "prompt_computed": 512,
        "decode_tokens": 4,
        "num_preempted": 0,
        "replica": "r0",
        "elapsed_ms": 12.5,
        "vllm_iteration": 41,
        "num_running": 5,
        "num_waiting": 4,
        "kv_usage": 0.25,
        "prefix_queries": 600,
        "prefix_hits": 88,
    }


def test_step_record_without_details_uses_the_iteration_counts() -> None:
    it = IterationStats(
        num_generation_tokens=6,
        prompt_token_stats=PromptTokenStats(computed=300),
        num_preempted_reqs=2,
    )
    row = w.step_row(3, SchedulerStats(step_counter=0, kv_cache_usage=1.7), it, None)
    assert row is not None
    assert (row["prompt_computed"], row["decode_tokens"], row["num_batched_tokens"]) == (
        300,
        6,
        306,
    )
    assert row["num_preempted"] == 2
    assert row["kv_usage"] == 1.0  # clipped into the contract's 0..1
    assert "elapsed_ms" not in row
    assert w.step_row(1, None, None, None) is None


def test_a_finished_request_becomes_its_lifecycle_laid_back_from_the_end() -> None:
    f = FinishedRequestStats(
        FinishReason.LENGTH,
        request_id="chatcmpl-call-7-0",
        e2e_latency=3.0,
        num_prompt_tokens=100,
        num_generation_tokens=20,
        max_tokens_param=20,
        queued_time=1.0,
        prefill_time=0.5,
        decode_time=1.2,
        num_cached_tokens=16,
    )
    rows = w.request_rows(f, 1000.0, None)
    assert [(r["event"], r["t"]) for r in rows] == [
        ("arrived", 997.0),
        ("scheduled", pytest.approx(998.3)),
        ("first_token", pytest.approx(998.8)),
        ("finished", 1000.0),
    ]
    assert rows[0]["prompt_tokens"] == 100
    assert rows[-1]["finish_reason"] == "length"
    assert rows[-1]["cached_tokens"] == 16
    assert {r["execution_id"] for r in rows} == {"chatcmpl-call-7-0"}


def test_an_aborted_request_before_its_first_token_has_no_schedule_or_token() -> None:
    f = FinishedRequestStats(FinishReason.ABORT, request_id="cmpl-x-0", e2e_latency=2.0)
    assert [r["event"] for r in w.request_rows(f, 50.0, "r1")] == ["arrived", "aborted"]
    assert w.request_rows(FinishedRequestStats(FinishReason.STOP), 1.0, None) == []


def test_fields_a_release_drops_or_renames_are_tolerated() -> None:
    class Bare:  # a release with none of the fields relplan reads
        pass

    row = w.step_row(9, Bare(), Bare(), None)
    assert row is not None
    assert row["step"] == 9
    assert row["num_batched_tokens"] == 0
    assert w.finish_reason("STOP") == "stop"
    assert w.finish_reason(FinishReason.ABORT) == "abort"


def test_writer_rotates_parts_and_renames_each_when_complete(tmp_path: Path) -> None:
    tw = w.TraceWriter(tmp_path, rows=4, seconds=60)
    rec = w.TraceRecorder(tw, "r0")
    for i in range(10):
        it = IterationStats(iteration_timestamp=1764460800.0 + i, num_generation_tokens=1)
        rec.record(SchedulerStats(step_counter=i, num_running_reqs=1), it)
    tw.close()
    parts = sorted(tmp_path.iterdir())
    assert [p.suffix for p in parts] == [".jsonl"] * 3  # 4 + 4 + the 2 flushed at close
    rows = _read(tmp_path)
    assert [r["step"] for r in rows] == list(range(1, 11))
    assert tw.written == 10
    assert tw.dropped == 0


def test_a_write_error_disables_the_writer_with_one_log_line(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tw = w.TraceWriter(tmp_path / "d", rows=1, seconds=60)
    (tmp_path / "d").rmdir()  # every part now fails to open
    rec = w.TraceRecorder(tw)
    with caplog.at_level(logging.ERROR, logger="vllm.relplan_trace"):
        for i in range(5):
            rec.record(SchedulerStats(step_counter=i), IterationStats())
        tw.close()
    assert tw.disabled
    assert len([r for r in caplog.records if "disabled" in r.getMessage()]) == 1
    rec.record(SchedulerStats(), IterationStats())  # still no exception


def test_a_stats_object_that_raises_disables_the_recorder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken:
        @property
        def finished_requests(self) -> list[object]:
            raise RuntimeError("shape changed")

    tw = w.TraceWriter(tmp_path, rows=10, seconds=60)
    rec = w.TraceRecorder(tw)
    with caplog.at_level(logging.ERROR, logger="vllm.relplan_trace"):
        rec.record(SchedulerStats(), Broken())
        rec.record(SchedulerStats(), Broken())
    tw.close()
    assert rec.disabled
    assert len(caplog.records) == 1


def test_a_full_queue_drops_and_counts_instead_of_waiting(tmp_path: Path) -> None:
    tw = w.TraceWriter(tmp_path, rows=10, seconds=60, queue_items=1)
    drained = tw._queue
    full: queue.Queue[list[w.Row] | None] = queue.Queue(maxsize=1)
    full.put([{"type": "stats"}])
    tw._queue = full  # a queue the writer thread does not drain
    tw.add([{"type": "stats"}, {"type": "stats"}])
    assert tw.dropped == 2
    tw._queue = drained
    tw.close()
    assert tw.written == 0


def test_from_env_without_a_directory_writes_nothing(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="vllm.relplan_trace"):
        assert w.from_env({}) is None
    assert w.ENV_DIR in caplog.text


def test_the_plugin_imports_only_the_stdlib_and_vllm() -> None:
    allowed = {"__future__", "json", "logging", "os", "queue", "threading", "time", "atexit"}
    allowed |= {"collections", "contextlib", "pathlib", "typing", "vllm", "relplan"}
    for path in (ROOT / "relplan" / "vllm_plugin").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for n in names:
                assert n.split(".")[0] in allowed, (path.name, n)
                if n.startswith("relplan"):
                    assert n.startswith("relplan.vllm_plugin"), (path.name, n)


def test_the_entry_point_names_the_plugin_class() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    assert '[project.entry-points."vllm.stat_logger_plugins"]' in text
    assert 'relplan_trace = "relplan.vllm_plugin.logger:RelplanTraceLogger"' in text


def test_the_trace_joins_the_gateway_attempts_through_the_client_request_id(
    tmp_path: Path,
) -> None:
    """vLLM hands a stat logger its external id (`cmpl-<X-Request-Id>-<i>`); ingest stores a
    request_ids row per arrived execution, so nginx's attempts (X-Request-Id `<call>-<attempt>`)
    take the plugin's execution ids."""
    from tests.helpers.fast_read import rows
    from tests.helpers.ingest import ingest, write_lines
    from tests.test_ingest_gateway_wave2 import _lab_line

    trace = []
    for attempt, (reason, end) in enumerate(
        [(FinishReason.ABORT, 1764460811.0), (FinishReason.LENGTH, 1764460812.0)]
    ):
        f = FinishedRequestStats(
            reason,
            request_id=f"cmpl-c1-{attempt}-0",
            e2e_latency=1.0,
            num_prompt_tokens=10,
            num_generation_tokens=4 * attempt,
            decode_time=0.1 * attempt,
        )
        trace += [json.dumps(r) for r in w.request_rows(f, end, None)]
    db = tmp_path / "w.duckdb"
    ingest(db, write_lines(tmp_path / "trace.jsonl", trace))
    gw = [_lab_line("c1", 0, 504, 1764460811.0), _lab_line("c1", 1, 200, 1764460812.0)]
    ingest(
        db,
        write_lines(tmp_path / "nginx.jsonl", gw),
        call_key="X-Relplan-Call",
        attempt_field="X-Relplan-Attempt",
    )
    assert rows(db, "select * exclude (source_id, source_row) from request_ids order by 1") == [
        ("cmpl-c1-0-0", "cmpl-c1-0-0", "c1-0"),
        ("cmpl-c1-1-0", "cmpl-c1-1-0", "c1-1"),
    ]
    assert rows(db, "select attempt, execution_id from attempts order by attempt") == [
        (0, "cmpl-c1-0-0"),
        (1, "cmpl-c1-1-0"),
    ]


@pytest.mark.parametrize(
    "external",
    ["cmpl-c1-0-0", "cmpl-r001-00005-0-0", "chatcmpl-abc-1", "chat-x", "cmpl-plain", "c1-0", "e17"],
)
def test_the_ingest_query_reads_the_client_id_as_ids_client_id_does(
    tmp_path: Path, external: str
) -> None:
    from relplan.ingest.vllm.ids import client_id
    from tests.helpers.fast_read import rows
    from tests.helpers.ingest import ingest, write_lines

    rec = {"type": "event", "t": 1764460800.0, "execution_id": external, "event": "arrived",
           "prompt_tokens": 3}  # fmt: skip
    db = tmp_path / "w.duckdb"
    ingest(db, write_lines(tmp_path / "t.jsonl", [json.dumps(rec)]))
    got = rows(db, "select client_id from request_ids")
    assert got == ([] if client_id(external) is None else [(client_id(external),)])


def test_once_details_were_seen_a_call_without_them_is_not_a_step(tmp_path: Path) -> None:
    """On the lab (the first traced run, 2026-12-04 02:12, before this rule) 16 of 1,110 record calls carried no
    iteration details and no tokens: idle outputs, not steps; vLLM logged no line for them."""
    writer = w.TraceWriter(tmp_path, seconds=60)
    rec = w.TraceRecorder(writer)
    done = FinishedRequestStats(FinishReason.STOP, request_id="cmpl-a-0", num_generation_tokens=1)
    rec.record(SchedulerStats(), IterationStats())  # before any details: a step (details off)
    on = SchedulerStats(iteration_details=SchedulerIterationDetails(0, 1, 8, 0, 0, 1.0))
    rec.record(on, IterationStats())
    rec.record(SchedulerStats(), IterationStats(finished_requests=[done]))
    writer.close()
    rows = _read(tmp_path)
    assert [(r["step"], r.get("vllm_iteration")) for r in rows if r["type"] == "stats"] == [
        (1, None),
        (2, 0),
    ]
    assert [r["event"] for r in rows if r["type"] == "event"][-1] == "finished"


def test_the_recorder_measures_its_own_cost_and_says_it_in_one_line(tmp_path: Path) -> None:
    writer = w.TraceWriter(tmp_path, rows=2, seconds=60)
    rec = w.TraceRecorder(writer)
    for i in range(5):
        it = IterationStats(iteration_timestamp=1764460800.0 + i, num_generation_tokens=1)
        rec.record(SchedulerStats(num_running_reqs=1), it)
    writer.close()
    assert rec.calls == 5
    assert 0.0 < rec.busy_s < 1.0
    assert writer.cpu_s > 0.0  # the writer thread wrote 3 parts
    line = rec.cost()
    assert line.startswith("relplan trace cost: 5 record() calls took ")
    assert "for 5 rows" in line


def test_every_field_the_plugin_writes_is_stored_but_vllm_iteration(tmp_path: Path) -> None:
    """The writer's records against the engine-trace contract (relplan/ingest/columns.py,
    schema version 3): a step with iteration details and a finished request ingest with every
    field in its column; only vllm_iteration is reported as ignored."""
    from relplan.ingest.columns import ENGINE_COLUMNS
    from tests.helpers.fast_read import rows
    from tests.helpers.ingest import ingest, write_lines

    sched = SchedulerStats(
        num_running_reqs=5,
        num_waiting_reqs=3,
        num_skipped_waiting_reqs=1,
        step_counter=41,
        kv_cache_usage=0.25,
        iteration_details=SchedulerIterationDetails(41, 1, 512, 4, 4, 12.5),
        prefix_cache_stats=PrefixCacheStats(queries=600, hits=88),
    )
    it = IterationStats(
        num_generation_tokens=5,
        prompt_token_stats=PromptTokenStats(computed=9),
        num_preempted_reqs=1,
        iteration_timestamp=1764460800.0,
    )
    step = w.step_row(7, sched, it, "r0")
    assert step is not None
    f = FinishedRequestStats(
        FinishReason.LENGTH,
        request_id="cmpl-c1-0-0",
        e2e_latency=2.0,
        num_prompt_tokens=600,
        num_generation_tokens=32,
        decode_time=0.5,
        prefill_time=0.1,
        num_cached_tokens=88,
        num_preemptions=1,
        max_tokens_param=32,
    )
    ends = w.request_rows(f, 1764460801.0, "r0")
    records = [step, *ends]
    assert {k for r in records for k in r} - set(ENGINE_COLUMNS) == {"vllm_iteration"}
    db = tmp_path / "w.duckdb"
    rep = ingest(db, write_lines(tmp_path / "trace.jsonl", [json.dumps(r) for r in records]))
    assert rep.sources[0].unknown_columns == ["vllm_iteration"]
    assert rows(
        db,
        "select prompt_computed, decode_tokens, elapsed_ms, num_preempted, prefix_queries,"
        " prefix_hits from engine_stats",
    ) == [(512, 4, 12.5, 1, 600, 88)]
    assert rows(
        db,
        "select event, finish_reason, output_tokens, cached_tokens, preemptions, max_tokens"
        " from events order by t, event",
    ) == [
        ("arrived", None, None, None, None, 32),
        ("scheduled", None, None, None, None, None),
        ("first_token", None, None, None, None, None),
        ("finished", "length", 32, 88, 1, None),
    ]
