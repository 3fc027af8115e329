"""What detection sees of a file: its head, read once and looked at by every adapter's
recogniser (relplan/ingest/registry.py). Shared by the family packages; imports none of them.

`Head` computes each view of the first 64 KiB on first use: the first non-blank line, whether
the content is JSON (first character `{` or `[`), the keys of its JSON records, the whole JSON
document when no line is a record, the header of a CSV file, the columns of a Parquet file.
"""

from __future__ import annotations

import json
import os
import re
import threading
from functools import cached_property
from typing import TYPE_CHECKING, Any

from relplan.errors import InputError
from relplan.ingest.files import PARQUET_MAGIC, FileInfo, read_document
from relplan.ingest.outcome import say
from relplan.values import num

if TYPE_CHECKING:
    import duckdb

# How sure a recogniser is, by what it saw (registry.Adapter.recognise returns one of these or
# a value between them). A format's own marker (magic bytes, `# SCRAPE`) is CERTAIN; a set of
# keys or a line shape only that format writes is SIGNATURE; keys a format shares with
# others is LIKELY; a shape several formats share is LOOSE; `--kind` alone is HINTED.
CERTAIN = 1.0
SIGNATURE = 0.9
LIKELY = 0.7
LOOSE = 0.5
HINTED = 0.05
# Above every claim on the same content: an Envoy text line starting `[` beats the JSON view.
FIRST = 0.98


def envoy_key(key: str) -> str:
    """Envoy field names as users spell them: START_TIME, %START_TIME%, start_time, x-request-id."""
    return key.strip().strip("%").lower().replace("-", "_")


def kind_from_keys(keys: set[str]) -> str | None:
    """proxy or engine, from the columns/keys of canonical records."""
    if "call_id" in keys or {"outcome", "t_sent"} <= keys:
        return "proxy"
    if keys & {"type", "event", "step", "t_issue", "prompt_computed"} and (
        "execution_id" in keys or "step" in keys or "type" in keys
    ):
        return "engine"
    return None


_PARQUET_COLUMNS: dict[tuple[str, int], list[str]] = {}


def parquet_columns(info: FileInfo) -> list[str]:
    key = (str(info.path), info.size)
    if key not in _PARQUET_COLUMNS:
        _PARQUET_COLUMNS.clear()
        _PARQUET_COLUMNS[key] = _read_parquet_columns(info)
    return _PARQUET_COLUMNS[key]


# One in-memory DuckDB per process reads the footers (opening one costs about 15 ms of CPU,
# reading a footer about 1 ms), by one thread at a time; a forked child opens its own.
_FOOTERS: dict[int, duckdb.DuckDBPyConnection] = {}
_FOOTERS_LOCK = threading.Lock()


def _read_parquet_columns(info: FileInfo) -> list[str]:
    """Top-level column names from the Parquet footer (DuckDB reads only the metadata; pyarrow
    would cost its import, about a third of a second, on every Parquet ingest)."""
    import duckdb

    from relplan import sql
    from relplan.ingest.files import duck_path

    with _FOOTERS_LOCK:
        con = _FOOTERS.get(os.getpid())
        if con is None:
            _FOOTERS.clear()
            con = _FOOTERS[os.getpid()] = duckdb.connect(":memory:", config={"threads": 1})
        try:
            described = sql.rows(con, "ingest/parquet_types", {"path": duck_path(str(info.path))})
        except duckdb.Error as exc:
            raise InputError(
                f"not a readable Parquet file ({first_line_of(exc)})", str(info.path)
            ) from exc
    return [str(r["column_name"]) for r in described]


