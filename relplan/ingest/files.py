"""Input files: expanding directories, content hashes, line counts, gzip-aware text reading.

A file is identified by the SHA-256 of its content: the bytes once decompressed (gzip), and
for text, without a UTF-8 byte order mark and with CRLF line ends read as LF, so the same
records gzipped or with Windows line ends are the same content (docs/workspace.md, sources).
A Parquet file is hashed as its bytes. The same pass counts newlines of the (decompressed)
content, which lets the driver check that a JSON Lines file has no blank lines before it
trusts record ordinals as line numbers, and notes whether the text holds the words `true` or
`false` anywhere: DuckDB's typed JSON reader reads a JSON boolean in a numeric column as 1 or
0, so a file with neither word cannot hold one, and only such a file may take the reader
that types numbers directly (relplan/ingest/canonical/tables.py).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import re
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any, NamedTuple

from relplan.errors import InputError, check_utf8_path
from relplan.values import num


class LineError(str):
    """Why one line or record of an input is refused: an error message about that line, worded
    beside the check that finds it, as a raised error's message is. It is shown as
    `FILE:LINE: reason`, raised as the InputError under --on-error fail and kept in rejects
    under skip; a str, so it travels wherever the reason did (tests/test_text_room.py leaves
    a `LineError(...)` alone as it leaves an `...Error(...)` call alone)."""

    __slots__ = ()


GZIP_MAGIC = b"\x1f\x8b"
PARQUET_MAGIC = b"PAR1"
# Bytes read per call by digest(): a chunk this size stays in the CPU's cache while it is
# hashed and scanned (1 MiB chunks cost about 5 % more CPU, 64 KiB ones about 40 %;
# docs/benchmarks.md, Ingest, fourth wave).
_CHUNK = 256 << 10

# Files a directory contributes (others are skipped and listed in the ingest report).
KNOWN_SUFFIXES = (
    ".jsonl",
    ".ndjson",
    ".json",
    ".csv",
    ".parquet",
    ".txt",
    ".om",
    ".prom",
    ".log",
    ".metrics",
)


class Digest(NamedTuple):
    """What one streaming pass over a file's content finds (`digest`)."""

    sha256: str
    lines: int
    booleans: bool  # the words `true` or `false` occur (or the content is binary)


class FileInfo:
    """A file about to be read: its head (for detection) at once, its hash and line count from
    a streaming pass that may run in a background thread (`digest`), so hashing overlaps with
    DuckDB reading the file."""

    def __init__(
        self,
        path: Path,
        size: int,
        gz: bool,
        head: bytes,
        digest: Future[Digest] | Digest,
    ) -> None:
        self.path = path
        self.size = size
        self.gz = gz
        self.head = head  # first bytes of the decompressed content
        self._digest = digest

    def _resolved(self) -> Digest:
        if isinstance(self._digest, Future):
            self._digest = self._digest.result()
        return self._digest

    @property
    def sha256(self) -> str:
        return self._resolved().sha256

    @property
    def lines(self) -> int:
        """Newline-terminated lines plus a last unterminated one, of the decompressed text."""
        return self._resolved().lines

    @property
    def may_hold_booleans(self) -> bool:
        """Whether the text holds the word `true` or `false` anywhere (a JSON boolean may be in
        it); always True for binary content."""
        return self._resolved().booleans


def is_known_file(path: Path) -> bool:
    name = path.name.lower().removesuffix(".gz")
    return any(name.endswith(s) for s in KNOWN_SUFFIXES)


def expand(paths: list[Path]) -> tuple[list[Path], list[Path]]:
    """Files to ingest (directories walked in sorted order) and files a directory skipped."""
    out: list[Path] = []
    skipped: list[Path] = []
    for p in paths:
        check_utf8_path(p)
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_dir() or any(part.startswith(".") for part in f.relative_to(p).parts):
                    continue
                check_utf8_path(f)
                # a FIFO, device or socket is never opened (it could block forever): listed
                (out if f.is_file() and is_known_file(f) else skipped).append(f)
        elif p.is_file():
            out.append(p)
        elif p.exists():
            raise InputError("not a regular file or directory", str(p))
        else:
            raise InputError("no such file or directory", str(p))
    return out, skipped


