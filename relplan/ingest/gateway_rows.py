"""What every gateway and load-test adapter shares: turning one log record into attempt rows.

A record (a log line, a JSON object) becomes one or more attempts of one call, or one reason
it cannot (stored as a reject). `AttemptSink` writes them to the proxy staging table and,
at the end, numbers the attempts of each call (queries/ingest/gateway_number_attempts.sql):
  - records that carry their own tries (nginx lists, Kong `tries`, LiteLLM retry counts)
    number them 0..N-1 within the record;
  - records that are each one try of a call shared across records (Envoy, a named call-key
    header) are numbered by t_sent, then line, within the call; with an attempt field (e.g.
    `x-stainless-retry-count`) its value is the attempt number, as the caller counted it.
Tries whose times the log does not give (Envoy's hidden upstream retries, LiteLLM's
retries) are placed at the start of their record with zero length, status and replica
unknown (NULL); a note on the source says how many, so analyses can tell the count is exact
and their timing is not.
"""

from __future__ import annotations

import csv
import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relplan import sql
from relplan.errors import InputError
from relplan.ingest.files import Faults, LineError, faults_for, json_loads, open_text_lines
from relplan.ingest.outcome import say
from relplan.ingest.stage import BATCH_ROWS, StageWriter

if TYPE_CHECKING:
    import duckdb


OUTCOMES = ("delivered", "client_gone", "shed", "error")


def outcome_of(status: int | None, *, reached_upstream: bool = True) -> str:
    """The common outcome rule: 499 and 0 (nginx's and Envoy's "client closed") are
    client_gone; 429 is shed; a refusal that never reached an upstream (503, or any status
    when no upstream was tried) is shed; 1xx-3xx delivered; everything else error."""
    if status is None or status in (0, 499):
        return "client_gone" if status in (0, 499) else "error"
    if status == 429:
        return "shed"
    if not reached_upstream:
        return "shed" if status in (429, 503) else "error"
    return "delivered" if 100 <= status < 400 else "error"


_INT64 = 2**63
# The canonical contract's bound on a token count (queries/ingest/macros.sql): a double holds
# every whole number up to it exactly.
MAX_TOKENS = 2**53


def as_int(value: Any) -> int | None:
    """A whole number from a JSON/text field ('-', '', None, non-numbers and numbers outside
    64 bits, which no column can hold, give None)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -_INT64 <= value < _INT64 else None
    try:
        f = value if isinstance(value, float) else float(str(value).strip())
    except (ValueError, OverflowError):
        return None
    if f != f or abs(f) == float("inf") or f != int(f):
        return None
    n = int(f)
    return n if -_INT64 <= n < _INT64 else None


def logged_int(value: Any, what: str, lo: int, hi: int) -> tuple[int | None, LineError | None]:
    """An optional whole number a log gives: (None, None) when it gives none (absent, null,
    `-`, empty), (n, None) for lo <= n <= hi, else (None, why): a value given but unusable is
    the record's error, never a silent unknown."""
    if value is None or (isinstance(value, str) and value.strip() in ("", "-")):
        return None, None
    n = as_int(value)
    if n is None or not lo <= n <= hi:
        shown = str(value) if len(str(value)) <= 40 else str(value)[:40] + "..."
        return None, LineError(f"{what} {shown!r} is not a whole number in {lo}..{hi}")
    return n, None


def logged_tokens(value: Any, what: str) -> tuple[int | None, LineError | None]:
    """A token count a log gives (logged_int over 0..MAX_TOKENS)."""
    return logged_int(value, what, 0, MAX_TOKENS)


def logged_status(value: Any, what: str) -> tuple[int | None, str | None]:
    """An HTTP status a log gives (logged_int over 0..999; 0 is Envoy's "no response")."""
    return logged_int(value, what, 0, 999)


