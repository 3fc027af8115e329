"""The result of an ingest (`relplan ingest --json` prints it; relplan/text/ingest.py's
`render_ingest` words it for a person)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Literal, cast

from pydantic import Field

from relplan.models import StrictModel

# What an ingest says to a person (its notes and skip reasons), named by a
# code with its numbers and names; relplan/text/ingest.py words each code (one function per
# code, in its SENTENCES table), reached by name as relplan/analyses/wording.py reaches the
# analyses' words, so the ingest never imports relplan.text (tests/test_text_ingest.py checks
# that the table words every code and no other). A refused line's reason is no note: it is a
# LineError worded beside its check (relplan/ingest/files.py).
Said = Literal[
    # driver, attach: why an input adds nothing; whole-second twins
    "already_stored",
    "attached_already",
    "repeated_in_ingest",
    "already_attached",
    "attached_in_place",
    "whole_second_twin",
    "whole_second_finer",
    "refined_times",
    # gateways: how the attempts were read
    "hidden_tries",
    "envoy_attempts",
    "envoy_upstream_retried",
    "litellm_tries_unlogged",
    "mapped",
    "first_byte_unstored",
    "nginx_combined_tail",
    "unkeyed_lines",
    # load tests: how the runs were placed
    "bench_run_placed",
    "bench_summary",
    "guidellm_sampled",
    "guidellm_never_sent",
    # metrics: what was dropped, how the scrape time was found
    "points_dropped",
    "names_matched",
    "created_series",
    "alias_dropped",
    "created_samples",
    "old_metric_name",
    "scrape_time_from_name",
    "scrape_lines",
    "untyped_names",
    # traces: what the spans held
    "span_counts",
    "aborts_may_miss",
    "no_request_span",
    "finish_reasons",
    "spans_without",
    "latencies_nulled",
    "request_ids_repeated",
    "completion_unstored",
    "span_replicas",
    # vLLM's log: its year
    "year_read",
    "year_advanced",
    "late_december_lines",
    # vLLM's log: what its lines held
    "log_lines",
    "prompt_tokens_logged",
    "ids_derived",
    "failed_requests",
    "admission_rejections",
    "access_lines",
    # vLLM's log: its stats lines
    "stats_lines",
    "stats_fields_unmapped",
    "stats_fields_unread",
    "engines_aggregated",
    "iteration_lines",
    "stats_metric_help",
    # inputs relplan cannot tell
    "parquet_columns",
    "record_keys",
    "document_keys",
    "csv_header",
    "unknown_parquet",
    "map_hint",
    "unknown_records",
    "unknown_document",
    "unknown_csv",
    "unknown_text",
    "workload_trace",
    # cluster events
    "kube_events",
    # gateways: how the calls were told
    "envoy_request_id_calls",
    "kong_attempts",
    "kong_request_id_calls",
    "litellm_tries_per_call",
    "litellm_times_utc",
    "drill_headers",
    "nginx_tries_placed",
    "nginx_whole_seconds",
    "nginx_no_duration",
    "nginx_no_upstream",
    "nginx_lines_are_calls",
    "nginx_json_keys",
    # load tests, metrics, attached files: what the source is
    "guidellm_calls",
    "bench_perf_counter",
    "bench_no_status",
    "no_eof",
    "scrapes",
    "scrape_time_given",
    "nothing_matched",
    "hive_partitions",
    # files that are no input
    "not_a_known_input",
    "not_a_regular_file",
    "otel_proto_file",
    "file_kind",
]


def say(code: Said, **values: Any) -> str:
    """The words of one note (see `Said`), from its numbers and names."""
    return _sentences()[code](**values)


@cache
def _sentences() -> Mapping[str, Callable[..., str]]:
    return cast(
        "Mapping[str, Callable[..., str]]", importlib.import_module("relplan.text.ingest").SENTENCES
    )


class SourceReport(StrictModel):
    source_id: int
    path: str
    kind: str = Field(description="proxy | engine | metrics | manifest")
    format: str
    rows: int = Field(description="rows stored from this source, over all tables")
    rejected: int = Field(description="records refused (stored in rejects with --on-error skip)")
    t_min: float | None = Field(description="earliest time stored, UTC epoch seconds")
    t_max: float | None = Field(description="latest time stored, UTC epoch seconds")
    unknown_columns: list[str]
    notes: list[str] = Field(description="what the adapter dropped or assumed")


class SkippedInput(StrictModel):
    path: str
    reason: str


class IngestReport(StrictModel):
    sources: list[SourceReport] = Field(description="sources added by this ingest")
    skipped: list[SkippedInput] = Field(description="inputs that added nothing, and why")
    rows_by_table: dict[str, int] = Field(description="rows added per workspace table")


def display_path(path: str) -> str:
    """A stored (absolute) path as the user typed it, most likely: relative to the current
    directory when it lies inside it."""
    from pathlib import Path

    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
