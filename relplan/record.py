"""`relplan record`: sample a live `/metrics` endpoint into a scrape log that ingest reads.

Each scrape is appended to the file as one block (docs/formats.md, Metrics: scrape logs):

    # SCRAPE 2025-11-30T00:00:05.123Z
    <the text exposition exactly as the server sent it>

with the time the request was sent (UTC, milliseconds), the way Prometheus stamps a scrape.
A block is written and flushed whole; a write cut short (Ctrl-C, a full disk) is cut off
again, so the file only ever holds complete scrapes and ingests as it is.

Scrapes are taken every `every` seconds from the start (a scrape slower than that skips the
ticks it overran, it does not pile them up) until `duration` has passed. The first scrape
must succeed: an unreachable URL, a non-200 answer or a reply that is not text exposition is
an InputError naming the URL, and nothing is written. A later failed scrape is counted and
skipped (the gap shows as a missing block), so a server restarting during an incident does
not end the recording.

The body is kept as data: it must be text exposition (every line a sample, a comment or
metadata), and a body line that would read as a `# SCRAPE` marker is escaped, so a server
cannot forge scrape boundaries or times. Every GET is bounded in time and bytes
(relplan/httpget.py).

Standard library only: this module is imported by the CLI's `record` command and loads no
heavy library.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from relplan import httpget
from relplan.errors import InputError, check_utf8_path

# Ask for the classic text format (what `curl /metrics` prints); OpenMetrics is accepted too.
ACCEPT = "text/plain;version=0.0.4;q=1,application/openmetrics-text;q=0.5"
TEXT_TYPES = ("text/plain", "application/openmetrics-text")
MARK = b"# SCRAPE "
# A /metrics answer larger than this is refused (vLLM's is about 100 KB): an endless body
# must not fill the memory.
MAX_SCRAPE_BYTES = 64 * 1024 * 1024
# A sample line: a metric name (or a quoted UTF-8 name in braces), optional labels, then a
# value (what may follow it, a timestamp or an OpenMetrics exemplar, is not checked here).
_SAMPLE = re.compile(
    r"^(?:[A-Za-z_:][A-Za-z0-9_:]*|(?=\{))(?:\{.*\})?[ \t]+[-+]?(?:[0-9.]|Inf|inf|NaN|nan)"
)
# A body line that the scrape-log reader would take for a block's `# SCRAPE` marker.
_FORGED = re.compile(rb"(?m)^([ \t]*)(#[ \t]*SCRAPE)")


@dataclass
class Recording:
    """What a recording wrote: complete scrapes kept, failed scrapes skipped, bytes added."""

    out: Path
    scrapes: int = 0
    failed: int = 0
    bytes_written: int = 0
    last_error: str | None = None
    interrupted: bool = False
    planned: int = 0


Progress = Callable[[int, int], None]


def scrape(url: str, timeout: float) -> bytes:
    """One GET of `url` within `timeout` s: the body of a 200 text-exposition reply, else an
    InputError. At most MAX_SCRAPE_BYTES are read; an error reply's body is not kept."""
    reply = httpget.get(
        url,
        seconds=timeout,
        max_bytes=MAX_SCRAPE_BYTES,
        headers={"Accept": ACCEPT, "User-Agent": "relplan-record"},
        timeout_hint=" (--timeout)",
        size_hint="; a /metrics answer is far smaller: is this the /metrics URL?",
    )
    if reply.status != 200:
        raise InputError(f"HTTP {reply.status}; expected 200 and /metrics text", url)
    base = reply.content_type.split(";", 1)[0].strip().lower()
    if base not in TEXT_TYPES:
        shown = reply.content_type or "no Content-Type"
        raise InputError(
            f"the reply is {shown}, not metrics text; expected text/plain (Prometheus text"
            " exposition) or application/openmetrics-text: is this the /metrics URL?",
            url,
        )
    try:
        text = reply.body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"the reply is not UTF-8 text (byte {exc.start})", url) from exc
    check_exposition(text, url)
    return reply.body


