"""Issue 7 part 4: `relplan analyze` reads live data too.

The bundled incident's OpenMetrics file is backfilled into Debian's Prometheus (promtool tsdb
create-blocks-from openmetrics) and served on loopback. Workspace A ingests the incident
directory (metrics from the file); workspace B ingests the same proxy log, engine trace and
run.json, and the metrics by `relplan ingest --prometheus-url` (query_range on the 5 s scrape
grid). `relplan analyze --json` and the engine health evaluation must give the same figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from relplan import workspace
from relplan.alerts.health import evaluate_health
from relplan.cli import app
from tests.helpers.fast_cli import CliRunner
from tests.helpers.prometheus import PrometheusServers

ROOT = Path(__file__).resolve().parent.parent
INCIDENT = ROOT / "sample_data" / "pulse-retry-cancel"
runner = CliRunner()


def _sample_times(om: Path) -> tuple[float, float]:
    times = [
        float(line.rsplit(" ", 1)[1])
        for line in om.read_text().splitlines()
        if line and not line.startswith("#")
    ]
    return min(times), max(times)


@pytest.fixture(scope="module")
def prometheus_url(prometheus_server: PrometheusServers) -> str:
    return prometheus_server.serve(INCIDENT / "metrics.om.txt")


def _ingest(db: Path, *args: str) -> None:
    res = runner.invoke(app, ["ingest", *args, "--db", str(db)])
    assert res.exit_code == 0, res.stderr


def _analyze(db: Path) -> dict[str, Any]:
    res = runner.invoke(app, ["analyze", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.stderr
    data: dict[str, Any] = json.loads(res.stdout)
    return data


def test_live_pull_gives_the_same_analysis_as_the_openmetrics_file(
    prometheus_url: str, tmp_path: Path
) -> None:
    from_file = tmp_path / "file.duckdb"
    _ingest(from_file, str(INCIDENT))
    live = tmp_path / "live.duckdb"
    _ingest(
        live,
        str(INCIDENT / "proxy.parquet"),
        str(INCIDENT / "engine.parquet"),
        str(INCIDENT / "run.json"),
    )
    first, last = _sample_times(INCIDENT / "metrics.om.txt")
    _ingest(
        live,
        "--prometheus-url",
        prometheus_url,
        "--match",
        "vllm:.*",
        "--start",
        f"{first:.3f}",
        "--end",
        f"{last:.3f}",
        "--step",
        "5s",
    )

    # The samples themselves: same series, times and values.
    q = "select name, labels, t, value from metric_samples order by name, labels::varchar, t"
    with (
        workspace.open_workspace(from_file, read_only=True) as a,
        workspace.open_workspace(live, read_only=True) as b,
    ):
        rows_a = a.execute(q).fetchall()
        rows_b = b.execute(q).fetchall()
        assert len(rows_a) > 2000
        assert rows_a == rows_b
        health_a = evaluate_health(a)
        health_b = evaluate_health(b)
    assert health_a == health_b
    assert any(s.intervals for s in health_a.signals if s.signal == "counter_divergence")

    # Every figure of `relplan analyze`.
    a_json, b_json = _analyze(from_file), _analyze(live)
    assert a_json.get("counters") is not None
    assert a_json["counters"]["windows"]
    assert a_json == b_json  # nothing in the JSON names a source, so nothing is scrubbed
