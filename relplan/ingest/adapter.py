"""How an input format declares itself: one `Adapter` per format, at the end of its module in a
family package (canonical, metrics, vllm, otel, gateways, loadtests, cluster).

relplan/ingest/registry.py finds every declaration; detection, the `--format`/`--kind` help,
the catch-all "cannot tell" message, `inspect` and the index of docs/formats.md are made from
them (docs/development.md, "Adding an input format").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

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


T = TypeVar("T")


@dataclass(frozen=True)
class InputOption(Generic[T]):
    """One input flag a format reads, declared once, in the module of the format that owns it
    (or, for a flag several formats of a family share, in that family's `options.py`).

    Every command that reads inputs (`relplan ingest`, `relplan report PATH`) offers it, made
    from the registry (relplan/cli/options.py); `IngestOptions(field=value)` sets it from
    Python, and the reader reads it with `OPTION.of(opts)`.
    """

    field: str  # the IngestOptions keyword, and the flag's name with `-` for `_`
    type: type  # the flag's value as typed: str, int, float or Path
    help: str
    default: T
    flags: tuple[str, ...] = ()  # default: `--<field with - for _>`; the first is its name
    metavar: str | None = None
    # The flag's text -> the stored value, raising relplan.errors.UsageError naming the flag
    # (a time flag to epoch seconds); applied to values given on the command line.
    convert: Callable[[Any], T] | None = None
    exists: bool = False  # a Path flag: the file must exist

    @property
    def names(self) -> tuple[str, ...]:
        return self.flags or ("--" + self.field.replace("_", "-"),)

    @property
    def flag(self) -> str:
        return self.names[0]

    def of(self, opts: IngestOptions) -> T:
        """This option's value in `opts` (its default when not set)."""
        return cast(T, opts.given.get(self.field, self.default))


@dataclass(frozen=True)
class Example:
    """A file of this format under tests/data/ and where it was published or recorded."""

    path: str  # relative to the repository root
    source: str  # URL of the published original, or the lab run it was recorded on
    # IngestOptions fields it needs (a year for a vLLM log without one, --at for a scrape).
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    # A line the format must refuse when appended to this example: the contract suite's bad
    # record where its own (a broken JSON line, a line of text no record can be) does not
    # apply, as in a server log whose other lines are prose or a CSV row.
    broken: str = ""


@dataclass(frozen=True)
class Adapter:
    name: str  # the `--format` value and `sources.format`
    kinds: tuple[str, ...]  # the `--kind` values its records are (the first is the default)
    family: str  # a FAMILIES key
    summary: str  # one line: what the files are
    tables: tuple[str, ...]  # canonical tables it fills (docs/workspace.md)
    recognise: Recogniser
    read: Reader
    # The input options it reads (every command that reads inputs offers them as flags).
    options: tuple[InputOption[Any], ...] = ()
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
    # The options name this format whatever the files hold (a mapping file, a format string);
    # `--format` still wins.
    chosen: Callable[[IngestOptions], bool] | None = None
    # Its times may be whole seconds (vLLM's log): where a finer source tells the same event
    # inside that second, the finer time is stored (queries/ingest/whole_second_witnesses.sql).
    whole_seconds: bool = False
    # The server that writes it when that server may write one request into two logs of
    # different formats (nginx: `combined` with whole seconds beside a `$msec` JSON log): the
    # whole-second log of the same requests is dropped for the finer one
    # (queries/ingest/whole_second_twins.sql). Formats naming the same server are compared.
    server: str = ""