UTF8_BOM = b"\xef\xbb\xbf"
# The longest first line detection reads whole (the JSON readers' maximum object size).
MAX_FIRST_LINE = 16 * 1024 * 1024
# The longest line any line reader takes (DuckDB's max_line_size): a longer one (a file with
# no line ends, a gzip bomb of one endless line) is an error naming it, never read whole.
MAX_LINE = 16 * 1024 * 1024
# The largest JSON document (a query_range export, a run manifest) read whole: it is parsed
# in memory, about ten times its size as Python objects.
MAX_DOCUMENT = 256 * 1024 * 1024


def bounded_lines(f: Any, path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, bytes with the newline) of a binary file, each at most MAX_LINE long."""
    n = 0
    while True:
        line = f.readline(MAX_LINE + 1)
        if not line:
            return
        n += 1
        if len(line) > MAX_LINE:
            raise InputError(
                f"a line longer than {MAX_LINE // (1024 * 1024)} MiB; expected one record per line",
                str(path),
                n,
            )
        yield n, line


def read_document(info: FileInfo, what: str, limit: int | None = None) -> bytes:
    """The (decompressed) bytes of a file read whole, at most `limit` (MAX_DOCUMENT): a
    larger one (or a gzip bomb) is refused before it fills the memory."""
    limit = MAX_DOCUMENT if limit is None else limit
    try:
        with info.path.open("rb") as raw:
            f: Any = gzip.GzipFile(fileobj=raw) if info.gz else raw
            data: bytes = f.read(limit + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"cannot read: {exc}", str(info.path)) from exc
    if len(data) > limit:
        raise InputError(
            f"{what} larger than {limit // (1024 * 1024)} MiB (decompressed); it is read whole"
            " into memory: split it",
            str(info.path),
        )
    return data


# A gzip file that decompresses to more than MAX_GZIP_RATIO times its size, once past
# GZIP_RATIO_AFTER bytes, is refused as a gzip bomb before it is read: the largest ratio of
# the lab's recorded logs is 90 (an nginx access log), deflate's own limit about 1,030.
MAX_GZIP_RATIO = 250
GZIP_RATIO_AFTER = 16 * 1024 * 1024


def _bomb(path: Path, out: int, used: int) -> InputError:
    return InputError(
        f"a gzip file that decompresses to over {MAX_GZIP_RATIO} times its size"
        f" ({out // (1024 * 1024)} MiB from {num(used)} bytes); a gzip bomb? expected a"
        " compressed log (real ones compress 3 to 100 times)",
        str(path),
    )


def check_gzip_ratio(path: Path) -> None:
    """Refuse a gzip bomb up front: decompress the first GZIP_RATIO_AFTER bytes of output
    and compare with the compressed bytes they took (digest() keeps checking to the end)."""
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = used = 0
    with path.open("rb") as f:
        while out < GZIP_RATIO_AFTER and (data := f.read(16384)):
            while data and out < GZIP_RATIO_AFTER:
                out += len(inflate.decompress(data, GZIP_RATIO_AFTER - out))
                used += len(data) - len(inflate.unconsumed_tail)  # the input it took
                data = inflate.unconsumed_tail
    if out >= GZIP_RATIO_AFTER and out > MAX_GZIP_RATIO * used:
        raise _bomb(path, out, used)


def peek(path: Path, head_size: int = 65536) -> tuple[int, bool, bytes]:
    """Size, whether gzip, and the first `head_size` bytes of the (decompressed) content,
    without a UTF-8 byte order mark; when those bytes hold no newline, the head runs on to
    the end of the first line (up to MAX_FIRST_LINE), so a long first JSON record is seen
    whole."""
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            gz = f.read(2) == GZIP_MAGIC
        if gz:
            check_gzip_ratio(path)
        opener = gzip.open if gz else open
        with opener(path, "rb") as g:
            head = g.read(head_size)
            while b"\n" not in head and len(head) < MAX_FIRST_LINE:
                more = g.read(head_size)
                if not more:
                    break
                head += more
        return size, gz, head.removeprefix(UTF8_BOM)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"cannot read: {exc}", str(path)) from exc


class _ContentHash:
    """SHA-256 of decompressed content; text without a BOM and with CRLF as LF (streaming:
    a CR at the end of one chunk waits for the next)."""

    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self.start = True
        self.text = True
        self.cr = b""

    def update(self, data: bytes) -> None:
        if self.start:
            self.start = False
            self.text = not data.startswith(PARQUET_MAGIC)
            if self.text:
                data = data.removeprefix(UTF8_BOM)
        if not self.text:
            self.h.update(data)
            return
        if not self.cr and b"\r" not in data:
            self.h.update(data)  # no CR: nothing to replace (one scan instead of a copy)
            return
        data = self.cr + data
        self.cr = b"\r" if data.endswith(b"\r") else b""
        if self.cr:
            data = data[:-1]
        self.h.update(data.replace(b"\r\n", b"\n"))

    def hexdigest(self) -> str:
        self.h.update(self.cr)
        self.cr = b""
        return self.h.hexdigest()


# From this much content on (the file's size; a gzip file's times 8), the newlines and the
# words `true`/`false` are looked for by numpy in each chunk, in place: the newlines by one
# byte comparison, the words as 4-byte integers at each of the four offsets (`true`, and
# `fals` followed by `e`). About 0.8 ms of CPU per MB for both, against 2.1 ms/MB for
# Python's bytes.count and two substring searches, and 1.4 ms/MB for the polars scan that
# copied every chunk into a Series (docs/benchmarks.md, Ingest). Smaller files keep Python's:
# importing numpy costs about 0.1 s of CPU, more than it saves below this size.
SCAN_IN_NUMPY_FROM = 128 << 20
_TRUE = int.from_bytes(b"true", "little")
_FALS = int.from_bytes(b"fals", "little")


def _words_in(data: bytes) -> bool:
    """Whether `true` or `false` occurs in `data`, by numpy (see SCAN_IN_NUMPY_FROM)."""
    if len(data) < 8:
        return b"true" in data or b"false" in data
    import numpy as np

    every = np.frombuffer(data, np.uint8)
    for k in range(4):
        words = np.frombuffer(data, "<u4", count=(len(data) - k) // 4, offset=k)
        if bool((words == _TRUE).any()):
            return True
        after = np.flatnonzero(words == _FALS) * 4 + (k + 4)  # the byte after each `fals`
        after = after[after < len(data)]  # `fals` at the very end: the next chunk's edge check
        if bool((every[after] == ord("e")).any()):
            return True
    return False


class _Scan:
    """Newline count and whether the words `true`/`false` occur, over a stream of chunks."""

    def __init__(self, in_numpy: bool) -> None:
        self.in_numpy = in_numpy
        self.newlines = 0
        self.booleans = False
        self.words = True  # look for the words (text only; off once binary content is seen)
        self.tail = b""  # the last bytes of the previous chunk: a word may span two chunks

    def add(self, data: bytes) -> None:
        look = self.words and not self.booleans
        if look:
            edge = self.tail + data[:4]
            self.booleans = b"true" in edge or b"false" in edge
            self.tail = data[-4:]
            look = not self.booleans
        if self.in_numpy:
            import numpy as np

            self.newlines += int(np.count_nonzero(np.frombuffer(data, np.uint8) == ord("\n")))
            if look:
                self.booleans = _words_in(data)
            return
        self.newlines += data.count(b"\n")
        if look:
            self.booleans = b"true" in data or b"false" in data


def digest(path: Path, words: bool = True) -> Digest:
    """SHA-256 of the content (see the module docstring), its line count and whether the words
    `true`/`false` occur in it, streaming. Without `words` they are not looked for (only JSON
    Lines may take the typed reader; the search was 1.2 ms of CPU per MB) and the content is
    taken to hold them."""
    h = _ContentHash()
    last = b"\n"
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            chunk = f.read(65536)
            gz = chunk[:2] == GZIP_MAGIC
            scan = _Scan(in_numpy=size * (8 if gz else 1) >= SCAN_IN_NUMPY_FROM)
            scan.words = words

            def take(data: bytes) -> None:
                nonlocal last
                h.update(data)
                scan.words = scan.words and h.text
                scan.add(data)
                last = data[-1:]

            inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if gz else None
            used = out = 0
            while chunk:
                data = chunk
                if inflate is not None:
                    try:
                        data = inflate.decompress(chunk)
                    except zlib.error as exc:
                        raise InputError(f"not a valid gzip file ({exc})", str(path)) from exc
                    used, out = used + len(chunk), out + len(data)
                    if out > GZIP_RATIO_AFTER and out > MAX_GZIP_RATIO * used:
                        raise _bomb(path, out, used)
                if data:
                    take(data)
                chunk = f.read(_CHUNK if inflate is None else 65536)  # output <= ~64 MiB a call
            if inflate is not None:
                rest = inflate.flush()
                if rest:
                    take(rest)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", str(path)) from exc
    lines = scan.newlines + (0 if last == b"\n" else 1)
    return Digest(h.hexdigest(), lines, scan.booleans or not h.text or not words)


class Faults:
    """Lines that are not UTF-8, collected instead of raised (skip mode): each reader stages
    them as refused records with their line, `reason` and text (bad bytes replaced).
    `collect` may be turned off while reading (a JSON document cannot lose a line)."""

    def __init__(self, collect: bool = True) -> None:
        self.collect = collect
        self.lines: list[tuple[int, str, str]] = []

    def drain(self) -> list[tuple[int, str, str]]:
        out, self.lines = self.lines, []
        return out


def faults_for(skip: bool) -> Faults | None:
    """A collector in skip mode; None in fail mode (the first bad line stops the ingest)."""
    return Faults() if skip else None


def open_text_lines(path: Path, faults: Faults | None = None) -> Iterator[tuple[int, str]]:
    """(line number, text without the newline) for a text file, gzip or not, streaming.

    Bytes that are not UTF-8 raise InputError naming the line, or, given `faults` (collecting),
    the line goes there and is not yielded.
    """
    with path.open("rb") as raw:
        gz = raw.read(2) == GZIP_MAGIC
    opener = gzip.open if gz else open
    try:
        with opener(path, "rb") as f:
            for n, line in bounded_lines(f, path):
                try:
                    text = line.decode("utf-8")
                except UnicodeDecodeError as exc:
                    why = LineError(
                        f"bytes that are not UTF-8 at column {exc.start + 1}; expected UTF-8 text"
                    )
                    if faults is None or not faults.collect:
                        raise InputError(why, str(path), n) from exc
                    shown = line.decode("utf-8", errors="replace").rstrip("\r\n")
                    faults.lines.append((n, shown, why))
                    continue
                yield n, text.rstrip("\r\n")
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"cannot read: {exc}", str(path)) from exc


class DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(LineError(f"the key {key!r} appears twice in one object"))
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """json.loads object_pairs_hook: a key repeated in one object raises DuplicateKey (the
    json module would keep the last value and drop the other without a word)."""
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise DuplicateKey(k)
        out[k] = v
    return out


def duplicate_key_line(text: str, key: str) -> int | None:
    """The line of the second `"key":` inside one flat object (a label set), if found."""
    prev: int | None = None
    for m in re.finditer(re.escape(json.dumps(key)) + r"\s*:", text):
        if prev is not None and text.rfind("{", 0, m.start()) < prev:
            return text.count("\n", 0, m.start()) + 1
        prev = m.start()
    return None


def load_document(raw: bytes, path: str, what: str, *, unique: bool = False) -> Any:
    """One JSON document (query_range, run.json) from its bytes; every failure is an
    InputError naming the line: bytes that are not UTF-8, malformed JSON, nesting too deep
    (named at the document's first line), NaN, a lone surrogate escape, and with `unique` a
    key repeated in one object (a label name twice in one series). A document is one
    record, so these stop the ingest in skip mode too."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        before = raw[: exc.start]
        line = before.count(b"\n") + 1
        col = exc.start - (before.rfind(b"\n") + 1) + 1
        raise InputError(
            f"bytes that are not UTF-8 at column {col}; expected UTF-8 text ({what})", path, line
        ) from exc
    first = len(text) - len(text.lstrip())
    start_line = text[:first].count("\n") + 1
    try:
        return json_loads(text, unique_keys if unique else None)
    except DuplicateKey as exc:
        raise InputError(
            f"{exc}; expected each key (each label name) once",
            path,
            duplicate_key_line(text, exc.key),
        ) from exc
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON ({exc.msg}); expected {what}", path, exc.lineno) from exc
    except ValueError as exc:
        raise InputError(f"not valid JSON ({exc}); expected {what}", path, start_line) from exc


def _unreadable(text: str) -> str | None:
    for ch, what in (("\x1f", "a raw 0x1F control byte"), ("\x00", "a NUL byte")):
        if ch in text:
            return LineError(
                f"{what}, which JSON does not allow unescaped; expected one JSON object per line"
            )
    return None


def first_unreadable_line(path: Path) -> tuple[int, str] | None:
    """The first line DuckDB's line reader cannot take (not UTF-8, or a raw 0x1F/NUL byte)."""
    try:
        for n, text in open_text_lines(path):
            why = _unreadable(text)
            if why is not None:
                return n, why
    except InputError as exc:
        if exc.line is None:
            raise
        return exc.line, exc.reason
    return None


def readable_copy(path: Path, out: Path) -> list[tuple[int, str, str]]:
    """Write `path` (gzip or not) to `out` uncompressed with every line DuckDB's line reader
    cannot take (not UTF-8, a raw 0x1F or NUL byte) left empty, so the others keep their line
    numbers; return those lines as (line, text with bad bytes replaced, reason)."""
    bad: list[tuple[int, str, str]] = []
    with path.open("rb") as raw:
        gz = raw.read(2) == GZIP_MAGIC
    opener = gzip.open if gz else open
    try:
        with opener(path, "rb") as f, out.open("wb") as w:
            for n, line in bounded_lines(f, path):
                try:
                    why = _unreadable(line.decode("utf-8"))
                except UnicodeDecodeError as exc:
                    why = LineError(
                        f"bytes that are not UTF-8 at column {exc.start + 1}; expected UTF-8 text"
                    )
                if why is None:
                    w.write(line)
                    continue
                text = line.decode("utf-8", errors="replace").rstrip("\r\n")
                bad.append((n, text.replace("\x00", "\ufffd").replace("\x1f", "\ufffd"), why))
                w.write(b"\n")
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"cannot read: {exc}", str(path)) from exc
    return bad


