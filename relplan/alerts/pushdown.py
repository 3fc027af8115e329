"""The health signals and the SLO burn rates evaluated by a Prometheus-compatible server
(Prometheus, Thanos, Mimir, VictoriaMetrics: the same HTTP query API), fetching only their
results, never the fleet's raw samples.

Each alerting rule's expression (rules.py, the text `relplan alerts export` writes) goes to
`GET /api/v1/query_range` on relplan's own evaluation grid (start, start + step, ... <= end,
whole milliseconds, cut into requests of at most 11,000 points); the server evaluates it at
exactly those times, so its answer is the rule's result vector at every evaluation, and the
`for:` and the firing intervals are applied here as for the offline road (health.py). The
SLO rules' recording expressions (slo.py) are queried the same way; the burn-rate alerts
then combine those few series here (they read only the recorded series).

Which metrics and labels exist comes from the label APIs (`/api/v1/label/__name__/values`,
`/api/v1/labels`, `/api/v1/label/L/values`, each bounded by match[] and the window), so the
metric-name alternatives and the replica label are picked as on the offline road.

Same results as the offline evaluation of the same samples when the server uses
Prometheus's defaults: a 5-minute lookback delta (`--query.lookback-delta`) and no staleness
markers inside the window (a live Prometheus writes one when a target or a series vanishes;
a workspace cannot hold them, so just after a replica disappears the server stops seeing its
gauges up to 5 minutes sooner than the offline road). Tests prove the equality on Debian's
Prometheus backfilled from OpenMetrics (tests/test_alerts_pushdown.py).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from relplan.alerts import promql_ast, promql_parser
from relplan.alerts.health import (
    DEFAULT_STEP_S,
    FiringInterval,
    HealthResult,
    MetricsInfo,
    SignalResult,
    apply_for,
    bounded_window,
    firing_intervals,
    grid,
    pick_names,
    pick_replica_label,
)
from relplan.alerts.promql_eval import Vec
from relplan.alerts.promql_series import (
    BoolArray,
    FloatArray,
    IntArray,
    Labels,
)
from relplan.alerts.rules import METRIC_ALTERNATIVES, Thresholds, health_rules
from relplan.alerts.slo import SloRuleSet
from relplan.errors import InputError, UsageError
from relplan.ingest.metrics.promlive import MAX_POINTS, api_data, get_json, promql_string
from relplan.models import StrictModel
from relplan.values import fixed

DEFAULT_TIMEOUT_S = 300.0


class PushdownStats(StrictModel):
    url: str
    requests: int
    bytes_fetched: int  # response bodies, as received
    series: int  # result series returned by query_range
    points: int  # result points returned by query_range


class Remote:
    """A Prometheus HTTP API at `url`; every answer's size is counted in `stats`."""

    def __init__(self, url: str, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        if not url.startswith(("http://", "https://")):
            raise UsageError("--prometheus-url", f"expected an http(s) URL, got {url!r}")
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.stats = PushdownStats(url=self.url, requests=0, bytes_fetched=0, series=0, points=0)

    def get(self, path: str, params: dict[str, str], what: str) -> Any:
        # A timeout names the evaluation's whole limit (docs/alerts.md: 300 s in all), not
        # what was left of it when this GET started; `relplan alerts eval` and `analyze` have
        # no --timeout, and no --match (the pull's hints).
        doc, body = get_json(
            self.url,
            path,
            params,
            self.deadline,
            self.timeout,
            timeout_hint=" for the whole evaluation",
            size_hint="; evaluate a shorter window or at a longer --step",
        )
        self.stats.requests += 1
        self.stats.bytes_fetched += len(body)
        return api_data(doc, what, self.url + path)

    def names(self, start: float, end: float) -> set[str]:
        """The metric names the rules can read that hold samples in [start, end]."""
        wanted = sorted({n for alts in METRIC_ALTERNATIVES.values() for n in alts})
        data = self.get(
            "/api/v1/label/__name__/values",
            {"match[]": _name_match(wanted), "start": _t(start), "end": _t(end)},
            "listing metric names",
        )
        if not isinstance(data, list):
            raise InputError("listing metric names: data is not a list", self.url)
        return {str(n) for n in data} & set(wanted)

    def label_names(self, names: Sequence[str], start: float, end: float) -> list[str]:
        data = self.get(
            "/api/v1/labels",
            {"match[]": _name_match(names), "start": _t(start), "end": _t(end)},
            "listing label names",
        )
        if not isinstance(data, list):
            raise InputError("listing label names: data is not a list", self.url)
        return sorted(str(n) for n in data)

    def label_values(self, label: str, names: Sequence[str], start: float, end: float) -> list[str]:
        data = self.get(
            f"/api/v1/label/{label}/values",
            {"match[]": _name_match(names), "start": _t(start), "end": _t(end)},
            f"listing values of {label}",
        )
        if not isinstance(data, list):
            raise InputError(f"listing values of {label}: data is not a list", self.url)
        return sorted(str(v) for v in data)

    def vector(self, expr: str, ts: IntArray) -> Vec:
        """`expr` evaluated by the server at every time of `ts` (a regular grid)."""
        step_ms = int(ts[1] - ts[0]) if len(ts) > 1 else 1000
        items: dict[Labels, tuple[FloatArray, BoolArray]] = {}
        n = len(ts)
        for lo in range(0, n, MAX_POINTS):
            hi = min(lo + MAX_POINTS, n) - 1
            params = {
                "query": expr,
                "start": _t_ms(int(ts[lo])),
                "end": _t_ms(int(ts[hi])),
                "step": f"{step_ms}ms",
            }
            data = self.get("/api/v1/query_range", params, "query_range")
            if not isinstance(data, dict) or data.get("resultType") != "matrix":
                raise InputError(
                    f"query_range of {expr!r}: expected a matrix result, got {str(data)[:200]}",
                    self.url,
                )
            for series in data.get("result") or []:
                labels: Labels = tuple(sorted(series.get("metric", {}).items()))
                values, present = items.get(labels) or (np.zeros(n), np.zeros(n, dtype=bool))
                for t, v in series.get("values", []):
                    k = (round(float(t) * 1000) - int(ts[0])) // step_ms
                    if 0 <= k < n:
                        values[k] = float(v)
                        present[k] = True
                        self.stats.points += 1
                items[labels] = (values, present)
        self.stats.series += len(items)
        return Vec(items)


def _t(seconds: float) -> str:
    return _t_ms(round(seconds * 1000))


def _t_ms(ms: int) -> str:
    """Epoch milliseconds as the exact decimal seconds Prometheus parses back to them."""
    sign = "-" if ms < 0 else ""
    ms = abs(ms)
    return f"{sign}{ms // 1000}.{ms % 1000:03d}"


def _name_match(names: Sequence[str]) -> str:
    """A selector matching exactly `names` (escaped as PromQL strings inside a regex)."""
    alternatives = "|".join(_regex_escape(n) for n in sorted(names))
    return f"{{__name__=~{promql_string(alternatives)}}}"


def _regex_escape(name: str) -> str:
    return "".join("\\" + c if c in r".^$*+?()[]{}|\\" else c for c in name)


def evaluate_health_remote(
    remote: Remote,
    *,
    start: float,
    end: float,
    step: float = DEFAULT_STEP_S,
    replica_label: str | None = None,
    rules: Thresholds | None = None,
) -> HealthResult:
    """The health signals over [start, end] every `step` seconds, each rule's expression
    evaluated by the server (query_range); same model as health.evaluate_health."""
    if end < start:
        raise UsageError("--to", "the end of the window is before its start")
    present = remote.names(start, end)
    if not present:
        raise InputError(
            "the server has no vLLM metrics (vllm:num_requests_waiting, ...) in the window"
            f" {fixed(start, 3)}..{fixed(end, 3)}",
            remote.url,
        )
    keys = remote.label_names(sorted(present), start, end)
    info = MetricsInfo(dict.fromkeys(present, (start, end, keys)))
    label = replica_label or pick_replica_label(info)
    names = pick_names(info)
    alert_rules = health_rules(label or "replica", rules, names, proxy=True)
    start, end = bounded_window(start, end, step, start, end, 0.0)
    ts = grid(start, end, step)
    step_ms = round(step * 1000)
    signals: list[SignalResult] = []
    replicas: set[str] = set()
    for rule in alert_rules:
        node = promql_parser.parse(rule.expr)
        missing = sorted(n for n in promql_ast.metric_names(node) if n not in present)
        intervals: list[FiringInterval] = []
        if not missing:
            timeline = apply_for(remote.vector(rule.expr, ts), rule, ts)
            who = label if rule.signal != "retry_amplification" else None
            intervals = firing_intervals(timeline, ts, step_ms, who)
            replicas.update(i.replica for i in intervals if i.replica)
        signals.append(
            SignalResult(
                signal=rule.signal,
                alert=rule.alert,
                expr=rule.expr,
                for_s=rule.for_s,
                evaluated=not missing,
                skipped_reason=f"needs the metric {', '.join(missing)}" if missing else None,
                intervals=intervals,
            )
        )
    if label:
        vllm = sorted(n for n in present if n.startswith("vllm:"))
        replicas.update(remote.label_values(label, vllm, start, end))
    return HealthResult(
        start=int(ts[0]) / 1000,
        end=int(ts[-1]) / 1000,
        step_s=step,
        evaluations=len(ts),
        replica_label=label,
        replicas=sorted(replicas),
        signals=signals,
    )


def slo_vectors_remote(remote: Remote, rs: SloRuleSet, ts: IntArray) -> list[Vec]:
    """Each SLO recording rule's result on the grid, evaluated by the server (for
    slo_eval.evaluate_slo)."""
    return [remote.vector(rec.expr, ts) for rec in rs.records]


def raw_pull(remote: Remote, names: Sequence[str], start: float, end: float, step: float) -> None:
    """What the raw road costs: every series of `names` fetched as `relplan ingest
    --prometheus-url` fetches them (query_range of each name on the step grid, in chunks of
    at most 11,000 points); only `remote.stats` is kept (bench/pushdown.py compares)."""
    ts = grid(start, end, step)
    for name in names:
        remote.vector(f"{{__name__={promql_string(name)}}}", ts)
