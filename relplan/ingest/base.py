"""What every reader hands the driver: one staged source and its pending extra inserts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if (
    TYPE_CHECKING
):  # a type only: building IngestOptions (every command's input flags) loads no duckdb
    import duckdb

Finisher = Callable[["duckdb.DuckDBPyConnection"], None]


class FastPathFailed(Exception):
    """A fast reader (DuckDB's typed JSON reader, a direct Parquet insert) could not take a
    record. DuckDB has aborted the transaction: the driver rolls back and reads everything
    again the exact way."""


# The options every format honours; each format's own are declared by its adapter
# (relplan/ingest/adapter.InputOption) and set here by keyword.
GENERAL = ("kind", "fmt", "on_error", "timeout", "exact")


class IngestOptions:
    """How to read the inputs: the general options, and the values of the formats' own input
    options by their `field` (`IngestOptions(year=2025, call_key="Idempotency-Key")`). The
    driver refuses a field no registered format declares (registry.check_options); a format
    reads its own with `OPTION.of(opts)` (relplan/ingest/adapter.InputOption)."""

    __slots__ = ("exact", "fmt", "given", "kind", "on_error", "timeout")

    def __init__(
        self,
        *,
        kind: str | None = None,
        fmt: str | None = None,
        on_error: str = "fail",  # fail | skip
        # A live Prometheus pull (`--prometheus-url`) must finish within this many seconds
        # (`--timeout`), however slowly the server answers.
        timeout: float = 180.0,
        # Set by the driver on its second attempt, after a fast reader failed: read every
        # file the exact way (line by line / converting), which names the bad record.
        exact: bool = False,
        **given: Any,
    ) -> None:
        self.kind = kind
        self.fmt = fmt
        self.on_error = on_error
        self.timeout = timeout
        self.exact = exact
        # The formats' own options given (InputOption.of falls back to the default).
        self.given: dict[str, Any] = dict(given)

    @property
    def skip(self) -> bool:
        return self.on_error == "skip"

    def replace(self, **changes: Any) -> IngestOptions:
        """A copy with some options changed (general or a format's own)."""
        general = {name: getattr(self, name) for name in GENERAL}
        own = dict(self.given)
        for name, value in changes.items():
            (general if name in GENERAL else own)[name] = value
        return IngestOptions(**general, **own)

    def as_dict(self) -> dict[str, Any]:
        """Every option set, general and formats' own, by field name (a cache key's part)."""
        return {**{n: getattr(self, n) for n in GENERAL}, **self.given}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IngestOptions):
            return NotImplemented
        mine = [getattr(self, n) for n in GENERAL]
        return mine == [getattr(other, n) for n in GENERAL] and self.given == other.given

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        set_ = {
            **{n: getattr(self, n) for n in GENERAL if getattr(self, n) != _DEFAULTS[n]},
            **self.given,
        }
        return f"IngestOptions({', '.join(f'{k}={v!r}' for k, v in set_.items())})"


_DEFAULTS: dict[str, Any] = {
    "kind": None,
    "fmt": None,
    "on_error": "fail",
    "timeout": 180.0,
    "exact": False,
}


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
