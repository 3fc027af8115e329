"""Engine health signals (docs/analyses.md, `health`) evaluated offline, as Prometheus would.

`evaluate_health(con, start=..., end=..., step=...)` reads the workspace's metric samples,
evaluates the same alerting rules `relplan alerts export` writes (rules.py) on the grid
start, start + step, ... <= end with the PromQL semantics of promql_eval.py, applies each rule's
`for:` like Prometheus's rule manager, and returns the firing intervals per signal and
replica. Its text (`relplan alerts eval`, `relplan analyze`) is `relplan.text.analyze.render_health`.

Alert state, as rules/alerting.go in 2.42: an output series seen at an evaluation becomes
pending with activeAt = that time (unless already pending or firing); it fires at the first
evaluation with ts - activeAt >= for; an evaluation without it resets it. A firing interval
is [first firing evaluation, the evaluation at which it stopped firing), or, when still firing
at the last evaluation, [first, last + step) with `ongoing` set.

Recording rules (used by the SLO rules) are evaluated first within their group and their
results are visible to later rules at the same evaluation time only: Prometheus writes a
staleness marker when a recorded series disappears, so a recorded value never lingers for
the 5m lookback.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np

from relplan import sql
from relplan.alerts import promql_ast, promql_eval, promql_parser, shards
from relplan.alerts.promql_eval import Vec
from relplan.alerts.promql_series import (
    BoolArray,
    FloatArray,
    IntArray,
    Labels,
    SeriesStore,
    drop_name,
)
from relplan.alerts.rules import (
    METRIC_ALTERNATIVES,
    AlertRule,
    RecordingRule,
    Thresholds,
    health_rules,
    render_template,
)
from relplan.alerts.samples import BATCH_SAMPLES, label_values, stream_stores
from relplan.errors import NoDataError, UsageError
from relplan.models import REPLICA_LABELS, StrictModel
from relplan.values import fixed, num, short

DEFAULT_STEP_S = 15.0
# Bounds on the evaluation grid (bounded_window): a stated limit on evaluations per rule,
# and how far beyond the samples the window may reach before it is clipped to them.
MAX_EVALUATIONS = 200_000
CLIP_SLACK_S = 3600.0


class FiringInterval(StrictModel):
    replica: str | None
    labels: dict[str, str]
    start: float  # epoch seconds, first firing evaluation
    end: float  # epoch seconds, evaluation at which it stopped (or last + step)
    ongoing: bool
    evaluations: int
    peak_value: float | None


class SignalResult(StrictModel):
    signal: str
    alert: str
    expr: str
    for_s: float
    evaluated: bool
    skipped_reason: str | None
    intervals: list[FiringInterval]


class HealthResult(StrictModel):
    start: float
    end: float
    step_s: float
    evaluations: int
    replica_label: str | None
    replicas: list[str]
    signals: list[SignalResult]


@dataclass
class AlertTimeline:
    """One alert rule's outcome over the grid: per alert label set, firing mask and values."""

    rule: AlertRule
    firing: dict[Labels, tuple[BoolArray, FloatArray]]
    pending: dict[Labels, BoolArray]


def grid(start: float, end: float, step: float) -> IntArray:
    """Evaluation times start, start + step, ... <= end, in integer milliseconds."""
    start_ms, end_ms, step_ms = round(start * 1000), round(end * 1000), round(step * 1000)
    if step_ms <= 0:
        raise UsageError("--step", f"must be longer than zero, got {short(step)} s")
    if end_ms < start_ms:
        raise UsageError("--to", "the end of the window is before its start")
    count = (end_ms - start_ms) // step_ms + 1
    return start_ms + step_ms * np.arange(count, dtype=np.int64)


def bounded_window(
    start: float, end: float, step: float, t_min: float, t_max: float, slack: float
) -> tuple[float, float]:
    """The evaluation window, bounded by the data: refused when it lies wholly outside the
    samples (more than `slack`, the rules' lookback, away); the part further than
    max(`slack`, CLIP_SLACK_S) beyond them is dropped (no rule can see a sample there);
    refused when it would still take more than MAX_EVALUATIONS evaluations."""
    if start > t_max + slack or end < t_min - slack:
        raise UsageError(
            "--from" if start > t_max else "--to",
            f"the window {fixed(start, 3)}..{fixed(end, 3)} lies outside the metric samples"
            f" ({fixed(t_min, 3)}..{fixed(t_max, 3)}); nothing to evaluate",
        )
    margin = max(slack, CLIP_SLACK_S)
    start = max(start, t_min - margin)
    end = min(end, t_max + margin)
    if step > 0:
        count = math.floor((end - start) / step) + 1
        if count > MAX_EVALUATIONS:
            raise UsageError(
                "--step",
                f"evaluating every {short(step)} s over {num(end - start, 0)} s of metric samples"
                f" would take {num(count)} evaluations, over the limit of {num(MAX_EVALUATIONS)};"
                " use a longer --step or a narrower --from/--to",
            )
    return start, end


