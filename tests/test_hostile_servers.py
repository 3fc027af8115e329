"""Network reads against hostile loopback servers (relplan/httpget.py): a server that
trickles one byte at a time, one that never ends its body, an error answer that never ends,
and a /metrics body that forges `# SCRAPE` markers. Each ends in one InputError within its
deadline, or, for the forgery, in a scrape log whose blocks are only the recorder's own."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from relplan import httpget
from relplan import record as record_mod
from relplan.errors import InputError
from relplan.ingest.metrics.promlive import get_json
from relplan.record import record, scrape
from tests.helpers.fast_read import rows
from tests.helpers.http import serving
from tests.helpers.ingest import ingest

STOP = threading.Event()
FORGED = (
    "# TYPE demo_total counter\n"
    "demo_total 1\n"
    "# SCRAPE 2001-01-01T00:00:00Z\n"
    "demo_total 999\n"
    "  #SCRAPE 2002-01-01T00:00:00Z\n"
    "demo_total 998\n"
)


class _Hostile(BaseHTTPRequestHandler):
    def _head(self, status: int, ctype: str, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def _endless(self, chunk: bytes) -> None:
        try:
            while not STOP.is_set():
                self.wfile.write(chunk)
        except OSError:  # the client hung up: what a bounded reader does
            return

    def do_GET(self) -> None:
        text = "text/plain; version=0.0.4"
        if self.path == "/trickle":
            self._head(200, text, 1000)
            try:
                while not STOP.wait(0.05):  # a byte every 50 ms: no socket timeout fires
                    self.wfile.write(b"#")
                    self.wfile.flush()
            except OSError:
                return
        elif self.path == "/endless":
            self._head(200, text)
            self._endless(b"demo_total 1\n" * 4096)
        elif self.path == "/endless-error":
            self._head(500, text)
            self._endless(b"x" * 65536)
        elif self.path == "/forged":
            body = FORGED.encode()
            self._head(200, text, len(body))
            self.wfile.write(body)
        elif self.path == "/deep-json":
            body = b"[" * 100_000 + b"]" * 100_000
            self._head(200, "application/json", len(body))
            self.wfile.write(body)
        elif self.path == "/html-as-text":
            body = b"<html><body>Welcome</body></html>\n"
            self._head(200, "text/plain", len(body))
            self.wfile.write(body)
        else:
            self.send_error(404)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def hostile() -> Iterator[str]:
    STOP.clear()
    with serving(_Hostile) as url:
        try:
            yield url
        finally:
            STOP.set()  # the endless handlers end before the server shuts down


def test_a_trickling_server_ends_at_the_deadline_not_at_a_socket_timeout(hostile: str) -> None:
    with pytest.raises(InputError, match=r"no complete answer within 0\.5 s \(--timeout\)"):
        scrape(f"{hostile}/trickle", 0.5)


def test_a_pull_past_its_deadline_names_the_timeout_given_not_the_time_left(
    hostile: str,
) -> None:
    # a pull of several GETs under one --timeout 0.5: this GET starts with 0.3 s of it left,
    # and the message names the user's 0.5 s (it named the 0.3 s left)
    with pytest.raises(InputError, match=r"no complete answer within 0\.5 s \(--timeout\)"):
        get_json(hostile, "/trickle", {}, deadline=time.monotonic() + 0.3, timeout=0.5)


def test_a_pushdown_past_its_limit_names_the_limit_not_the_time_left(hostile: str) -> None:
    # `relplan alerts eval --prometheus-url` asks several GETs under one limit (300 s in all,
    # docs/alerts.md; `relplan alerts` has no --timeout): this GET starts with 0.3 s of a 0.5 s
    # limit left, and the message names the 0.5 s (it named the 0.3 s left, and a --timeout
    # and a store the command has not)
    from relplan.alerts.pushdown import Remote

    remote = Remote(hostile, timeout=0.5)
    remote.deadline = time.monotonic() + 0.3
    with pytest.raises(InputError) as err:
        remote.get("/trickle", {}, "listing metric names")
    said = str(err.value)
    assert "no complete answer within 0.5 s for the whole evaluation" in said
    assert "--timeout" not in said
    assert "stored" not in said
    assert remote.stats.requests == 0


def test_a_pushdown_answer_over_the_limit_names_the_pushdowns_options(
    hostile: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the pull's hint named --match, which `relplan alerts eval` and `analyze` have not
    from relplan.alerts.pushdown import Remote
    from relplan.ingest.metrics import promlive

    monkeypatch.setattr(promlive, "MAX_RESPONSE_BYTES", 65536)
    with pytest.raises(InputError) as err:
        Remote(hostile, timeout=10).get("/endless", {}, "evaluating a rule")
    said = str(err.value)
    assert (
        "the answer is larger than 0.0625 MiB; evaluate a shorter window or at a longer --step"
        in said
    )
    assert "--match" not in said


def test_an_endless_body_is_cut_at_the_byte_limit(
    hostile: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(record_mod, "MAX_SCRAPE_BYTES", 1024 * 1024)
    with pytest.raises(InputError, match=r"larger than 1 MiB; a /metrics answer is far smaller"):
        scrape(f"{hostile}/endless", 30.0)


def test_an_endless_error_body_is_read_only_up_to_its_limit(hostile: str) -> None:
    reply = httpget.get(f"{hostile}/endless-error", seconds=30.0, max_bytes=1024)
    assert (reply.status, len(reply.body)) == (500, httpget.ERROR_BODY_BYTES)
    with pytest.raises(InputError, match=r"HTTP 500 from the server: x{300}$"):
        get_json(hostile, "/endless-error", {}, deadline=time.monotonic() + 30.0)


def test_a_body_that_is_not_text_exposition_is_refused(hostile: str) -> None:
    with pytest.raises(InputError, match=r"line 1 of the reply is not a metrics sample"):
        scrape(f"{hostile}/html-as-text", 5.0)


def test_forged_scrape_markers_stay_data(hostile: str, tmp_path: Path) -> None:
    out = tmp_path / "m.scrape.txt"
    rec = record(f"{hostile}/forged", out, every=1.0, duration=1.0, timeout=5.0)
    assert rec.scrapes == 1
    marks = [ln for ln in out.read_text().splitlines() if ln.startswith("# SCRAPE")]
    assert len(marks) == 1  # only the recorder's own
    report = ingest(tmp_path / "w.duckdb", out)
    assert report.sources[0].rejected == 0
    got = rows(
        tmp_path / "w.duckdb",
        "select count(distinct t), min(value), max(value) from metric_samples",
    )
    # the three samples all take the one real scrape time; none lands in 2001 or 2002
    assert got == [(1, 1.0, 999.0)]


def test_a_live_answer_nested_without_bound_is_one_clean_error(hostile: str) -> None:
    with pytest.raises(InputError, match=r"JSON nested too deeply"):
        get_json(hostile, "/deep-json", {}, deadline=time.monotonic() + 30.0)
