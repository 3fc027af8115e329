"""The real Prometheus server on loopback: OpenMetrics backfilled with promtool, then every
sub-expression of the health rules queried with query_range on relplan's evaluation grid must
equal relplan's offline values exactly (same samples, same timestamps, same float results).

This covers what the promtool unit tests cannot: irregular millisecond timestamps read from
OpenMetrics text (Prometheus truncates t x 1000 to an integer), the TSDB's own storage of
NaN values, and query_range's step grid.
"""

from __future__ import annotations

import json
import math
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from relplan import workspace
from relplan.alerts import promql_ast, promql_eval, promql_parser, rules
from relplan.alerts.samples import load_store
from tests.helpers.alerts_scenarios import T0, fill, openmetrics_text, random_store
from tests.helpers.prometheus import PrometheusServers


@pytest.fixture(scope="module")
def server(
    prometheus_server: PrometheusServers, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Path]:
    om = tmp_path_factory.mktemp("prom") / "metrics.om.txt"
    om.write_text(openmetrics_text(random_store(3)))
    return prometheus_server.serve(om), om


def _query_range(
    url: str, expr: str, start: float, end: float, step: float
) -> dict[tuple[tuple[str, str], ...], dict[int, float]]:
    qs = urllib.parse.urlencode({"query": expr, "start": start, "end": end, "step": step})
    with urllib.request.urlopen(f"{url}/api/v1/query_range?{qs}", timeout=30) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    out = {}
    for series in body["data"]["result"]:
        key = tuple(sorted(series["metric"].items()))
        out[key] = {round(float(t) * 1000): float(v) for t, v in series["values"]}
    return out


def test_query_range_on_backfilled_openmetrics_equals_relplans_values(
    server: tuple[str, Path], tmp_path: Path
) -> None:
    url, _ = server
    store = random_store(3)
    con = workspace.connect(tmp_path / "w.duckdb")
    try:
        fill(con, store)
        names = sorted({n for labels in store.series for k, n in labels if k == "__name__"})
        loaded = load_store(con, names, 0, 2e10)
    finally:
        con.close()
    start, end, step = T0 / 1000, T0 / 1000 + 1200, 15.0
    ts = np.arange(round(start * 1000), round(end * 1000) + 1, round(step * 1000), dtype=np.int64)
    checked = 0
    for rule in rules.health_rules("pod", proxy=False):
        for node in promql_ast.subexpressions(promql_parser.parse(rule.expr)):
            if isinstance(node, promql_ast.Number):
                continue
            text = promql_ast.to_string(node)
            mine = promql_eval.evaluate(node, loaded, ts)
            theirs = _query_range(url, text, start, end, step)
            mine_d = {
                k: {int(t): float(v) for t, v, p in zip(ts, vals, pres, strict=True) if p}
                for k, (vals, pres) in mine.items.items()
            }
            assert set(mine_d) == set(theirs), text
            for key, points in mine_d.items():
                assert set(points) == set(theirs[key]), (text, key)
                for t, v in points.items():
                    w = theirs[key][t]
                    assert v == w or (math.isnan(v) and math.isnan(w)), (text, key, t, v, w)
                    checked += 1
    assert checked > 5000
