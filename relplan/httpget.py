"""One bounded HTTP GET, for every network read relplan makes (`record`, `drill`'s /metrics
scrapes, the Prometheus live pull).

Bounded three ways, so a hostile or broken server cannot hang relplan or fill its memory:

- an overall deadline for the whole exchange (connect, headers, body), kept by waiting on a
  worker thread: a server that sends one byte a second never lets a socket timeout fire;
- a byte limit on the body, checked against Content-Length first and then while reading;
- an error reply's body (HTTP 4xx/5xx) is read within the same deadline and cut to
  `ERROR_BODY_BYTES`, never read after the caller stopped waiting.

Standard library only: the CLI's light commands import it.
"""

from __future__ import annotations

import http.client
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass

from relplan.errors import InputError
from relplan.values import short, sig

ERROR_BODY_BYTES = 4096  # what an error reply may tell us; the rest is not read
_CHUNK = 64 * 1024
_SOCKET_TIMEOUT_S = 30.0  # one socket operation; the overall deadline is the caller's


@dataclass(frozen=True)
class Reply:
    """A complete answer: its status (200 or an error status), Content-Type and body."""

    status: int
    content_type: str
    body: bytes


def mib(n: int) -> str:
    return f"{short(n / (1024 * 1024))} MiB"


class _Worker:
    def __init__(
        self, url: str, headers: Mapping[str, str], max_bytes: int, socket_timeout: float
    ) -> None:
        self.req = urllib.request.Request(url, headers=dict(headers))
        self.max_bytes = max_bytes
        self.socket_timeout = socket_timeout
        self.stop = threading.Event()
        self.reply: Reply | None = None
        self.too_large = False
        self.error: BaseException | None = None

    def _read(
        self, resp: http.client.HTTPResponse, length: str | None, limit: int, cut: bool
    ) -> bytes | None:
        """The body up to `limit` bytes; None when it is longer (unless `cut`: then cut it)."""
        if not cut and length is not None and length.isdigit() and int(length) > limit:
            return None
        parts: list[bytes] = []
        size = 0
        while not self.stop.is_set():
            part = resp.read1(_CHUNK)
            if not part:
                break
            size += len(part)
            if size > limit:
                if not cut:
                    return None
                parts.append(part[: len(part) - (size - limit)])
                break
            parts.append(part)
        return b"".join(parts)

    def run(self) -> None:
        try:
            with urllib.request.urlopen(self.req, timeout=self.socket_timeout) as resp:
                length = resp.headers.get("Content-Length")
                body = self._read(resp, length, self.max_bytes, cut=False)
                if body is None:
                    self.too_large = True
                    return
                ctype = resp.headers.get("Content-Type", "")
                self.reply = Reply(resp.status, ctype, body)
        except urllib.error.HTTPError as exc:
            try:
                fp = exc.fp
                text = b""
                if isinstance(fp, http.client.HTTPResponse):
                    text = self._read(fp, None, ERROR_BODY_BYTES, cut=True) or b""
                ctype = exc.headers.get("Content-Type", "") if exc.headers else ""
                self.reply = Reply(exc.code, ctype, text)
            except BaseException as inner:  # handed to the caller's thread
                self.error = inner
            finally:
                exc.close()
        except BaseException as exc:  # handed to the caller's thread
            self.error = exc


def get(
    url: str,
    *,
    seconds: float,
    max_bytes: int,
    headers: Mapping[str, str] | None = None,
    timeout_hint: str = "",
    size_hint: str = "",
    limit: float | None = None,
) -> Reply:
    """GET `url`, all of it within `seconds` and at most `max_bytes` of body.

    Returns the reply whatever its status (an error status with at most ERROR_BODY_BYTES of
    its body). An unreachable server, a deadline passed or a body over the limit is an
    InputError naming the URL; `timeout_hint` and `size_hint` end those messages (the option
    that sets the limit, say). `limit` is the time limit a timeout names when `seconds` is only
    what is left of it (a pull of several GETs under one --timeout): the user's own number."""
    if seconds <= 0:
        raise InputError(f"no time left to ask the server{timeout_hint}", url)
    worker = _Worker(url, headers or {}, max_bytes, min(_SOCKET_TIMEOUT_S, seconds))
    thread = threading.Thread(target=worker.run, name="relplan-http-get", daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        worker.stop.set()  # the daemon thread ends at its next chunk or socket timeout
        said = seconds if limit is None else limit
        raise InputError(f"no complete answer within {sig(said, 3)} s{timeout_hint}", url)
    if worker.too_large:
        raise InputError(f"the answer is larger than {mib(max_bytes)}{size_hint}", url)
    exc = worker.error
    if isinstance(exc, TimeoutError):
        waited = time.monotonic() - started
        if limit is not None and seconds <= _SOCKET_TIMEOUT_S:
            waited = limit  # the socket timed out at the deadline: the limit is what ran out
        raise InputError(
            f"no complete answer within {sig(waited, 3)} s{timeout_hint}", url
        ) from exc
    if isinstance(exc, urllib.error.URLError):
        raise InputError(f"cannot reach the server ({exc.reason})", url) from exc
    if isinstance(exc, (OSError, ValueError)):
        # ValueError: a URL urllib cannot use; http.client errors are OSError or HTTPException
        raise InputError(f"reading the answer failed ({exc})", url) from exc
    if isinstance(exc, http.client.HTTPException):
        raise InputError(f"the server's answer is not valid HTTP ({exc!r})", url) from exc
    if exc is not None:
        raise exc
    assert worker.reply is not None
    return worker.reply
