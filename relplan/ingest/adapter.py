"""How an input format declares itself: one `Adapter` per format, at the end of its module in a
family package (canonical, metrics, vllm, otel, gateways, loadtests, cluster).

relplan/ingest/registry.py finds every declaration; detection, the `--format`/`--kind` help,
the catch-all "cannot tell" message, `inspect` and the index of docs/formats.md are made from
them (docs/development.md, "Adding an input format").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

    from relplan.ingest.base import IngestOptions, Staged
    from relplan.ingest.files import FileInfo
    from relplan.ingest.sniff import Head

Reader = Callable[["duckdb.DuckDBPyConnection", "FileInfo", "Staged", "IngestOptions"], None]
# How sure the format is that a head is one of its files: 0 = not ours; relplan/ingest/sniff.py
# names the levels. `kind` is `--kind` when given (a format may claim weakly on it alone).
Recogniser = Callable[["Head", "str | None"], float]

FAMILIES = {
    "canonical": "relplan's own records",
    "metrics": "metrics and the Prometheus API",
    "vllm": "vLLM logs",
    "otel": "OpenTelemetry traces",
    "gateways": "gateway logs",
    "loadtests": "load-test results",
    "cluster": "cluster events",
}


def never(head: Head, kind: str | None) -> float:
    """A format chosen only by an option (`--map`), never by content."""
    return 0.0


@dataclass(frozen=True)
class Example:
    """A file of this format under tests/data/ and where it was published or recorded."""

    path: str  # relative to the repository root
    source: str  # URL of the published original, or the lab run it was recorded on
    # IngestOptions fields it needs (a year for a vLLM log without one, --at for a scrape).
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Adapter:
    name: str  # the `--format` value and `sources.format`
    kinds: tuple[str, ...]  # the `--kind` values its records are (the first is the default)
    family: str  # a FAMILIES key
    summary: str  # one line: what the files are
    tables: tuple[str, ...]  # canonical tables it fills (docs/workspace.md)
    recognise: Recogniser
    read: Reader
    # Input options it reads (relplan/ingest/input_options.py names; every command that reads
    # inputs offers them).
    options: tuple[str, ...] = ()
    examples: tuple[Example, ...] = ()
    doc: str = ""  # anchor in docs/formats.md
    # proxy or engine by content, for a format holding either (canonical records).
    kind_of: Callable[[Head, str | None], str | None] | None = None
    # Line-based: a bad record is FILE:LINE and `--on-error skip` keeps the rest (the
    # contract suite checks both); a JSON document is one record.
    lines: bool = True
    # What its files look like, for the closest formats of the catch-all message: json (JSON
    # records or documents), csv, parquet or text.
    shape: str = "text"
    # Text lines that are no record are passed over as prose (a server log), not refused.
    prose: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)