def alert_labels(series: Labels, rule: AlertRule) -> Labels:
    """The alert's identity as Prometheus builds it: result labels - name + rule labels."""
    d = dict(drop_name(series))
    d.update(rule.labels)
    return tuple(sorted(d.items()))


def apply_for(vec: Vec, rule: AlertRule, ts: IntArray) -> AlertTimeline:
    for_ms = round(rule.for_s * 1000)
    firing: dict[Labels, tuple[BoolArray, FloatArray]] = {}
    pending: dict[Labels, BoolArray] = {}
    for series, (values, present) in vec.items.items():
        key = alert_labels(series, rule)
        if key in firing:
            raise UsageError(
                "rules", f"{rule.alert}: two result series with the same labels {dict(key)}"
            )
        # Index of the start of the run of consecutive present evaluations each one is in.
        prev = np.concatenate(([False], present[:-1]))
        starts = np.where(present & ~prev, np.arange(len(ts)), 0)
        run_start = np.maximum.accumulate(starts)
        fire = present & (ts - ts[run_start] >= for_ms)
        firing[key] = (fire, values)
        pending[key] = present & ~fire
    return AlertTimeline(rule, firing, pending)


def evaluate_rules(
    store: SeriesStore,
    ts: IntArray,
    alerts: Sequence[AlertRule],
    records: Sequence[RecordingRule] = (),
) -> list[AlertTimeline]:
    """Evaluate recording rules (in order), then alerting rules, over the grid `ts`."""
    recorded: dict[Labels, tuple[FloatArray, BoolArray]] = {}
    for rec in records:
        vec = promql_eval.Evaluator(store, ts, recorded).eval(promql_parser.parse(rec.expr))
        if not isinstance(vec, Vec):
            vec = Vec({(): (vec, np.ones(len(ts), dtype=bool))})
        for labels, (values, present) in vec.items.items():
            d = dict(drop_name(labels))
            d.update(rec.labels)
            d["__name__"] = rec.record
            recorded[tuple(sorted(d.items()))] = (values, present)
    out = []
    for rule in alerts:
        vec = promql_eval.Evaluator(store, ts, recorded).eval(promql_parser.parse(rule.expr))
        if not isinstance(vec, Vec):
            raise UsageError("rules", f"{rule.alert}: the expression gives a scalar")
        out.append(apply_for(vec, rule, ts))
    return out


def firing_intervals(
    timeline: AlertTimeline, ts: IntArray, step_ms: int, replica_label: str | None
) -> list[FiringInterval]:
    out: list[FiringInterval] = []
    for key in sorted(timeline.firing):
        fire, values = timeline.firing[key]
        labels = {k: v for k, v in key if k not in timeline.rule.labels}
        idx = np.nonzero(fire)[0]
        if len(idx) == 0:
            continue
        breaks = np.nonzero(np.diff(idx) > 1)[0]
        starts = np.concatenate(([idx[0]], idx[breaks + 1]))
        ends = np.concatenate((idx[breaks], [idx[-1]]))
        for a, b in zip(starts, ends, strict=True):
            ongoing = int(b) == len(ts) - 1
            end_ms = int(ts[b]) + step_ms if ongoing else int(ts[b + 1])
            vals = values[a : b + 1]
            finite = vals[np.isfinite(vals)]
            out.append(
                FiringInterval(
                    replica=labels.get(replica_label) if replica_label else None,
                    labels=labels,
                    start=int(ts[a]) / 1000,
                    end=end_ms / 1000,
                    ongoing=ongoing,
                    evaluations=int(b - a + 1),
                    peak_value=float(finite.max()) if len(finite) else None,
                )
            )
    out.sort(key=lambda i: (i.start, sorted(i.labels.items())))
    return out


def firing_at(timeline: AlertTimeline, k: int) -> list[tuple[dict[str, str], dict[str, str]]]:
    """(labels, rendered annotations) of every alert firing at evaluation k, for unit tests."""
    out = []
    for key in sorted(timeline.firing):
        fire, values = timeline.firing[key]
        if fire[k]:
            labels = dict(key)
            ann = {
                name: render_template(text, labels, float(values[k]))
                for name, text in timeline.rule.annotations.items()
            }
            out.append((labels, ann))
    return out


# --- the workspace road ----------------------------------------------------------------


@dataclass(frozen=True)
class MetricsInfo:
    present: dict[str, tuple[float, float, list[str]]]  # name -> (t_min, t_max, label keys)


