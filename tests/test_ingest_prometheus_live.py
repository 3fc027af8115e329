"""Live pull from a real Prometheus: Debian's prometheus on a free loopback port, its TSDB
backfilled with `promtool tsdb create-blocks-from openmetrics`. Skips without the binaries
on a user's machine, fails under CI=true."""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan.cli import app
from relplan.ingest import IngestOptions, promlive, pull_prometheus
from tests.helpers.fast_cli import CliRunner
from tests.helpers.fast_read import rows
from tests.helpers.prometheus import PrometheusServers, free_port

T0 = 1764460800  # 2025-11-30T00:00:00Z: older than "now", so retention must be long


def _openmetrics() -> str:
    """25 samples 5 s apart for two vLLM series and one other metric."""
    lines = [
        "# HELP vllm:num_requests_waiting Requests waiting.",
        "# TYPE vllm:num_requests_waiting gauge",
    ]
    lines += [
        f'vllm:num_requests_waiting{{engine="0",model_name="m"}} {i} {T0 + 5 * i}'
        for i in range(25)
    ]
    lines += ["# HELP vllm:prompt_tokens Prefill tokens.", "# TYPE vllm:prompt_tokens counter"]
    lines += [
        f'vllm:prompt_tokens_total{{engine="0",model_name="m"}} {100 * i} {T0 + 5 * i}'
        for i in range(25)
    ]
    lines += ["# TYPE other_metric gauge"] + [f"other_metric 1 {T0 + 5 * i}" for i in range(25)]
    return "\n".join([*lines, "# EOF"]) + "\n"


@pytest.fixture(scope="module")
def prometheus_url(
    prometheus_server: PrometheusServers, tmp_path_factory: pytest.TempPathFactory
) -> str:
    om = tmp_path_factory.mktemp("prom") / "m.om.txt"
    om.write_text(_openmetrics())
    return prometheus_server.serve(om)


def test_live_pull_stores_the_matching_series(prometheus_url: str, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = pull_prometheus(db, prometheus_url, "vllm:.*", T0, T0 + 60, 5.0, IngestOptions())
    (src,) = rep.sources
    assert (src.kind, src.format) == ("metrics", "prometheus")
    # 13 steps (0, 5, ..., 60 s) for each of the two vllm series; other_metric not matched.
    assert src.rows == 26
    assert rows(
        db, "select value from metric_samples where name = 'vllm:prompt_tokens_total' order by t"
    ) == [(100.0 * i,) for i in range(13)]
    assert rows(
        db, "select distinct labels from metric_samples where name = 'vllm:num_requests_waiting'"
    ) == [({"engine": "0", "model_name": "m"},)]
    assert rows(db, "select min(t), max(t) from metric_samples") == [(T0, T0 + 60)]


def test_live_pull_chunks_to_respect_the_points_limit_without_overlap(
    prometheus_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(promlive, "MAX_POINTS", 4)
    assert promlive.chunks(T0, T0 + 60, 5.0) == [
        (T0, T0 + 15),
        (T0 + 20, T0 + 35),
        (T0 + 40, T0 + 55),
        (T0 + 60, T0 + 60),
    ]
    db = tmp_path / "w.duckdb"
    pull_prometheus(
        db, prometheus_url, "vllm:num_requests_waiting", T0, T0 + 60, 5.0, IngestOptions()
    )
    assert rows(db, "select count(*), count(distinct t), sum(value) from metric_samples") == [
        (13, 13, float(sum(range(13))))
    ]


def test_live_pull_twice_adds_nothing_the_second_time(prometheus_url: str, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    args = (prometheus_url, "vllm:.*", T0, T0 + 30, 5.0, IngestOptions())
    pull_prometheus(db, *args)
    again = pull_prometheus(db, *args)
    assert again.sources == []
    assert "already in the workspace" in again.skipped[0].reason
    assert rows(db, "select count(*) from metric_samples") == [(14,)]


def test_live_pull_from_the_cli(prometheus_url: str, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    res = CliRunner().invoke(
        app,
        [
            "ingest",
            "--prometheus-url",
            prometheus_url,
            "--match",
            "vllm:prompt_tokens_total",
            "--start",
            "2025-11-30T00:00:00Z",
            "--end",
            str(T0 + 20),
            "--step",
            "5s",
            "--db",
            str(db),
        ],
    )
    assert res.exit_code == 0, res.stderr
    assert "prometheus" in res.stdout
    assert rows(db, "select count(*) from metric_samples") == [(5,)]


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    res = CliRunner().invoke(
        app,
        [
            "ingest",
            "--prometheus-url",
            url,
            "--start",
            str(T0),
            "--end",
            str(T0 + 5),
            "--db",
            str(tmp_path / "w.duckdb"),
        ],
    )
    assert res.exit_code == 2
    assert res.stderr.startswith("relplan: error: ")
    assert "cannot reach the server" in res.stderr


def test_a_match_pattern_re2_refuses_is_a_usage_error_before_any_request(tmp_path: Path) -> None:
    # --match runs on RE2 (linear time): a backreference, which Python's re would take and
    # which can backtrack without bound, is refused before the server is asked anything.
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens: a request would fail differently
    res = CliRunner().invoke(
        app,
        [
            *("ingest", "--prometheus-url", url, "--match", r"(vllm:.*)\1"),
            *("--start", str(T0), "--end", str(T0 + 5), "--db", str(tmp_path / "w.duckdb")),
        ],
    )
    assert res.exit_code == 2
    assert res.stderr.startswith("relplan: error: ")
    assert "--match" in res.stderr
    assert "RE2" in res.stderr
    assert "cannot reach the server" not in res.stderr
