"""`relplan alerts dashboard`: a Grafana dashboard (the classic JSON model that Dashboards >
New > Import reads, schemaVersion 39 as vLLM's own examples/online_serving/prometheus_grafana
dashboard) with the panels relplan's analyses stand on.

- Prompt-token counter against prefix-cache queries on one panel: prefill aborted before its
  first token moves only the second (docs/analyses.md, counters).
- Waiting and running requests, KV-cache usage, preemptions.
- Accepted against completed executions: admissions estimated from prefix-cache queries ÷
  the mean prompt length (as the overload analysis does without a trace), finished requests
  by `finished_reason`, and the gateway's upstream attempts when Envoy's stats are scraped.
- One panel per health signal: the value each alerting rule compares (the rule's own
  expression, rules.py, so the panel and the alert agree) with its threshold drawn as a line,
  and the relplan alerts firing (`ALERTS`) once the rule file is deployed.

Every query is per replica (`by (L)`, L the same `--replica-label` as the rules) and filtered
by the `$replica` variable (all replicas by default); `$datasource` picks the Prometheus.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Literal

from relplan.alerts import promql_ast, promql_parser
from relplan.alerts.rules import (
    EXPORT_REPLICA_LABEL,
    HEALTH_GROUP,
    METRIC_ALTERNATIVES,
    PROXY_GROUP,
    Thresholds,
    check_label,
    health_rules,
)
from relplan.wording import Words

# The descriptions built from names and numbers, worded by relplan/text/alerts.py
# (relplan/wording.py); the panels' fixed descriptions stay beside them.
Said = Literal["signal_panel", "firing_panel", "dashboard"]
_say: Words[Said] = Words("relplan.text.alerts")

SCHEMA_VERSION = 39
UID = "relplan-vllm-health"
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
_N = {role: names[0] for role, names in METRIC_ALTERNATIVES.items()}  # vLLM V1 names


def _target(expr: str, legend: str, ref: str) -> dict[str, Any]:
    return {
        "datasource": DATASOURCE,
        "editorMode": "code",
        "expr": expr,
        "legendFormat": legend,
        "range": True,
        "refId": ref,
    }


def _panel(
    title: str,
    description: str,
    targets: list[tuple[str, str]],
    *,
    unit: str = "short",
    threshold: float | None = None,
) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"color": "green", "value": None}]
    if threshold is not None:
        steps.append({"color": "red", "value": threshold})
    return {
        "type": "timeseries",
        "title": title,
        "description": description,
        "datasource": DATASOURCE,
        "targets": [
            _target(expr, legend, chr(ord("A") + i)) for i, (expr, legend) in enumerate(targets)
        ],
        "fieldConfig": {
            "defaults": {
                "unit": unit,
                "thresholds": {"mode": "absolute", "steps": steps},
                "custom": {
                    "drawStyle": "line",
                    "lineWidth": 1,
                    "fillOpacity": 0,
                    "showPoints": "never",
                    "spanNulls": False,
                    "thresholdsStyle": {"mode": "line" if threshold is not None else "off"},
                },
            },
            "overrides": [],
        },
        "options": {
            "legend": {
                "calcs": [],
                "displayMode": "list",
                "placement": "bottom",
                "showLegend": True,
            },
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
    }


def with_replica_filter(expr: promql_ast.Expr, label: str) -> promql_ast.Expr:
    """`expr` with `label=~"$replica"` added to every vLLM selector."""
    if isinstance(expr, promql_ast.VectorSelector):
        return _filtered(expr, label)
    if isinstance(expr, promql_ast.MatrixSelector):
        return replace(expr, selector=_filtered(expr.selector, label))
    if isinstance(expr, promql_ast.FunctionCall):
        inner = expr.arg
        return replace(expr, arg=replace(inner, selector=_filtered(inner.selector, label)))
    if isinstance(expr, promql_ast.Aggregate | promql_ast.Unary):
        return replace(expr, expr=with_replica_filter(expr.expr, label))
    if isinstance(expr, promql_ast.Binary):
        return replace(
            expr, lhs=with_replica_filter(expr.lhs, label), rhs=with_replica_filter(expr.rhs, label)
        )
    return expr


def _filtered(sel: promql_ast.VectorSelector, label: str) -> promql_ast.VectorSelector:
    if not any(m.value.startswith("vllm:") for m in sel.matchers if m.label == "__name__"):
        return sel
    return replace(sel, matchers=(*sel.matchers, promql_ast.Matcher(label, "=~", "$replica")))


def compared_value(expr: promql_ast.Expr) -> tuple[promql_ast.Expr, float | None]:
    """The value an alerting rule compares and its threshold: `A > t and ...` gives (A, t)."""
    node = expr
    while isinstance(node, promql_ast.Binary) and node.op in promql_ast.SET_OPS:
        node = node.lhs
    if (
        isinstance(node, promql_ast.Binary)
        and node.op in promql_ast.COMPARISONS
        and isinstance(node.rhs, promql_ast.Number)
    ):
        return node.lhs, node.rhs.value
    return node, None


def dashboard(
    replica_label: str = EXPORT_REPLICA_LABEL, thresholds: Thresholds | None = None
) -> dict[str, Any]:
    """The dashboard's JSON model."""
    L = check_label(replica_label)
    sel = f'{L}=~"$replica"'
    who = f"{{{{{L}}}}}"
    ri = "$__rate_interval"
    n = _N
    panels = [
        _panel(
            "Prompt tokens vs prefix-cache queries",
            "Both counters rise by the prompt tokens of each admitted request; the prompt-token"
            " counter only when the first output token comes. A gap is prefill aborted before"
            " its first token (relplan analyze: counters, wasted prefill).",
            [
                (
                    f"sum by ({L}) (rate({n['prompt_tokens']}{{{sel}}}[{ri}]))",
                    f"prompt tokens {who}",
                ),
                (
                    f"sum by ({L}) (rate({n['prefix_queries']}{{{sel}}}[{ri}]))",
                    f"prefix-cache queries {who}",
                ),
            ],
            unit="short",
        ),
        _panel(
            "Waiting and running requests",
            "The engine's queue: requests waiting for admission and requests running.",
            [
                (f"sum by ({L}) ({n['waiting']}{{{sel}}})", f"waiting {who}"),
                (f"sum by ({L}) ({n['running']}{{{sel}}})", f"running {who}"),
            ],
        ),
        _panel(
            "KV-cache usage",
            "Share of the KV cache in use (1 = full): admission stops when it is full.",
            [(f"max by ({L}) ({n['kv_usage']}{{{sel}}})", who)],
            unit="percentunit",
        ),
        _panel(
            "Preemptions",
            "Running requests evicted from the KV cache; their prefill is recomputed.",
            [(f"sum by ({L}) (rate({n['preemptions']}{{{sel}}}[{ri}]))", who)],
            unit="short",
        ),
        _panel(
            "Accepted vs completed executions",
            "Accepted: admissions estimated as prefix-cache queries ÷ the mean prompt length of"
            " finished requests; completed: finished requests by reason; upstream attempts:"
            " the gateway's requests to the engines (Envoy stats), retries included.",
            [
                (
                    f"sum by ({L}) (rate({n['prefix_queries']}{{{sel}}}[{ri}]))"
                    f" / (sum by ({L}) (rate(vllm:request_prompt_tokens_sum{{{sel}}}[{ri}]))"
                    f" / sum by ({L}) (rate(vllm:request_prompt_tokens_count{{{sel}}}[{ri}])))",
                    f"accepted (estimated) {who}",
                ),
                (
                    f"sum by ({L}, finished_reason) (rate(vllm:request_success_total{{{sel}}}[{ri}]))",
                    f"completed {{{{finished_reason}}}} {who}",
                ),
                (
                    f"sum by (envoy_cluster_name) (rate({n['proxy_attempts']}[{ri}]))",
                    "upstream attempts {{envoy_cluster_name}}",
                ),
            ],
            unit="reqps",
        ),
    ]
    for rule in health_rules(L, thresholds, proxy=True):
        value, limit = compared_value(promql_parser.parse(rule.expr))
        expr = promql_ast.to_string(with_replica_filter(value, L))
        legend = "{{envoy_cluster_name}}" if rule.signal == "retry_amplification" else who
        panels.append(
            _panel(
                f"Health signal: {rule.signal}",
                _say(
                    "signal_panel",
                    summary=rule.annotations["summary"],
                    alert=rule.alert,
                    for_s=rule.for_s,
                ),
                [(expr, legend)],
                threshold=limit,
            )
        )
    panels.append(
        _panel(
            "relplan alerts firing",
            _say("firing_panel", health_group=HEALTH_GROUP, proxy_group=PROXY_GROUP),
            [
                (
                    'sum by (alertname) (ALERTS{alertname=~"Relplan.*", alertstate="firing"})',
                    "{{alertname}}",
                )
            ],
        )
    )
    for i, p in enumerate(panels):
        p["id"] = i + 1
        p["gridPos"] = {"h": 8, "w": 12, "x": 12 * (i % 2), "y": 8 * (i // 2)}
    return {
        "annotations": {
            "list": [
                {
                    "builtIn": 1,
                    "datasource": {"type": "grafana", "uid": "-- Grafana --"},
                    "enable": True,
                    "hide": True,
                    "iconColor": "rgba(0, 211, 255, 1)",
                    "name": "Annotations & Alerts",
                    "type": "dashboard",
                }
            ]
        },
        "description": _say("dashboard", label=L),
        "editable": True,
        "graphTooltip": 1,
        "links": [],
        "panels": panels,
        "refresh": "30s",
        "schemaVersion": SCHEMA_VERSION,
        "tags": ["vllm", "relplan"],
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "label": "datasource",
                    "type": "datasource",
                    "query": "prometheus",
                    "hide": 0,
                    "refresh": 1,
                },
                {
                    "name": "replica",
                    "label": L,
                    "type": "query",
                    "datasource": DATASOURCE,
                    "query": f"label_values({n['waiting']}, {L})",
                    "definition": f"label_values({n['waiting']}, {L})",
                    "includeAll": True,
                    "allValue": ".*",
                    "multi": True,
                    "current": {"text": "All", "value": "$__all"},
                    "hide": 0,
                    "refresh": 2,
                    "sort": 1,
                },
            ]
        },
        "time": {"from": "now-6h", "to": "now"},
        "timepicker": {},
        "timezone": "",
        "title": "vLLM engine health (relplan)",
        "uid": UID,
        "version": 1,
    }


def dashboard_json(
    replica_label: str = EXPORT_REPLICA_LABEL, thresholds: Thresholds | None = None
) -> str:
    return json.dumps(dashboard(replica_label, thresholds), indent=2, ensure_ascii=False) + "\n"