_GLOB_CHARS = re.compile(r"[\[*?]")


def duck_path(path: str | Path) -> str:
    """`path` for DuckDB's file readers, which expand glob patterns: `[`, `*` and `?` are
    wrapped in brackets (`p[1].jsonl` -> `p[[]1].jsonl`), so a file is read as itself."""
    return _GLOB_CHARS.sub(lambda m: f"[{m.group(0)}]", str(path))


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def _not_json(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number; expected a finite number")


def _finite_float(text: str) -> float:
    x = float(text)
    if math.isinf(x):
        raise ValueError(f"{text[:40]} is too large for a number; expected a finite number")
    return x


# A whole number longer than Python converts from text (sys.get_int_max_str_digits()).
_LONG_DIGITS = re.compile(r"\d{4301,}")


def long_number(text: str, start: int = 0) -> json.JSONDecodeError | None:
    """The error for the first whole number in `text` (from `start`) too long for Python to
    convert (its ValueError names no place), with its position; None when there is none."""
    m = _LONG_DIGITS.search(text, start)
    if m is None:
        return None
    n = len(m.group())
    return json.JSONDecodeError(
        f"a number of {n} digits, too large for any count or time", text, m.start()
    )


def json_loads(
    text: str | bytes, pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None
) -> Any:
    """json.loads for input: ValueError (never RecursionError) for JSON nested too deeply,
    for NaN/Infinity (not JSON, though Python reads them) and numbers too large for a double,
    and for a lone surrogate escape (`"\\ud800"`), which is no character and cannot be
    stored as UTF-8; a UTF-8 byte order mark is allowed."""
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig")
    text = text.removeprefix("\ufeff")
    try:
        doc = json.loads(
            text, parse_constant=_not_json, parse_float=_finite_float, object_pairs_hook=pairs_hook
        )
    except RecursionError as exc:
        raise ValueError("nested too deeply") from exc
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError) or (long := long_number(text)) is None:
            raise
        raise long from exc
    if _SURROGATE_ESCAPE.search(text):
        try:
            json.dumps(doc, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(
                "a lone surrogate escape (\\ud800-\\udfff), which is no character"
            ) from exc
    return doc
