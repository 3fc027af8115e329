"""promtool unit-test files generated from metric samples and relplan's own evaluation.

`build_unit_test` turns a SeriesStore (e.g. a workspace's metric samples) into promtool's
`input_series` (times shifted so the first sample is at 0, on the greatest common interval
of the sample times, `_` where a series has no sample) and writes, for EVERY evaluation time
of the grid, the alerts relplan's evaluator says are firing (labels and rendered
annotations; an empty list where none fires), plus `promql_expr_test` entries with the exact
value of every sub-expression of every rule. `promtool test rules` then checks relplan's
firing times and values against Prometheus's engine and rule manager.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import Any

import duckdb
import numpy as np

from relplan.alerts import promql_ast, promql_eval, promql_parser
from relplan.alerts.health import AlertTimeline, evaluate_rules, firing_at
from relplan.alerts.promql_eval import Vec
from relplan.alerts.promql_series import IntArray, Labels, SeriesStore
from relplan.alerts.rules import (
    AlertRule,
    RecordingRule,
    Thresholds,
    dump_yaml,
    health_rules,
    rule_file_dict,
    write_text_atomic,
)
from relplan.errors import InputError, NoDataError, UsageError
from relplan.models import StrictModel
from relplan.values import num, short

MAX_POINTS = 200_000  # grid points of one input series; beyond this the file is too big
# A unit test lists the firing alerts at every evaluation time: beyond these, the file runs to
# hundreds of MB and promtool to hours. Estimated before any evaluation (unit_test_bounds).
MAX_UNIT_TEST_EVALUATIONS = 20_000
MAX_UNIT_TEST_SERIES_EVALUATIONS = 20_000_000  # evaluation times x input series


def unit_test_bounds(evaluations: int, series: int, step_ms: int, span_ms: int) -> None:
    """Refuse, before any work, a unit test whose grid is over the stated limits."""
    step, span, times = short(step_ms / 1000), num(span_ms / 1000, 0), num(evaluations)
    if evaluations > MAX_UNIT_TEST_EVALUATIONS:
        raise UsageError(
            "--step",
            f"a unit test every {step} s over {span} s of metric samples has {times} evaluation"
            f" times, over the limit of {num(MAX_UNIT_TEST_EVALUATIONS)}; use a longer --step or"
            " a narrower --from/--to",
        )
    if evaluations * series > MAX_UNIT_TEST_SERIES_EVALUATIONS:
        raise UsageError(
            "--step",
            f"a unit test every {step} s over {span} s of metric samples has {times} evaluation"
            f" times for {num(series)} input series ({num(evaluations * series)} series"
            f" evaluations), over the limit of {num(MAX_UNIT_TEST_SERIES_EVALUATIONS)}; use a"
            " longer --step, a narrower --from/--to or fewer replicas",
        )


def _value(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Inf" if v > 0 else "-Inf"
    return repr(float(v))


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def metric_text(labels: Labels) -> str:
    """`name{a="b"}` as PromQL's ParseMetric reads it."""
    d = dict(labels)
    name = d.pop("__name__", "")
    inner = ", ".join(f"{k}={_quote(v)}" for k, v in sorted(d.items()))
    return f"{name}{{{inner}}}"


def input_series(store: SeriesStore, origin_ms: int) -> tuple[int, list[dict[str, str]]]:
    """(interval ms, promtool input_series) with sample times relative to `origin_ms`."""
    offsets = [s.t - origin_ms for s in store.series.values() if len(s.t)]
    if any((o < 0).any() for o in offsets):
        raise InputError("a sample lies before the unit test's origin")
    interval = reduce(math.gcd, (int(x) for o in offsets for x in o), 0) or 1000
    out = []
    for labels in sorted(store.series):
        s = store.series[labels]
        if not len(s.t):
            continue
        pos = (s.t - origin_ms) // interval
        if int(pos[-1]) > MAX_POINTS:
            raise InputError(
                f"{metric_text(labels)}: samples every {interval} ms over {int(pos[-1])} steps"
                " are too many for a promtool unit test; align the scrape times"
            )
        tokens: list[str] = []
        last = -1
        for p, v in zip(pos.tolist(), s.v.tolist(), strict=True):
            gap = p - last - 1
            if gap == 1:
                tokens.append("_")
            elif gap > 1:
                tokens.append(f"_x{gap}")
            tokens.append(_value(v))
            last = p
        out.append({"series": metric_text(labels), "values": " ".join(tokens)})
    return interval, out