def first_line_of(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def first_text_line(info: FileInfo) -> str:
    text = info.head.decode("utf-8", errors="replace")
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def head_keys(info: FileInfo, max_lines: int = 200) -> set[str]:
    """Keys of the JSON objects among the first lines (complete ones only), when the head
    looks like JSON Lines: the first line is an object, or at least half the lines are (so a
    malformed first record still reads as JSON Lines, while a pretty-printed document, whose
    lines are mostly fragments, does not). Empty otherwise."""
    keys: set[str] = set()
    lines = [ln for ln in info.head.decode("utf-8", errors="replace").splitlines() if ln.strip()]
    lines = lines[:max_lines]
    objects = 0
    first_is_object = False
    for i, line in enumerate(lines):
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply
            continue
        if isinstance(obj, dict):
            objects += 1
            first_is_object = first_is_object or i == 0
            keys.update(obj)
    return keys if first_is_object or objects * 2 >= len(lines) else set()


class Head:
    """The views of one file's head that recognisers score (see the module docstring)."""

    def __init__(self, info: FileInfo) -> None:
        self.info = info
        self.path = str(info.path)
        self.name = info.path.name.lower().removesuffix(".gz")
        self.parquet = info.head[:4] == PARQUET_MAGIC
        self.empty = not self.parquet and not info.head.strip()

    @cached_property
    def text(self) -> str:
        return "" if self.parquet else self.info.head.decode("utf-8", errors="replace")

    @cached_property
    def first(self) -> str:
        return "" if self.parquet else first_text_line(self.info)

    @cached_property
    def jsonish(self) -> bool:
        """The first line starts a JSON value: the JSON views apply, the text views do not."""
        return self.first.startswith(("{", "["))

    @cached_property
    def columns(self) -> set[str]:
        return set(parquet_columns(self.info)) if self.parquet else set()

    @cached_property
    def keys(self) -> set[str]:
        """Keys of the JSON records (JSON Lines) in the head; empty for anything else."""
        return head_keys(self.info) if self.jsonish else set()

    @property
    def records(self) -> bool:
        """JSON Lines: the head holds JSON objects one a line."""
        return bool(self.keys)

    @cached_property
    def csv_header(self) -> set[str] | None:
        """The column names when the content may be CSV (a `.csv` name or a comma in the first
        line, and not JSON)."""
        if self.parquet or self.jsonish or not (self.name.endswith(".csv") or "," in self.first):
            return None
        return {c.strip().strip('"') for c in self.first.split(",")}

    @cached_property
    def _document(self) -> tuple[Any, Exception | None]:
        """The whole JSON document, when the content is JSON but no line is a record (a
        pretty-printed object, an array). Too large or nested too deeply is an error at once;
        other parse failures are kept (`document_error`) for the catch-all to name."""
        if not self.jsonish or self.records:
            return None, None
        info = self.info
        if info.size > 256 * 1024 * 1024:
            raise InputError(
                f"the first line is not a whole JSON record within 16 MiB, and as one JSON"
                f" document the file ({num(info.size / 2**20, 0)} MiB) is larger than the 256 MiB"
                " read whole; expected JSON Lines (one record a line) or a smaller document:"
                " split it",
                self.path,
                1,
            )
        raw = read_document(info, "a JSON document")  # bounded, whatever gzip says
        try:
            return json.loads(raw.decode("utf-8")), None
        except RecursionError as exc:
            head = info.head
            line = head[: len(head) - len(head.lstrip())].count(b"\n") + 1
            raise InputError(
                "JSON nested too deeply to read; expected JSON Lines or a JSON document",
                self.path,
                line,
            ) from exc
        except (ValueError, UnicodeDecodeError, OSError, EOFError) as exc:
            return None, exc

    @property
    def document(self) -> Any:
        """The parsed JSON document, or None (not a document, or not valid JSON)."""
        return self._document[0]

    @property
    def is_document(self) -> bool:
        return self._document[0] is not None

    @property
    def document_error(self) -> Exception | None:
        return self._document[1]

    @property
    def first_object(self) -> dict[str, Any] | None:
        """The document itself when an object, else its first item when that is one."""
        doc = self.document
        first = doc[0] if isinstance(doc, list) and doc else doc
        return first if isinstance(first, dict) else None

    def describe(self) -> str:
        """What the content looks like, in words, for a message that names none of ours."""
        if self.parquet:
            return say("parquet_columns", columns=sorted(self.columns))
        if self.empty:
            return "an empty file"
        if self.records:
            return say("record_keys", keys=sorted(self.keys))
        if self.first_object is not None:
            return say("document_keys", keys=sorted(self.first_object))
        if self.jsonish:
            return "a JSON document that is none of relplan's inputs"
        if self.csv_header is not None and self.name.endswith(".csv"):
            return say("csv_header", header=self.first)
        return "text in none of relplan's input formats"

    def starts(self) -> str:
        """How the text lines start (the first line's first words), for messages."""
        words = self.first.split()
        return " ".join(words[:4])[:60]


def text_fields(head: Head) -> list[str]:
    """Field names a message can suggest for `--map`: the keys, the CSV header, or the
    `key=value` / `key:` words of the first line."""
    if head.records:
        return sorted(head.keys)
    if head.first_object is not None:
        return sorted(head.first_object)
    cols = head.csv_header
    if cols is not None and (
        head.name.endswith(".csv") or all(re.fullmatch(r"[\w.\-]+", c) for c in cols)
    ):
        return sorted(cols)
    return sorted({m.group(1) for m in re.finditer(r"([A-Za-z_][\w.\-]*)[=:]", head.first)})[:12]
