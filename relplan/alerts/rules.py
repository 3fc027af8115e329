"""The engine health signals (docs/analyses.md, health; docs/alerts.md) as Prometheus rules, and the rule file writer.

One definition serves both roads: `health_rules()` builds the alerting rules (expression,
`for`, labels, annotations) that `relplan alerts export` writes and that the offline
evaluator (evaluate.py) runs, so relplan's verdicts and Prometheus's come from the same text.

Choices (documented in docs/alerts.md, The rules and the choices behind them):
- Every signal is aggregated per replica with `sum by (L)` (`max by (L)` for the cache usage),
  where L is the replica label. The analyses pick L from the data (replica, pod or instance,
  first present); the exported file defaults to `instance`, which Prometheus attaches to
  every scraped series, so the file works as deployed (`--replica-label pod` on Kubernetes).
- Queue growing: the literal rule is `deriv(...[10m]) > 0`; on an idle replica a single
  waiting request inside the window makes the slope positive for minutes (a healthy
  simulated run fired it), so the default threshold is 0.01 requests/s (a queue 6 longer
  every 10 minutes); `--threshold queue_slope=0` gives the literal rule.
- `for:` defaults: 1m for the engine signals (two or more evaluations at the usual 15-30 s
  interval, so a single noisy evaluation does not page), 2m for the queue trend, and 15s for
  the counter divergence, which is "two consecutive evaluations" (docs/analyses.md, Conventions: rolling series)
  at any evaluation interval of 15 s or more.
- Counter divergence uses `increase()` over 1m for both counters; both counters are scraped
  together, so the extrapolation factors are equal except near a counter's zero point. The
  exact, non-extrapolated rise is the counters analysis's own figure (docs/analyses.md, counters).
- Retry amplification assumes Envoy's Prometheus stats: `envoy_cluster_upstream_rq_total`
  (upstream requests, retries included) and `envoy_cluster_upstream_rq_retry` (retries), by
  `envoy_cluster_name`. Amplification = attempts / (attempts - retries).
- Annotations use only `{{ $labels.L }}` and `{{ printf "%.2f" $value }}` so that relplan can
  render exactly what Prometheus renders (the unit tests compare them).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from relplan.alerts import promql_ast, promql_parser
from relplan.errors import QueryError, UsageError
from relplan.models import StrictModel
from relplan.wording import Words

EXPORT_REPLICA_LABEL = "instance"
HEALTH_GROUP = "relplan-vllm-health"
PROXY_GROUP = "relplan-proxy"

# The annotations (what the person on call reads) and the rule file's header, worded by
# relplan/text/alerts.py from the thresholds and names (relplan/wording.py). A threshold is
# handed over as the expression's own literal (`num_text`), so the text quotes the rule.
Said = Literal[
    "summary",
    "runbook",
    "preemption_storm",
    "cache_full_while_queueing",
    "queue_growing",
    "stuck_replica",
    "counter_divergence",
    "retry_amplification",
    "rules_header",
]
_say: Words[Said] = Words("relplan.text.alerts")
# An alert's value in an annotation, as Prometheus's template renders it (render_template).
VALUE_TEMPLATE = '{{ printf "%.2f" $value }}'

# vLLM V1 names first; older builds' names are accepted by the offline evaluation.
METRIC_ALTERNATIVES: dict[str, tuple[str, ...]] = {
    "kv_usage": ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
    "prefix_queries": ("vllm:prefix_cache_queries_total", "vllm:prefix_cache_queries"),
    "prompt_tokens": ("vllm:prompt_tokens_total", "vllm:prompt_tokens"),
    "generation_tokens": ("vllm:generation_tokens_total", "vllm:generation_tokens"),
    "preemptions": ("vllm:num_preemptions_total", "vllm:num_preemptions"),
    "waiting": ("vllm:num_requests_waiting",),
    "running": ("vllm:num_requests_running",),
    "proxy_attempts": ("envoy_cluster_upstream_rq_total",),
    "proxy_retries": ("envoy_cluster_upstream_rq_retry",),
}

_LABEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class Thresholds(StrictModel):
    """Thresholds and `for:` durations of the health signals (seconds for durations)."""

    preemption_rate: float = Field(0.5, gt=0, description="preemptions per second, rate over 5m")
    kv_usage: float = Field(0.95, gt=0, description="KV cache usage, 0..1, max over 10m")
    waiting: float = Field(10, ge=0, description="requests waiting, with the cache full")
    queue_slope: float = Field(
        0.01, ge=0, description="waiting-queue growth, requests/s (deriv over 10m)"
    )
    shortfall: float = Field(0.2, gt=0, lt=1, description="1 - prompt-token rise / query rise")
    retry_amplification: float = Field(1.2, gt=1, description="upstream attempts per call")
    for_preemption_storm: float = Field(60, ge=0)
    for_cache_full_while_queueing: float = Field(60, ge=0)
    for_queue_growing: float = Field(120, ge=0)
    for_stuck_replica: float = Field(60, ge=0)
    for_counter_divergence: float = Field(15, ge=0)
    for_retry_amplification: float = Field(120, ge=0)


class AlertRule(StrictModel):
    signal: str
    alert: str
    expr: str
    for_s: float
    labels: dict[str, str]
    annotations: dict[str, str]
    group: str


class RecordingRule(StrictModel):
    record: str
    expr: str
    labels: dict[str, str] = Field(default_factory=dict)
    group: str


def parse_thresholds(items: list[str] | None) -> Thresholds:
    """`--threshold key=value` pairs (durations as 90s, 2m) into Thresholds."""
    values: dict[str, Any] = {}
    known = set(Thresholds.model_fields)
    for raw in items or []:
        for item in (p for p in raw.split(",") if p.strip()):
            key, sep, value = item.partition("=")
            key = key.strip().replace("-", "_")
            if not sep or key not in known:
                raise UsageError(
                    "--threshold",
                    f"expected key=value with key one of {', '.join(sorted(known))}, got {item!r}",
                )
            value = value.strip()
            try:
                if key.startswith("for_"):
                    values[key] = (
                        promql_ast.parse_duration_ms(value) / 1000
                        if not re.fullmatch(r"\d+(\.\d+)?", value)
                        else float(value)
                    )
                else:
                    values[key] = float(value)
            except (ValueError, QueryError) as exc:
                raise UsageError(
                    "--threshold", f"{key}: not a number or duration: {value!r}"
                ) from exc
    try:
        return Thresholds(**values)
    except ValueError as exc:
        first = str(exc).splitlines()
        raise UsageError("--threshold", " ".join(first[1:3]).strip() or str(exc)) from exc


def check_label(label: str, flag: str = "--replica-label") -> str:
    if not _LABEL.match(label) or label.startswith("__"):
        raise UsageError(flag, f"not a Prometheus label name: {label!r}")
    return label


def num_text(x: float) -> str:
    """A threshold as PromQL text: integers without a decimal point, others shortest repr."""
    if math.isfinite(x) and x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def _dur(seconds: float) -> str:
    return promql_ast.format_duration_ms(round(seconds * 1000))


def _health_rule(
    signal: str,
    alert: str,
    expr: str,
    for_s: float,
    *,
    who: str,
    description: str,
    severity: str = "warning",
) -> AlertRule:
    """One alerting rule of the health group."""
    return AlertRule(
        signal=signal,
        alert=alert,
        expr=expr,
        for_s=for_s,
        labels={"severity": severity},
        annotations={
            "summary": _say("summary", signal=signal, who=who),
            "description": description,
            "runbook": _say("runbook", signal=signal),
        },
        group=HEALTH_GROUP,
    )


def health_rules(
    replica_label: str = EXPORT_REPLICA_LABEL,
    thresholds: Thresholds | None = None,
    names: dict[str, str] | None = None,
    *,
    proxy: bool = True,
) -> list[AlertRule]:
    """The alerting rules of the health signals (docs/alerts.md) (and retry amplification when `proxy`)."""
    th = thresholds or Thresholds()
    L = check_label(replica_label)
    n = {k: v[0] for k, v in METRIC_ALTERNATIVES.items()}
    n.update(names or {})
    who = f"{{{{ $labels.{L} }}}}"
    value = VALUE_TEMPLATE
    rules = [
        _health_rule(
            "preemption_storm",
            "RelplanPreemptionStorm",
            f"sum by ({L}) (rate({n['preemptions']}[5m])) > {num_text(th.preemption_rate)}",
            th.for_preemption_storm,
            who=who,
            description=_say("preemption_storm", value=value, rate=num_text(th.preemption_rate)),
        ),
        _health_rule(
            "cache_full_while_queueing",
            "RelplanCacheFullWhileQueueing",
            (
                f"max by ({L}) (max_over_time({n['kv_usage']}[10m])) > {num_text(th.kv_usage)}"
                f" and on ({L}) sum by ({L}) ({n['waiting']}) > {num_text(th.waiting)}"
            ),
            th.for_cache_full_while_queueing,
            who=who,
            description=_say(
                "cache_full_while_queueing",
                value=value,
                kv_usage=num_text(th.kv_usage),
                waiting=num_text(th.waiting),
            ),
        ),
        _health_rule(
            "queue_growing",
            "RelplanQueueGrowing",
            f"sum by ({L}) (deriv({n['waiting']}[10m])) > {num_text(th.queue_slope)}",
            th.for_queue_growing,
            who=who,
            description=_say("queue_growing", value=value, slope=num_text(th.queue_slope)),
        ),
        _health_rule(
            "stuck_replica",
            "RelplanStuckReplica",
            (
                f"sum by ({L}) ({n['running']}) > 0 and on ({L})"
                f" sum by ({L}) (increase({n['generation_tokens']}[1m])) == 0"
            ),
            th.for_stuck_replica,
            who=who,
            description=_say("stuck_replica", value=value),
            severity="page",
        ),
        _health_rule(
            "counter_divergence",
            "RelplanCounterDivergence",
            (
                f"1 - sum by ({L}) (increase({n['prompt_tokens']}[1m]))"
                f" / sum by ({L}) (increase({n['prefix_queries']}[1m])) > {num_text(th.shortfall)}"
                f" and on ({L}) sum by ({L}) (increase({n['prefix_queries']}[1m])) > 0"
            ),
            th.for_counter_divergence,
            who=who,
            description=_say("counter_divergence", value=value, shortfall=num_text(th.shortfall)),
        ),
    ]
    if proxy:
        c = "envoy_cluster_name"
        attempts = f"sum by ({c}) (rate({n['proxy_attempts']}[5m]))"
        retries = f"sum by ({c}) (rate({n['proxy_retries']}[5m]))"
        rules.append(
            AlertRule(
                signal="retry_amplification",
                alert="RelplanRetryAmplification",
                expr=f"{attempts} / ({attempts} - {retries}) > {num_text(th.retry_amplification)}",
                for_s=th.for_retry_amplification,
                labels={"severity": "warning"},
                annotations={
                    "summary": _say(
                        "summary", signal="retry_amplification", who=f"{{{{ $labels.{c} }}}}"
                    ),
                    "description": _say(
                        "retry_amplification",
                        value=value,
                        amplification=num_text(th.retry_amplification),
                    ),
                    "runbook": _say("runbook", signal="retry_amplification"),
                },
                group=PROXY_GROUP,
            )
        )
    for r in rules:
        promql_parser.parse(r.expr)  # every exported expression is one relplan can evaluate
    return rules


def render_template(text: str, labels: dict[str, str], value: float) -> str:
    """Render the two template forms the rules use, as Prometheus's text/template does."""

    def go_float(v: float) -> str:
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "+Inf" if v > 0 else "-Inf"
        return f"{v:.2f}"

    out = text.replace('{{ printf "%.2f" $value }}', go_float(value))
    return re.sub(
        r"\{\{ \$labels\.([A-Za-z_][A-Za-z0-9_]*) \}\}", lambda m: labels.get(m.group(1), ""), out
    )


