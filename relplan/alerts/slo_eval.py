"""The SLO burn-rate alerts of slo.py evaluated over a window: the recording rules' error
ratios on the grid (offline from a workspace's samples, or by a server: pushdown.py), then
the page and ticket alerts from those recorded series, as Prometheus's rule manager does
within one group (a recorded series is visible at its own evaluation only; health.py)."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import numpy as np

from relplan.alerts import promql_ast, promql_eval, promql_parser
from relplan.alerts.health import (
    DEFAULT_STEP_S,
    SignalResult,
    apply_for,
    bounded_window,
    firing_intervals,
    grid,
)
from relplan.alerts.promql_eval import Vec
from relplan.alerts.promql_series import (
    BoolArray,
    FloatArray,
    IntArray,
    Labels,
    SeriesStore,
    drop_name,
)
from relplan.alerts.samples import load_store
from relplan.alerts.slo import SloRuleSet
from relplan.errors import UsageError
from relplan.models import StrictModel


class BurnWindow(StrictModel):
    window: str
    peak_burn_rate: float | None  # max over the grid and series of error ratio / budget


class SloEvaluation(StrictModel):
    name: str
    start: float
    end: float
    step_s: float
    evaluations: int
    burn: list[BurnWindow]
    signals: list[SignalResult]


def lookback_s(rs: SloRuleSet) -> float:
    """How far before the first evaluation the SLO's recording rules read samples."""
    return (
        max(
            promql_ast.max_lookback_ms(promql_parser.parse(r.expr), promql_eval.LOOKBACK_DELTA_MS)
            for r in rs.records
        )
        / 1000
    )


def slo_grid(start: float, end: float, step: float) -> IntArray:
    """The evaluation grid start, start + step, ... <= end (bounded as health.grid)."""
    if end < start:
        raise UsageError("--to", "the end of the window is before its start")
    start, end = bounded_window(start, end, step, start, end, 0.0)
    return grid(start, end, step)


def slo_vectors_offline(store: SeriesStore, rs: SloRuleSet, ts: IntArray) -> list[Vec]:
    """Each recording rule's result on the grid, evaluated by relplan from `store`."""
    out = []
    for rec in rs.records:
        value = promql_eval.Evaluator(store, ts).eval(promql_parser.parse(rec.expr))
        out.append(value if isinstance(value, Vec) else Vec({(): (value, np.ones(len(ts), bool))}))
    return out


def evaluate_slo_workspace(
    con: duckdb.DuckDBPyConnection,
    rs: SloRuleSet,
    *,
    start: float,
    end: float,
    step: float = DEFAULT_STEP_S,
) -> SloEvaluation:
    """The SLO's alerts over [start, end] from the workspace's metric samples."""
    ts = slo_grid(start, end, step)
    names = sorted(
        {n for r in rs.records for n in promql_ast.metric_names(promql_parser.parse(r.expr))}
    )
    store = load_store(con, names, start - lookback_s(rs), end)
    return evaluate_slo(rs, slo_vectors_offline(store, rs, ts), ts)


def evaluate_slo(rs: SloRuleSet, vectors: Sequence[Vec], ts: IntArray) -> SloEvaluation:
    """The burn-rate alerts of `rs` from its recording rules' results (`vectors`, in
    `rs.records` order, from slo_vectors_offline or pushdown.slo_vectors_remote)."""
    recorded: dict[Labels, tuple[FloatArray, BoolArray]] = {}
    burn: list[BurnWindow] = []
    for rec, vec in zip(rs.records, vectors, strict=True):
        peak: float | None = None
        for labels, (values, present) in vec.items.items():
            d = dict(drop_name(labels))
            d.update(rec.labels)
            d["__name__"] = rec.record
            recorded[tuple(sorted(d.items()))] = (values, present)
            finite = values[present & np.isfinite(values)]
            if len(finite):
                top = float(finite.max()) / rs.error_budget
                peak = top if peak is None else max(peak, top)
        window = rec.record.removeprefix("slo:sli_error:ratio_rate")
        burn.append(BurnWindow(window=window, peak_burn_rate=peak))
    step_ms = int(ts[1] - ts[0]) if len(ts) > 1 else 1000
    signals = []
    for rule in rs.alerts:
        value = promql_eval.Evaluator(SeriesStore(), ts, recorded).eval(
            promql_parser.parse(rule.expr)
        )
        if not isinstance(value, Vec):
            raise UsageError("rules", f"{rule.alert}: the expression gives a scalar")
        timeline = apply_for(value, rule, ts)
        signals.append(
            SignalResult(
                signal=rule.signal,
                alert=rule.alert,
                expr=rule.expr,
                for_s=rule.for_s,
                evaluated=True,
                skipped_reason=None,
                intervals=firing_intervals(timeline, ts, step_ms, None),
            )
        )
    return SloEvaluation(
        name=rs.name,
        start=int(ts[0]) / 1000,
        end=int(ts[-1]) / 1000,
        step_s=step_ms / 1000,
        evaluations=len(ts),
        burn=burn,
        signals=signals,
    )