@dataclass
class UnitTest:
    yaml_text: str
    timelines: list[AlertTimeline]
    checks: int  # alert_rule_test entries + promql_expr_test entries
    evaluations: int


def build_unit_test(
    store: SeriesStore,
    alerts: Sequence[AlertRule],
    records: Sequence[RecordingRule],
    *,
    rule_file: str,
    step_ms: int,
    end_ms: int | None = None,
    value_checks: bool = True,
) -> UnitTest:
    """A promtool test file for `rule_file`, expectations from relplan's evaluation.

    The grid starts at the earliest sample (promtool's time 0) and runs every `step_ms` to
    `end_ms` (default: the last sample).
    """
    t_all = [s.t for s in store.series.values() if len(s.t)]
    if not t_all:
        raise InputError("no samples to build a unit test from")
    origin = int(min(int(t[0]) for t in t_all))
    last = int(max(int(t[-1]) for t in t_all)) if end_ms is None else end_ms
    if step_ms <= 0:
        raise UsageError("--step", f"must be longer than zero, got {step_ms} ms")
    unit_test_bounds((last - origin) // step_ms + 1, len(t_all), step_ms, last - origin)
    ts: IntArray = origin + step_ms * np.arange((last - origin) // step_ms + 1, dtype=np.int64)
    interval, series = input_series(store, origin)
    timelines = evaluate_rules(store, ts, alerts, records)
    alert_tests: list[dict[str, Any]] = []
    for k in range(len(ts)):
        at = promql_ast.format_duration_ms(int(ts[k] - origin))
        for tl in timelines:
            exp = []
            for labels, ann in firing_at(tl, k):
                exp.append({"exp_labels": labels, "exp_annotations": ann})
            alert_tests.append({"eval_time": at, "alertname": tl.rule.alert, "exp_alerts": exp})
    expr_tests: list[dict[str, Any]] = []
    if value_checks:
        expr_tests = _value_checks(store, ts, origin, alerts, records)
    doc = {
        "rule_files": [rule_file],
        "evaluation_interval": promql_ast.format_duration_ms(step_ms),
        "tests": [
            {
                "name": "relplan offline evaluation",
                "interval": promql_ast.format_duration_ms(interval),
                "input_series": series,
                "alert_rule_test": alert_tests,
                "promql_expr_test": expr_tests,
            }
        ],
    }
    header = (
        "promtool unit test generated by relplan: expectations are relplan's offline\n"
        "evaluation; `promtool test rules` checks them against Prometheus.\n"
    )
    return UnitTest(dump_yaml(doc, header), timelines, len(alert_tests) + len(expr_tests), len(ts))


def _value_checks(
    store: SeriesStore,
    ts: IntArray,
    origin: int,
    alerts: Sequence[AlertRule],
    records: Sequence[RecordingRule],
) -> list[dict[str, Any]]:
    """Exact values of each sub-expression (not reading recorded series) at every step."""
    recorded_names = {r.record for r in records}
    seen: set[str] = set()
    out: list[dict[str, Any]] = []
    roots = [promql_parser.parse(r.expr) for r in records] + [
        promql_parser.parse(a.expr) for a in alerts
    ]
    for root in roots:
        for node in promql_ast.subexpressions(root):
            if (
                isinstance(node, promql_ast.Number)
                or promql_ast.metric_names(node) & recorded_names
            ):
                continue
            text = promql_ast.to_string(node)
            if text in seen:
                continue
            seen.add(text)
            value = promql_eval.Evaluator(store, ts).eval(node)
            if not isinstance(value, Vec):
                continue
            for k in range(len(ts)):
                samples = []
                finite = True
                for labels in sorted(value.items):
                    v, p = value.items[labels]
                    if p[k]:
                        finite = finite and math.isfinite(float(v[k]))
                        samples.append({"labels": metric_text(labels), "value": float(v[k])})
                if not finite:
                    continue  # NaN never compares equal; Inf is checked through the alerts
                out.append(
                    {
                        "expr": text,
                        "eval_time": promql_ast.format_duration_ms(int(ts[k] - origin)),
                        "exp_samples": samples,
                    }
                )
    return out


@dataclass
class PromtoolResult:
    ok: bool
    output: str


def promtool_path() -> str | None:
    return shutil.which("promtool")


def check_rules(path: Path) -> PromtoolResult:
    """`promtool check rules PATH`."""
    exe = promtool_path()
    if exe is None:
        return PromtoolResult(False, "promtool is not installed")
    proc = subprocess.run(
        [exe, "check", "rules", str(path)], capture_output=True, text=True, check=False
    )
    return PromtoolResult(proc.returncode == 0, proc.stdout + proc.stderr)


def test_rules(path: Path) -> PromtoolResult:
    """`promtool test rules PATH` (run in the file's directory, as rule_files are relative)."""
    exe = promtool_path()
    if exe is None:
        return PromtoolResult(False, "promtool is not installed")
    proc = subprocess.run(
        [exe, "test", "rules", path.name],
        capture_output=True,
        text=True,
        check=False,
        cwd=path.parent,
    )
    return PromtoolResult(proc.returncode == 0, proc.stdout + proc.stderr)


test_rules.__test__ = False  # type: ignore[attr-defined]  # not a pytest test


class UnitTestReport(StrictModel):
    rules_path: str
    test_path: str
    replica_label: str | None
    evaluations: int
    checks: int
    firing: dict[str, int]  # alert -> evaluations with at least one instance firing
    promtool: str | None  # promtool's verdict when run, None when not asked
    promtool_ok: bool | None


def write_unit_test(
    con: duckdb.DuckDBPyConnection,
    out_dir: Path,
    *,
    start: float | None = None,
    end: float | None = None,
    step: float = 15.0,
    replica_label: str | None = None,
    thresholds: Thresholds | None = None,
    run: bool = False,
) -> UnitTestReport:
    """Write rules.yml and rules_test.yml for a workspace's metrics into `out_dir`.

    The rules are the health rules relplan evaluates (metric names and replica label as
    found in the data); the test's input series are the samples in [start - lookback, end];
    its expectations are relplan's evaluation. With `run`, promtool checks both files.
    """
    from relplan.alerts.health import (
        metrics_info,
        pick_names,
        pick_replica_label,
    )

    if run and promtool_path() is None:
        raise UsageError(
            "--run", "promtool is not installed (Debian/Ubuntu: apt install prometheus)"
        )
    info = metrics_info(con)
    if not info.present:
        raise NoDataError("a unit test needs vLLM metrics; the workspace has none")
    label = replica_label or pick_replica_label(info) or "replica"
    names = pick_names(info)
    alerts = [
        r
        for r in health_rules(label, thresholds, names, proxy=True)
        if promql_ast.metric_names(promql_parser.parse(r.expr)) <= set(info.present)
    ]
    t_min = min(v[0] for v in info.present.values())
    t_max = max(v[1] for v in info.present.values())
    lo = t_min if start is None else start
    hi = t_max if end is None else end
    lookback = max(
        promql_ast.max_lookback_ms(promql_parser.parse(r.expr), promql_eval.LOOKBACK_DELTA_MS)
        for r in alerts
    )
    needed = sorted(
        {n for r in alerts for n in promql_ast.metric_names(promql_parser.parse(r.expr))}
    )
    from relplan.alerts.samples import load_store

    store = load_store(con, needed, lo - lookback / 1000, hi)
    if not out_dir.is_dir():
        raise UsageError("--out-dir", f"{out_dir} is not a directory")
    ut = build_unit_test(store, alerts, [], rule_file="rules.yml", step_ms=round(step * 1000))
    rules_path = out_dir / "rules.yml"
    test_path = out_dir / "rules_test.yml"
    write_text_atomic(rules_path, dump_yaml(rule_file_dict(alerts)))
    write_text_atomic(test_path, ut.yaml_text)
    firing = {
        tl.rule.alert: int(np.any([f for f, _ in tl.firing.values()], axis=0).sum())
        if tl.firing
        else 0
        for tl in ut.timelines
    }
    verdict: PromtoolResult | None = None
    if run:
        checked = check_rules(rules_path)
        verdict = checked if not checked.ok else test_rules(test_path)
    return UnitTestReport(
        rules_path=str(rules_path),
        test_path=str(test_path),
        replica_label=label,
        evaluations=ut.evaluations,
        checks=ut.checks,
        firing=firing,
        promtool=verdict.output.strip() if verdict else None,
        promtool_ok=verdict.ok if verdict else None,
    )