def as_float(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        f = float(value) if isinstance(value, (int, float)) else float(str(value).strip())
    except (ValueError, OverflowError):
        return None
    return f if f == f and abs(f) != float("inf") else None


def text(value: Any) -> str | None:
    if value is None:
        return None
    s = str(value).strip()
    return None if s in ("", "-") else s


def dig(obj: Any, path: str) -> Any:
    """`a.b.c` in nested dicts (header names with dots: give the full key at the last level)."""
    if isinstance(obj, dict) and path in obj:
        return obj[path]
    head, _, rest = path.partition(".")
    if isinstance(obj, dict) and head in obj and rest:
        return dig(obj[head], rest)
    return None


@dataclass
class AttemptSink:
    """Stages the attempts of one source; counts what the notes report."""

    con: duckdb.DuckDBPyConnection
    source_id: int
    origin: str
    keep_raw: bool
    writer: StageWriter = field(init=False)
    records: int = 0
    attempts: int = 0
    refused: int = 0
    hidden: int = 0  # tries placed at their record's start (times unknown)
    renumber: bool = False

    def __post_init__(self) -> None:
        self.writer = StageWriter(self.con, "stage_proxy")

    def reject(self, ln: int, raw: str, reason: str) -> None:
        self.records += 1
        self.refused += 1
        self.writer.add(source_id=self.source_id, ln=ln, raw=raw, perr=reason, origin=self.origin)

    def call(self, ln: int, raw: str, tries: list[dict[str, Any]], hidden: int = 0) -> None:
        """One record: its tries in order (each a dict of attempt columns, taken over as the
        staged row; `attempt` is the number within the record unless given)."""
        self.records += 1
        self.hidden += hidden
        keep = raw if self.keep_raw else None
        for i, row in enumerate(tries):
            row.setdefault("attached", False)
            row.setdefault("attempt", float(i))
            row.update(source_id=self.source_id, ln=ln, raw=keep, perr=None, origin=self.origin)
            self.writer.rows.append(row)
        self.attempts += len(tries)
        if len(self.writer.rows) >= BATCH_ROWS:
            self.writer.flush()

    def finish(self, notes: list[str]) -> None:
        self.writer.flush()
        if self.renumber:
            q = sql.load("ingest/gateway_number_attempts")
            self.con.execute(q.text, q.bind({"source_id": self.source_id}))
        if self.hidden:
            notes.append(say("hidden_tries", n=self.hidden))


# The most tries one logged request may stand for. Retry policies stop far below it (Envoy's
# default is 1 retry, LiteLLM's num_retries a handful); a count above is a corrupt field, and
# expanding it into rows would fill the memory (10^9 tries).
MAX_TRIES = 1000


def tries_refused(n: int | None, field: str, shown: str) -> LineError | None:
    """Why a logged count of tries cannot be used, or None: a whole number 0..MAX_TRIES
    (`field` names it, `shown` is the value as the log gave it)."""
    if n is None or n < 0:
        return LineError(f"{field} {shown} is not a whole number >= 0")
    if n > MAX_TRIES:
        return LineError(
            f"{field} {shown} is {n}, more than {MAX_TRIES} tries for one request; expected a"
            " retry count (a corrupt field?)"
        )
    return None


def hidden_tries(n: int, t_start: float, base: dict[str, Any]) -> list[dict[str, Any]]:
    """`n` earlier tries known only by count: at t_start, zero length, outcome error (a
    gateway retries after a failure), status and replica unknown."""
    keep: dict[str, Any] = {
        k: base[k] for k in ("call_id", "model", "prompt_tokens", "max_tokens") if k in base
    }
    return [
        {**keep, "t_sent": t_start, "t_end": t_start, "outcome": "error", "status": None}
        for _ in range(n)
    ]


@dataclass(frozen=True)
class Unreadable:
    """A record value standing for a line that could not be read (not UTF-8, skip mode)."""

    reason: str


def refusal(value: Any, default: str) -> str:
    """Why a record that is no object is refused: its own reason if unreadable, else `default`."""
    return value.reason if isinstance(value, Unreadable) else default


def _drained(faults: Faults | None) -> Iterator[tuple[int, str, Any]]:
    for n, text, why in faults.drain() if faults is not None else []:
        yield n, text, Unreadable(why)


def csv_records(path: Path, skip: bool = False) -> Iterator[tuple[int, str, Any]]:
    """(line, raw text, row as a dict) for a CSV file with a header, streaming (gzip-aware;
    bytes that are not UTF-8 raise InputError naming the line, or in skip mode give the line
    with an Unreadable value). `line` is the record's first line."""
    raw_lines: list[str] = []
    faults = faults_for(skip)

    def source() -> Iterator[str]:
        for _, line in open_text_lines(path, faults):
            raw_lines.append(line)
            yield line + "\n"

    reader = csv.DictReader(source())
    try:
        while True:
            start = max(reader.line_num + 1, 2)
            raw_lines.clear()
            try:
                row = next(reader)
            except StopIteration:
                yield from _drained(faults)
                return
            yield start, "\n".join(raw_lines), dict(row)
    except csv.Error as exc:
        raise InputError(f"not valid CSV ({exc})", str(path), reader.line_num) from exc


def json_records(path: Path, skip: bool = False) -> Iterator[tuple[int, str, Any]]:
    """(line, raw text, value) for every JSON record of a file: JSON Lines (one value per
    line; a line that does not decode gives value None and reading goes on), or a document:
    a JSON array of objects (a batch), or concatenated/pretty-printed objects, decoded one
    value at a time from a text buffer (streaming; a malformed document raises InputError).
    JSON Lines is assumed when the first line holds a complete value. In skip mode a JSON
    Lines line that is not UTF-8 gives an Unreadable value; in a document it stops the ingest."""
    faults = faults_for(skip)
    lines = open_text_lines(path, faults)
    first: list[tuple[int, str]] = []
    for n, line in lines:
        if line.strip():
            first.append((n, line))
            break
    if not first:
        yield from _drained(faults)
        return
    n0, line0 = first[0]
    try:
        json_loads(line0)
        is_jsonl = True
    except ValueError:
        is_jsonl = not line0.lstrip().startswith(("[", "{"))
    if is_jsonl:
        for n, line in itertools.chain(first, lines):
            if not line.strip():
                continue
            try:
                yield n, line, json_loads(line)
            except ValueError:
                yield n, line, None
        yield from _drained(faults)
        return
    if faults is not None:
        faults.collect = False
        for n, _, why in faults.drain():
            raise InputError(why, str(path), n)
    yield from _document_values(path, n0, itertools.chain(first, lines))


def _document_values(
    path: Path, n0: int, lines: Iterator[tuple[int, str]]
) -> Iterator[tuple[int, str, Any]]:
    decoder = json.JSONDecoder()
    buf = ""
    line_of_buf = n0
    eof = False
    chunk = [256]

    def more() -> bool:
        # Doubling the lines read keeps a value spread over many lines linear to decode.
        nonlocal buf, eof
        chunk[0] *= 2
        got = [line for _, line in itertools.islice(lines, chunk[0])]
        if got:
            buf += "\n".join(got) + "\n"  # one copy per read, not one per line
        eof = not got
        return bool(got)

    more()
    opened = False
    while True:
        stripped = buf.lstrip(" \t\r\n,")
        line_of_buf += buf[: len(buf) - len(stripped)].count("\n")
        buf = stripped
        if not opened and buf.startswith("["):
            buf, opened = buf[1:], True
            continue
        if buf.startswith("]"):
            buf = buf[1:]
            continue
        if not buf:
            if eof or not more():
                return
            continue
        try:
            value, end = decoder.raw_decode(buf)
        except json.JSONDecodeError as exc:
            if not eof and more():
                continue
            raise InputError(f"malformed JSON ({exc.msg})", str(path), line_of_buf) from exc
        except RecursionError:
            raise InputError(
                "JSON nested too deeply to read; expected records of a few levels",
                str(path),
                line_of_buf,
            ) from None
        raw = buf[:end]
        yield line_of_buf, " ".join(x.strip() for x in raw.splitlines()), value
        line_of_buf += raw.count("\n")
        buf = buf[end:]