# --- rule files -------------------------------------------------------------------------


def rule_file_dict(
    alerts: list[AlertRule],
    records: list[RecordingRule] | None = None,
    *,
    interval: str | None = None,
) -> dict[str, Any]:
    """The YAML structure of a Prometheus rule file, groups in first-seen order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for rec in records or []:
        entry: dict[str, Any] = {"record": rec.record, "expr": rec.expr}
        if rec.labels:
            entry["labels"] = dict(rec.labels)
        groups.setdefault(rec.group, []).append(entry)
    for a in alerts:
        entry = {"alert": a.alert, "expr": a.expr}
        if a.for_s > 0:
            entry["for"] = _dur(a.for_s)
        entry["labels"] = dict(a.labels)
        entry["annotations"] = dict(a.annotations)
        groups.setdefault(a.group, []).append(entry)
    out_groups = []
    for name, rules in groups.items():
        g: dict[str, Any] = {"name": name}
        if interval:
            g["interval"] = interval
        g["rules"] = rules
        out_groups.append(g)
    return {"groups": out_groups}


def dump_yaml(data: dict[str, Any], header: str = "") -> str:
    import yaml

    # libyaml's emitter when present (10x faster on large unit-test files), same output rules.
    base = yaml.CSafeDumper if getattr(yaml, "__with_libyaml__", False) else yaml.SafeDumper

    class _Dumper(base):  # type: ignore[valid-type,misc]
        pass

    def _str(dumper: yaml.SafeDumper, s: str) -> yaml.ScalarNode:
        style = "|" if "\n" in s else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", s, style=style)

    _Dumper.add_representer(str, _str)
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, width=10_000, allow_unicode=True)
    lines = [f"# {ln}".rstrip() for ln in header.splitlines()] if header else []
    return "\n".join([*lines, body]) if lines else body


def export_health_rules(
    replica_label: str = EXPORT_REPLICA_LABEL,
    thresholds: Thresholds | None = None,
    *,
    proxy: bool = True,
) -> str:
    """The text of `relplan alerts export`: a Prometheus rule file."""
    rules = health_rules(replica_label, thresholds, proxy=proxy)
    header = _say("rules_header", replica_label=replica_label, proxy=proxy)
    return dump_yaml(rule_file_dict(rules), header)


SignalName = Literal[
    "preemption_storm",
    "cache_full_while_queueing",
    "queue_growing",
    "stuck_replica",
    "counter_divergence",
    "retry_amplification",
]


def write_text_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same directory, so nothing is ever half-written."""
    if path.is_dir():
        raise UsageError("--out", f"{path} is a directory; give a file name such as rules.yml")
    if not path.parent.exists():
        raise UsageError("--out", f"directory {path.parent} does not exist")
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