def metrics_info(con: duckdb.DuckDBPyConnection) -> MetricsInfo:
    all_names = sorted({n for alts in METRIC_ALTERNATIVES.values() for n in alts})
    rows = sql.rows(con, "alerts/metric_label_keys", {"names": all_names})
    return MetricsInfo(
        {
            r["name"]: (float(r["t_min"]), float(r["t_max"]), list(r["label_keys"] or []))
            for r in rows
        }
    )


def pick_replica_label(info: MetricsInfo) -> str | None:
    keys = {k for _, _, ks in info.present.values() for k in ks}
    return next((label for label in REPLICA_LABELS if label in keys), None)


def pick_names(info: MetricsInfo) -> dict[str, str]:
    """Per metric role, the first alternative name present (else the V1 name)."""
    return {
        role: next((n for n in alts if n in info.present), alts[0])
        for role, alts in METRIC_ALTERNATIVES.items()
    }


def evaluate_health(
    con: duckdb.DuckDBPyConnection,
    *,
    start: float | None = None,
    end: float | None = None,
    step: float = DEFAULT_STEP_S,
    replica_label: str | None = None,
    rules: Thresholds | None = None,
    batch_samples: int | None = BATCH_SAMPLES,
) -> HealthResult:
    """Evaluate the engine health signals on the workspace's metrics over [start, end],
    every `step` seconds.

    start/end default to the first/last sample of the metrics the signals read (the
    analyses pass t0 and T). `replica_label` defaults to replica, pod or instance, first
    present on those metrics. A signal whose metrics are absent is skipped with a reason.

    The samples are read a batch of whole shards (replicas) at a time, at most
    `batch_samples` samples each (relplan/alerts/shards.py); None reads them all at once.
    """
    info = metrics_info(con)
    if not info.present:
        raise NoDataError(
            "engine health needs vLLM metrics (vllm:num_requests_waiting, ...); "
            "the workspace has none: relplan ingest a metrics file first"
        )
    label = replica_label or pick_replica_label(info)
    names = pick_names(info)
    t_min = min(v[0] for v in info.present.values())
    t_max = max(v[1] for v in info.present.values())
    start = t_min if start is None else start
    end = t_max if end is None else end
    alert_rules = health_rules(label or "replica", rules, names, proxy=True)
    parsed = [promql_parser.parse(r.expr) for r in alert_rules]
    needed = sorted({n for p in parsed for n in promql_ast.metric_names(p)})
    lookback = (
        max(promql_ast.max_lookback_ms(p, promql_eval.LOOKBACK_DELTA_MS) for p in parsed) / 1000
    )
    start, end = bounded_window(start, end, step, t_min, t_max, lookback)
    ts = grid(start, end, step)
    step_ms = round(step * 1000)
    skipped: dict[int, str] = {}
    by_shard: dict[str | None, list[int]] = {}
    for k, node in enumerate(parsed):
        missing = sorted(n for n in promql_ast.metric_names(node) if n not in info.present)
        if missing:
            skipped[k] = f"needs the metric {', '.join(missing)}"
        else:
            by_shard.setdefault(shards.shard_label(node), []).append(k)
    found: dict[int, list[FiringInterval]] = {k: [] for ks in by_shard.values() for k in ks}
    for shard_label, members in by_shard.items():
        names_used = sorted({n for k in members for n in promql_ast.metric_names(parsed[k])})
        for store in stream_stores(
            con, names_used, start - lookback, end, shard_label, batch_samples
        ):
            for k in members:
                rule = alert_rules[k]
                timeline = evaluate_rules(store, ts, [rule])[0]
                found[k] += firing_intervals(
                    timeline, ts, step_ms, label if rule.signal != "retry_amplification" else None
                )
    signals: list[SignalResult] = []
    replicas: set[str] = set()
    for k, rule in enumerate(alert_rules):
        intervals = sorted(found.get(k, []), key=lambda i: (i.start, sorted(i.labels.items())))
        replicas.update(i.replica for i in intervals if i.replica)
        signals.append(
            SignalResult(
                signal=rule.signal,
                alert=rule.alert,
                expr=rule.expr,
                for_s=rule.for_s,
                evaluated=k not in skipped,
                skipped_reason=skipped.get(k),
                intervals=intervals,
            )
        )
    if label:
        present = [n for n in needed if n in info.present]
        replicas.update(label_values(con, present, start - lookback, end, label))
    return HealthResult(
        start=int(ts[0]) / 1000,
        end=int(ts[-1]) / 1000,
        step_s=step,
        evaluations=len(ts),
        replica_label=label,
        replicas=sorted(replicas),
        signals=signals,
    )
