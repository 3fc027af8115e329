"""`relplan alerts dashboard`: the Grafana dashboard validates against Grafana's published
JSON schemas (tests/data/schemas/grafana/SOURCES.md: the dashboard model, the time-series
panel's options and field config, the Prometheus query), and its queries are the rules'."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np
import pytest

from relplan.alerts import dashboard, promql_ast, promql_parser, pushdown, rules
from relplan.cli import app
from tests.helpers.alerts_scenarios import T0, openmetrics_text, random_store
from tests.helpers.fast_cli import CliRunner
from tests.helpers.prometheus import PrometheusServers

SCHEMAS = Path(__file__).parent / "data" / "schemas" / "grafana"
runner = CliRunner()


def _validator(name: str, definition: str | None = None) -> jsonschema.Draft7Validator:
    schema = json.loads((SCHEMAS / f"{name}.jsonschema.json").read_text())
    if definition is not None:
        schema = {**schema, "$ref": f"#/definitions/{definition}"}
    jsonschema.Draft7Validator.check_schema(schema)
    return jsonschema.Draft7Validator(schema)


def _errors(validator: jsonschema.Draft7Validator, doc: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc)]


def _concrete(expr: str) -> str:
    """A panel query with Grafana's variables replaced, for relplan's PromQL parser."""
    return expr.replace("$__rate_interval", "2m").replace("$replica", "pod-1|pod-2")


@pytest.mark.parametrize("label", ["instance", "pod"])
def test_the_dashboard_validates_against_grafanas_schemas(label: str) -> None:
    doc = dashboard.dashboard(label)
    assert _errors(_validator("dashboard"), doc) == []
    options = _validator("timeseries", "Options")
    field_config = _validator("timeseries", "FieldConfig")
    query = _validator("prometheus", "Dataquery")
    for panel in doc["panels"]:
        assert panel["type"] == "timeseries"
        assert _errors(options, panel["options"]) == [], panel["title"]
        assert _errors(field_config, panel["fieldConfig"]["defaults"]["custom"]) == []
        for target in panel["targets"]:
            assert _errors(query, target) == [], target["expr"]


def test_the_schema_check_catches_a_broken_dashboard() -> None:
    doc = dashboard.dashboard()
    del doc["schemaVersion"]
    doc["panels"][0]["gridPos"]["w"] = "wide"
    doc["panels"][0]["options"]["legend"]["placement"] = "middle"
    errors = _errors(_validator("dashboard"), doc)
    assert "[]: 'schemaVersion' is a required property" in errors
    assert any(e.startswith("['panels', 0]") for e in errors)  # neither a panel nor a row
    assert _errors(_validator("timeseries", "Options"), doc["panels"][0]["options"])


def test_every_panel_query_parses_and_is_filtered_by_the_replica_variable() -> None:
    doc = dashboard.dashboard("pod")
    exprs = [t["expr"] for p in doc["panels"] for t in p["targets"]]
    for expr in exprs:
        node = promql_parser.parse(_concrete(expr))
        for sub in promql_ast.subexpressions(node):
            if (
                isinstance(sub, promql_ast.VectorSelector)
                and promql_ast.metric_names(sub)
                and all(n.startswith("vllm:") for n in promql_ast.metric_names(sub))
            ):
                assert any(m.label == "pod" and m.op == "=~" for m in sub.matchers), expr
    variables = {v["name"]: v for v in doc["templating"]["list"]}
    assert variables["replica"]["definition"] == "label_values(vllm:num_requests_waiting, pod)"
    assert variables["replica"]["includeAll"] is True


def test_the_panels_the_analyses_stand_on_are_there() -> None:
    doc = dashboard.dashboard()
    by_title = {p["title"]: p for p in doc["panels"]}
    both = [t["expr"] for t in by_title["Prompt tokens vs prefix-cache queries"]["targets"]]
    assert "vllm:prompt_tokens_total" in both[0]
    assert "vllm:prefix_cache_queries_total" in both[1]
    assert (
        "vllm:num_requests_waiting"
        in by_title["Waiting and running requests"]["targets"][0]["expr"]
    )
    assert "vllm:kv_cache_usage_perc" in by_title["KV-cache usage"]["targets"][0]["expr"]
    assert "vllm:num_preemptions_total" in by_title["Preemptions"]["targets"][0]["expr"]
    accepted = by_title["Accepted vs completed executions"]["targets"]
    assert "vllm:request_success_total" in accepted[1]["expr"]
    assert "envoy_cluster_upstream_rq_total" in accepted[2]["expr"]
    assert [p["id"] for p in doc["panels"]] == list(range(1, len(doc["panels"]) + 1))


def test_each_health_panel_shows_the_value_its_rule_compares() -> None:
    th = rules.Thresholds(kv_usage=0.9, shortfall=0.3)
    doc = dashboard.dashboard("pod", th)
    for rule in rules.health_rules("pod", th, proxy=True):
        panel = next(p for p in doc["panels"] if p["title"] == f"Health signal: {rule.signal}")
        value, limit = dashboard.compared_value(promql_parser.parse(rule.expr))
        steps = panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
        assert steps[-1]["value"] == limit
        shown = promql_parser.parse(_concrete(panel["targets"][0]["expr"]))
        assert promql_ast.metric_names(shown) == promql_ast.metric_names(value)
    kv = next(p for p in doc["panels"] if p["title"] == "Health signal: cache_full_while_queueing")
    assert kv["fieldConfig"]["defaults"]["thresholds"]["steps"][-1]["value"] == 0.9
    assert "max_over_time(vllm:kv_cache_usage_perc" in kv["targets"][0]["expr"]


def test_alerts_dashboard_writes_an_importable_file(tmp_path: Path) -> None:
    out = tmp_path / "relplan.json"
    res = runner.invoke(app, ["alerts", "dashboard", "--out", str(out), "--replica-label", "pod"])
    assert res.exit_code == 0, res.output
    assert str(out) in res.stdout
    doc = json.loads(out.read_text())
    assert doc == dashboard.dashboard("pod")
    assert _errors(_validator("dashboard"), doc) == []
    res = runner.invoke(app, ["alerts", "dashboard", "--replica-label", "9bad"])
    assert res.exit_code == 2
    assert "not a Prometheus label name" in res.stderr


def test_every_panel_query_runs_on_a_real_prometheus(
    prometheus_server: PrometheusServers, tmp_path: Path
) -> None:
    """Debian's Prometheus backfilled with the seven health metrics of three replicas: every
    query runs, and each whose metrics are there returns series for the replicas."""
    om = tmp_path / "metrics.om.txt"
    om.write_text(openmetrics_text(random_store(5)))
    remote = pushdown.Remote(prometheus_server.serve(om))
    ts = T0 + 15_000 * np.arange(10, 70, dtype=np.int64)
    stored = {n for labels in random_store(5).series for k, n in labels if k == "__name__"}
    answered = 0
    for panel in dashboard.dashboard("pod")["panels"]:
        for target in panel["targets"]:
            expr = target["expr"].replace("$__rate_interval", "1m").replace("$replica", "a|b|c")
            vec = remote.vector(expr, ts)
            names = set(re.findall(r"vllm:[a-z_]+|envoy_[a-z_]+", expr))
            if names and names <= stored:
                assert vec.items, expr
                answered += 1
    assert answered >= 9
