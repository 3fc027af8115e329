"""The canonical proxy and engine formats in CSV, read line by line in Python: the exact path.

DuckDB's CSV reader (queries/ingest/{proxy,engine}_read_csv.sql) is the fast path. It stops
at a row with too few or too many fields, counts rows rather than physical lines (a blank
line shifts every later line number), and clashes with a column named like one of its own
(`ordinality`). This reader takes over in those cases: Python's csv module reads the file
(gzip or not) with each record's first physical line, and

- a row with more or fewer fields than the header, a line whose bytes are not UTF-8 (or hold
  a NUL byte) is staged as a refused record with its line and text (a reject in skip mode,
  `FILE:LINE: reason` in fail mode), and the rest of the file is read;
- blank and whitespace-only lines are no records (as in JSON Lines);
- an empty field is NULL, as DuckDB's reader reads it (`t_planned` left empty is absent, not
  a time that cannot be read);
- the known columns go to DuckDB as text in Arrow batches (registered as _relplan_csv_batch),
  where the same typed-row macros as the other readers convert and check them
  (queries/ingest/{proxy,engine}_read_csv_batch.sql); the columns relplan does not know stay
  in the raw text only, so no name in the header can collide with SQL.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from relplan import sql
from relplan.errors import InputError
from relplan.ingest.files import GZIP_MAGIC, UTF8_BOM, FileInfo, LineError, bounded_lines
from relplan.ingest.stage import BATCH_ROWS, StageWriter

# Column names DuckDB's CSV reader adds itself (queries/ingest/macros.sql, rp_csv_rows): a
# header holding one of them is read here.

if TYPE_CHECKING:
    import duckdb


RESERVED = frozenset({"ordinality", "_ln"})
MAX_FIELD = 16 * 1024 * 1024  # as the DuckDB reader's max_line_size
# The query that copies one batch of rows into the stage table of each kind.
_BATCH_QUERY = {
    "proxy": "ingest/proxy_read_csv_batch",
    "engine": "ingest/engine_read_csv_batch",
}

csv.field_size_limit(MAX_FIELD)


def header(info: FileInfo) -> list[str]:
    """The column names of the file's header row (line 1); an empty name is `column<i>`, as
    DuckDB names it (1-based)."""
    try:
        text = info.head.split(b"\n", 1)[0].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"bytes that are not UTF-8 at column {exc.start + 1} of the header; expected UTF-8"
            " text",
            str(info.path),
            1,
        ) from exc
    try:
        first = next(csv.reader(io.StringIO(text.removesuffix("\r"))), [])
    except csv.Error as exc:  # a lone carriage return inside an unquoted name
        raise InputError(
            "a line break inside an unquoted column name; expected comma-separated column"
            " names on one line",
            str(info.path),
            1,
        ) from exc
    names = [n.strip() or f"column{i}" for i, n in enumerate(first, start=1)]
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise InputError(
                f"column {n!r} appears twice in the header; expected each column once",
                str(info.path),
                1,
            )
        seen.add(n)
    return names


@dataclass
class _Record:
    line: int  # its first physical line
    text: str  # its lines as read (bad bytes replaced)
    fields: list[str]
    fault: str | None  # why it cannot be read at all


def _lines(path: Path) -> Iterator[tuple[str, str | None]]:
    """(text with its newline, why the line is unreadable or None) for every physical line."""
    with path.open("rb") as raw:
        gz = raw.read(2) == GZIP_MAGIC
    opener = gzip.open if gz else open
    try:
        with opener(path, "rb") as f:
            for n, line in bounded_lines(f, path):
                if n == 1:
                    line = line.removeprefix(UTF8_BOM)
                try:
                    text = line.decode("utf-8")
                except UnicodeDecodeError as exc:
                    yield (
                        line.decode("utf-8", errors="replace"),
                        LineError(
                            f"bytes that are not UTF-8 at column {exc.start + 1}; expected UTF-8"
                            " text"
                        ),
                    )
                    continue
                if "\x00" in text:
                    yield text.replace("\x00", "\ufffd"), "a NUL byte; expected text"
                    continue
                yield text, None
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"cannot read: {exc}", str(path)) from exc


def records(path: Path) -> Iterator[_Record]:
    """Every record after the header, with its first physical line; blank lines skipped."""
    pending: list[tuple[str, str | None]] = []

    def source() -> Iterator[str]:
        for text, fault in _lines(path):
            pending.append((text, fault))
            yield text

    reader = csv.reader(source())
    try:
        next(reader, None)  # the header (header() read it)
        while True:
            start = reader.line_num + 1
            pending.clear()
            try:
                fields = next(reader)
            except StopIteration:
                return
            text = "".join(t for t, _ in pending).rstrip("\r\n")
            if not text.strip():
                continue
            fault = next((f for _, f in pending if f is not None), None)
            yield _Record(start, text, fields, fault)
    except csv.Error as exc:
        raise InputError(f"not valid CSV ({exc})", str(path), reader.line_num) from exc


def stage_csv_lines(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    kind: str,
    source_id: int,
    names: list[str],
    known: tuple[str, ...],
    keep_raw: bool,
) -> None:
    """Stage every record of a canonical CSV file (see the module docstring)."""
    cols = [(i, n) for i, n in enumerate(names) if n in known]
    width = len(names)
    refused = StageWriter(con, f"stage_{kind}")
    query = _BATCH_QUERY[kind]
    lns: list[int] = []
    raws: list[str | None] = []
    values: list[list[str | None]] = [[] for _ in cols]

    def flush() -> None:
        if not lns:
            return
        import pyarrow as pa  # here, not at import: listing the adapters needs no pyarrow

        batch = pa.table(
            {
                "_ln": pa.array(lns, pa.int64()),
                "_raw": pa.array(raws, pa.string()),
                **{n: pa.array(values[j], pa.string()) for j, (_, n) in enumerate(cols)},
            }
        )
        con.register("_relplan_csv_batch", batch)
        try:
            sql.run(con, query, {"source_id": source_id})
        finally:
            con.unregister("_relplan_csv_batch")
        lns.clear()
        raws.clear()
        for v in values:
            v.clear()

    for rec in records(path):
        why = rec.fault
        if why is None and len(rec.fields) != width:
            what = "fewer" if len(rec.fields) < width else "more"
            why = LineError(
                f"{len(rec.fields)} fields, {what} than the header's {width}; expected one field"
                " per column"
            )
        if why is not None:
            refused.add(
                source_id=source_id, ln=rec.line, raw=rec.text, perr=why, origin="canonical"
            )
            continue
        lns.append(rec.line)
        raws.append(json.dumps(dict(zip(names, rec.fields, strict=True))) if keep_raw else None)
        for j, (i, _) in enumerate(cols):
            # An empty field is no value, as DuckDB's CSV reader (the fast path) reads it.
            values[j].append(rec.fields[i] or None)
        if len(lns) >= BATCH_ROWS:
            flush()
    flush()
    refused.flush()
