"""Debian's Prometheus on a free loopback port, its TSDB backfilled from an OpenMetrics file
with `promtool tsdb create-blocks-from openmetrics`.

Tests do not call this directly: they take the `prometheus_server` fixture of
tests/conftest.py, which finds the binaries (skip without them on a user's machine, fail under
CI=true) and stops every server at the end of the session.
"""

from __future__ import annotations

import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def backfilled_prometheus(om: Path, workdir: Path, prometheus: str, promtool: str) -> Iterator[str]:
    """Backfill `om` into `workdir`/tsdb, serve it (retention 100y: the samples may be older
    than 15 days) and yield the base URL once /-/ready answers; stop the server at the end."""
    subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(om), str(workdir / "tsdb")],
        check=True,
        timeout=60,
        capture_output=True,
    )
    with serving_prometheus(prometheus, workdir, "--storage.tsdb.retention.time=100y") as url:
        yield url


@contextmanager
def serving_prometheus(prometheus: str, workdir: Path, *flags: str) -> Iterator[str]:
    """A Prometheus scraping nothing, storing in `workdir`/tsdb, on a free loopback port;
    yields the base URL once /-/ready answers and stops the server at the end."""
    (workdir / "prometheus.yml").write_text("global:\n  scrape_interval: 1m\nscrape_configs: []\n")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with (workdir / "prometheus.log").open("wb") as log:
        proc = subprocess.Popen(
            [
                prometheus,
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                *flags,
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(
                        "prometheus did not become ready on loopback:\n"
                        + (workdir / "prometheus.log").read_text(errors="replace")[-2000:]
                    )
                time.sleep(0.2)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)


class PrometheusServers:
    """Starts one backfilled server per OpenMetrics file asked for; `close` stops them all."""

    def __init__(self, prometheus: str, promtool: str, tmp: pytest.TempPathFactory) -> None:
        self._tools = (prometheus, promtool)
        self._tmp = tmp
        self._stack = ExitStack()

    def serve(self, om: Path) -> str:
        """Base URL of a server holding exactly the samples of `om`."""
        workdir = self._tmp.mktemp("prometheus")
        return self._stack.enter_context(backfilled_prometheus(om, workdir, *self._tools))

    def close(self) -> None:
        self._stack.close()
