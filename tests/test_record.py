"""`relplan record` (relplan/record.py): a live /metrics endpoint sampled into a scrape log that
ingest reads back, against a tiny loopback server and a real Prometheus server's own /metrics."""

from __future__ import annotations

import itertools
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from relplan.cli import app
from relplan.errors import InputError
from relplan.record import record, scrape_block
from relplan.values import parse_time
from tests.helpers.fast_cli import CliRunner
from tests.helpers.fast_read import rows
from tests.helpers.http import serving
from tests.helpers.ingest import ingest
from tests.helpers.prometheus import free_port, serving_prometheus

ROOT = Path(__file__).resolve().parent.parent
runner = CliRunner()
CTRL_C_ARGS = ["--every", "0.1s", "--for", "10m"]


class _Metrics(BaseHTTPRequestHandler):
    """/metrics: a counter that counts its own scrapes; /html: a web page; else 404."""

    hits = 0

    def do_GET(self) -> None:
        if self.path == "/metrics":
            type(self).hits += 1
            body = (
                "# HELP demo_scrapes_total Scrapes served.\n# TYPE demo_scrapes_total counter\n"
                f'demo_scrapes_total{{job="demo"}} {type(self).hits}\n'
            ).encode()
            ctype = "text/plain; version=0.0.4; charset=utf-8"
        elif self.path == "/html":
            body, ctype = b"<html>hello</html>", "text/html"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    with serving(type("Handler", (_Metrics,), {"hits": 0})) as url:
        yield url


class FakeTime:
    """A clock the recorder sleeps on: sleeping advances it, so a run takes no real time."""

    def __init__(self, wall: float) -> None:
        self.now = 0.0
        self.wall = wall

    def monotonic(self) -> float:
        return self.now

    def clock(self) -> float:
        return self.wall + self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _scrape_times(path: Path) -> list[float]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [t for ln in lines if ln.startswith("# SCRAPE ") and (t := parse_time(ln[9:]))]


def test_a_recording_ingests_one_sample_per_scrape_at_its_time(server: str, tmp_path: Path) -> None:
    out = tmp_path / "m.scrape.txt"
    fake = FakeTime(wall=1764460800.0)
    rec = record(
        f"{server}/metrics",
        out,
        every=5.0,
        duration=20.0,
        timeout=5.0,
        clock=fake.clock,
        monotonic=fake.monotonic,
        sleep=fake.sleep,
    )
    assert (rec.scrapes, rec.failed, rec.interrupted) == (4, 0, False)
    assert rec.bytes_written == out.stat().st_size
    times = _scrape_times(out)
    assert times == [1764460800.0, 1764460805.0, 1764460810.0, 1764460815.0]
    src = ingest(tmp_path / "w.duckdb", out).sources[0]
    assert (src.format, src.rejected) == ("scrape", 0)
    got = rows(
        tmp_path / "w.duckdb",
        "select t, value from metric_samples where name = 'demo_scrapes_total' order by t",
    )
    assert got == [(t, float(n)) for n, t in enumerate(times, start=1)]


def test_a_slow_scrape_skips_the_ticks_it_overran(server: str, tmp_path: Path) -> None:
    fake = FakeTime(wall=1764460800.0)
    calls = 0

    def slow_clock() -> float:
        nonlocal calls
        calls += 1
        if calls == 2:  # the second scrape starts 12 s late (a hung server)
            fake.now += 12.0
        return fake.clock()

    out = tmp_path / "m.txt"
    rec = record(
        f"{server}/metrics",
        out,
        every=5.0,
        duration=30.0,
        timeout=5.0,
        clock=slow_clock,
        monotonic=fake.monotonic,
        sleep=fake.sleep,
    )
    times = [t - 1764460800.0 for t in _scrape_times(out)]
    assert times == [0.0, 17.0, 20.0, 25.0]
    assert rec.scrapes == 4