def check_exposition(text: str, where: str) -> None:
    """Refuse a body that is not the text exposition format: every line must be blank, a
    `#` comment or metadata line, or a sample `name{labels} value [timestamp]`."""
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if s and not s.startswith("#") and not _SAMPLE.match(s):
            raise InputError(
                f"line {n} of the reply is not a metrics sample: {s[:80]!r}; expected"
                " 'name{labels} value' (Prometheus text exposition)",
                where,
            )


def scrape_block(taken: float, body: bytes) -> bytes:
    """One scrape-log block: the `# SCRAPE` line with the time taken, then the body.

    The body is data, never structure: a body line that would read as a `# SCRAPE` marker
    (a hostile server forging scrape boundaries and times) gets one more `#`, which leaves
    it a comment of the exposition format and ends its power to start a block."""
    stamp = dt.datetime.fromtimestamp(taken, dt.timezone.utc).isoformat(timespec="milliseconds")
    head = MARK + stamp.replace("+00:00", "Z").encode("ascii") + b"\n"
    if _FORGED.search(body):
        body = _FORGED.sub(rb"\1#\2", body)
    return head + body + (b"" if body.endswith(b"\n") else b"\n")


def _check_out(out: Path) -> None:
    """An existing non-empty file is appended to only when it is a scrape log already; a
    name that is not UTF-8, a FIFO or a device (writing would wait for a reader or go
    nowhere) is refused."""
    check_utf8_path(out)
    if out.is_dir():
        raise InputError("is a directory; give a file such as metrics.scrape.txt", str(out))
    if out.exists() and not out.is_file():
        raise InputError(
            "not a regular file (a FIFO or a device); give a file such as metrics.scrape.txt",
            str(out),
        )
    if out.exists() and out.stat().st_size > 0:
        with out.open("rb") as fh:
            head = fh.read(len(MARK))
        if head != MARK:
            raise InputError(
                "exists and is not a scrape log (no '# SCRAPE' first line); not appending to it",
                str(out),
            )


def _append(fh: BinaryIO, block: bytes, out: Path, kept: int) -> None:
    good = fh.tell()
    try:
        view = memoryview(block)
        while view:  # unbuffered: nothing is left to flush when a write fails
            view = view[fh.write(view) or 0 :]
    except BaseException as exc:
        with contextlib.suppress(OSError):
            fh.truncate(good)  # never leave half a scrape
            fh.seek(good)
        if isinstance(exc, OSError):  # a full disk, a file-size limit: say where, and what is kept
            raise InputError(
                f"cannot write the scrape: {exc.strerror or exc}; the file keeps the {kept}"
                " complete scrape(s) before it",
                str(out),
            ) from None
        raise


def record(
    url: str,
    out: Path,
    *,
    every: float,
    duration: float,
    timeout: float,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.time,
    monotonic: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> Recording:
    """Scrape `url` every `every` s for `duration` s, appending each scrape to `out`.

    Ctrl-C stops the recording cleanly: the result says `interrupted` and how many complete
    scrapes the file kept. `progress(done, planned)` is called after each tick.
    """
    _check_out(out)
    rec = Recording(out=out, planned=max(1, math.ceil(duration / every)))
    first = scrape(url, timeout)  # fail fast, before the file is touched
    started = monotonic()
    taken = clock()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("ab", buffering=0) as fh:
        try:
            body: bytes | None = first
            tick = 0
            while True:
                if body is not None:
                    block = scrape_block(taken, body)
                    _append(fh, block, out, rec.scrapes)
                    rec.scrapes += 1
                    rec.bytes_written += len(block)
                if progress is not None:
                    progress(rec.scrapes + rec.failed, rec.planned)
                elapsed = monotonic() - started
                tick = max(tick + 1, math.floor(elapsed / every) + 1)
                if tick * every >= duration:
                    break
                sleep(max(0.0, started + tick * every - monotonic()))
                taken = clock()
                try:
                    body = scrape(url, timeout)
                except InputError as exc:
                    body = None
                    rec.failed += 1
                    rec.last_error = str(exc)
        except KeyboardInterrupt:
            rec.interrupted = True
    return rec
