"""What every reader hands the driver: one staged source and its pending extra inserts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if (
    TYPE_CHECKING
):  # a type only: building IngestOptions (every command's input flags) loads no duckdb
    import duckdb

Finisher = Callable[["duckdb.DuckDBPyConnection"], None]


class FastPathFailed(Exception):
    """A fast reader (DuckDB's typed JSON reader, a direct Parquet insert) could not take a
    record. DuckDB has aborted the transaction: the driver rolls back and reads everything
    again the exact way."""


@dataclass
class IngestOptions:
    kind: str | None = None
    fmt: str | None = None
    on_error: str = "fail"  # fail | skip
    year: int | None = None  # for vLLM log timestamps that lack one
    # When a timestamp-less /metrics scrape was taken (epoch seconds; `--at`), for files whose
    # names carry no time (relplan/ingest/metrics/scrape_time.py).
    at: float | None = None
    call_id_field: str = "x-request-id"  # Envoy access logs: the field holding the call id
    # Gateway logs (docs/formats.md): a header/field naming the call when the log
    # has no stable per-call key (Idempotency-Key, X-Request-Id set by the caller), and the
    # field giving the attempt number (x-stainless-retry-count).
    call_key: str | None = None
    attempt_field: str | None = None
    log_format: str | None = None  # nginx `log_format` / Envoy format string of the log
    map_file: Path | None = None  # a TOML mapping file for any other gateway's log
    # `vllm bench serve` results: wall-clock time (epoch s) of the run's first request start;
    # without it the run is anchored to its `date` field.
    bench_start: float | None = None
    # A live Prometheus pull (`--prometheus-url`) must finish within this many seconds
    # (`--timeout`), however slowly the server answers.
    timeout: float = 180.0
    # Set by the driver on its second attempt, after a fast reader failed: read every file
    # the exact way (line by line / converting), which names the bad record.
    exact: bool = False

    @property
    def skip(self) -> bool:
        return self.on_error == "skip"


@dataclass
class Staged:
    """One source (file or live pull) whose records sit in the staging tables."""

    source_id: int
    path: str
    kind: str
    format: str
    sha256: str
    unknown_columns: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Rows stored outside the staging tables (manifest, phases), counted in sources.rows.
    extra_rows: int = 0
    # Inserts to run inside the ingest transaction (manifests, phases, metric_meta).
    finish: list[Finisher] = field(default_factory=list)
    # Re-stages the source with raw text kept, when skip mode finds bad records that the fast
    # reader staged without it.
    restage_with_raw: Callable[[], None] | None = None
    # Fail mode, engine Parquet with canonical column types: queries that insert straight
    # from the file (no staging). A refused record raises FastPathFailed.
    direct: list[str] = field(default_factory=list)