def test_a_recording_appends_to_its_own_file_and_refuses_any_other(
    server: str, tmp_path: Path
) -> None:
    out = tmp_path / "m.txt"
    out.write_bytes(scrape_block(1764460800.0, b"up 1\n"))
    rec = record(f"{server}/metrics", out, every=1.0, duration=0.5, timeout=5.0)
    assert rec.scrapes == 1
    assert len(_scrape_times(out)) == 2
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(InputError, match=r"notes\.txt: exists and is not a scrape log"):
        record(f"{server}/metrics", notes, every=1.0, duration=0.5, timeout=5.0)
    assert notes.read_text() == "my notes\n"


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/missing", "HTTP 404"),
        ("/html", "the reply is text/html, not metrics text"),
    ],
)
def test_a_bad_reply_is_an_error_naming_the_url_and_writes_nothing(
    server: str, tmp_path: Path, path: str, message: str
) -> None:
    out = tmp_path / "m.txt"
    res = runner.invoke(app, ["record", "--url", server + path, "--out", str(out), "--for", "1s"])
    assert res.exit_code == 2
    assert res.stderr.startswith(f"relplan: error: {server}{path}: {message}")
    assert not out.exists()


def test_an_unreachable_url_is_an_error_naming_it(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/metrics"
    res = runner.invoke(app, ["record", "--url", url, "--out", str(tmp_path / "m.txt")])
    assert res.exit_code == 2
    assert res.stderr.startswith(f"relplan: error: {url}: cannot reach the server")


def test_the_command_prints_the_file_and_a_summary_and_no_progress_when_piped(
    server: str, tmp_path: Path
) -> None:
    out = tmp_path / "m.txt"
    args = ["record", "--url", f"{server}/metrics", "--every", "0.1s", "--for", "0.25s"]
    res = runner.invoke(app, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    assert res.stdout == f"{out}\n"
    n = len(_scrape_times(out))
    assert n == 3
    assert res.stderr == f"relplan: recorded {n} scrape(s), {out.stat().st_size} bytes\n"


def _wait_for_scrapes(path: Path, n: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    while not (path.exists() and len(_scrape_times(path)) >= n):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no scrapes recorded"
        time.sleep(0.05)


def test_ctrl_c_keeps_every_complete_scrape_and_exits_130(server: str, tmp_path: Path) -> None:
    out = tmp_path / "m.txt"
    command = [sys.executable, "-m", "relplan", "record", "--url", f"{server}/metrics"]
    proc = subprocess.Popen(
        [*command, *CTRL_C_ARGS, "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for_scrapes(out, 3, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    kept = len(_scrape_times(out))
    assert proc.returncode == 130
    assert err == f"relplan: interrupted; {kept} complete scrape(s) kept in {out}\n"
    src = ingest(tmp_path / "w.duckdb", out).sources[0]
    assert src.rejected == 0
    assert rows(tmp_path / "w.duckdb", "select count(*) from metric_samples") == [(kept,)]


@contextmanager
def _prometheus(binary: str, workdir: Path) -> Iterator[str]:
    """A Prometheus scraping nothing, on a free loopback port; yields its /metrics URL."""
    with serving_prometheus(binary, workdir) as base:
        yield f"{base}/metrics"


def test_recording_a_real_prometheus_server_ingests_its_own_metrics(
    prometheus_bin: str, tmp_path: Path
) -> None:
    out = tmp_path / "prometheus.scrape.txt"
    with _prometheus(prometheus_bin, tmp_path) as url:
        res = runner.invoke(
            app,
            ["record", "--url", url, "--every", "0.5s", "--for", "2s", "--out", str(out)],
        )
    assert res.exit_code == 0, res.stderr
    times = _scrape_times(out)
    assert len(times) == 4
    assert all(b - a == pytest.approx(0.5, abs=0.25) for a, b in itertools.pairwise(times))
    db = tmp_path / "w.duckdb"
    src = ingest(db, out).sources[0]
    assert (src.kind, src.format, src.rejected) == ("metrics", "scrape", 0)
    assert f"{len(times)} scrapes" in src.notes
    build = rows(db, "select t, value from metric_samples where name = 'prometheus_build_info'")
    assert sorted(build) == [(t, 1.0) for t in times]
    cpu = rows(
        db,
        "select t, value from metric_samples where name = 'process_cpu_seconds_total' order by t",
    )
    assert [t for t, _ in cpu] == times
    values = [v for _, v in cpu]
    assert values == sorted(values)
    assert values[0] > 0
