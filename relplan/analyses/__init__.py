"""`relplan analyze`: every registered analysis that the workspace supports.

Public API (the simulator's --json summary and the HTML report build on it):
- `AnalyzeOptions`: flags (phases, capacity, deadline, delivery window, rolling window and
  step, bin width, --from/--to, replica label, --only).
- `resolve_context(con, opts) -> RunContext`: t0, T, phases, overload phase, Ĉ, D, W.
- `analyze(con, opts) -> AnalyzeResult`: one optional field per analysis of the registry
  (relplan/analyses/registry.py), `skipped` naming the missing input of each analysis not run.
- `ANALYSES`: the analyses' names, in registry order (the `--only` choices).

Analyses compute and return models; they never format text. The text of `relplan analyze`
is `relplan.text.analyze.render_analysis(result)`.

Time series for charts live in the result as lists of rows (`series` fields), all with
`start_s`/`t_s` in seconds from t0: amplification.series (calls / accepted / completed /
completed for a waiting client per bin), delivery.series and delivery.recovery.bins
(on-time share per planned-arrival bin), counters.series (rolling rises and shortfall per
replica), littles_law.series (L vs λ·D per bin).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from relplan.analyses.context import RunContext, resolve_context
from relplan.analyses.options import AnalyzeOptions

if TYPE_CHECKING:
    import duckdb

    from relplan.analyses.result import AnalyzeResult, DataChecks

    ANALYSES: tuple[str, ...]

__all__ = [
    "ANALYSES",
    "AnalyzeOptions",
    "AnalyzeResult",
    "DataChecks",
    "RunContext",
    "analyze",
    "resolve_context",
]


def __getattr__(name: str) -> Any:
    """`ANALYSES`, `AnalyzeResult` and `DataChecks` on first use: they need the registry,
    which imports every analysis (and with the health analysis numpy and the PromQL
    evaluator). A module that reads one analysis's parts (the what-if's figures read the
    delivery windows and the context) imports the package without them: a replay worker
    of `relplan report` imports no numpy and no analysis it does not run."""
    if name == "ANALYSES":
        from relplan.analyses import registry

        return registry.names()
    if name in ("AnalyzeResult", "DataChecks"):
        from relplan.analyses import result

        return getattr(result, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def analyze(
    con: duckdb.DuckDBPyConnection, opts: AnalyzeOptions, *, detail: bool = True
) -> AnalyzeResult:
    """Run every analysis of the registry that `opts.only` names (all when empty) and the
    workspace supports; the others are listed in `skipped` with the input they lack.

    `detail=False` (`relplan compare`) computes only what the verdict and compare read: no
    per-replica breakdowns (amplification's `by_replica` and `replica_series`
    stay empty), no engine-trace cross-checks of the counters (their `truth_*`,
    `trace_computed_tokens` and `counter_share_of_computed` stay null)."""
    from relplan import sql
    from relplan.analyses import registry
    from relplan.analyses.assessment import assess
    from relplan.analyses.common import SkippedAnalysis
    from relplan.analyses.inputs import Inputs
    from relplan.analyses.result import DataChecks
    from relplan.errors import NoDataError

    wanted = set(registry.check_names(opts.only) or registry.names())
    ctx = resolve_context(con, opts)
    checks = DataChecks(**sql.rows(con, "analyses/data_edge_cases")[0])
    if not ctx.has_steps:
        checks.steps_unknown_execution = 0
    present = frozenset(r["name"] for r in sql.rows(con, "analyses/metric_names_present"))
    inputs = Inputs(con=con, ctx=ctx, opts=opts, metric_names=present, detail=detail)
    results: dict[str, object] = {}
    skipped: list[SkippedAnalysis] = []
    for a in registry.analyses():
        if a.name not in wanted:
            continue
        reason = a.missing(inputs)
        if reason is None:
            try:
                results[a.name] = model = a.run(inputs)
            except NoDataError as exc:
                reason = str(exc)
            else:
                if a.finding is not None:  # worded by relplan.text (import string: no import)
                    model.finding = registry.resolve(a.finding)(model, ctx)
                if a.data_checks is not None:
                    for key, value in a.data_checks(model).items():
                        setattr(checks, key, value)
        if reason is not None:
            skipped.append(SkippedAnalysis(analysis=a.name, reason=reason))
    res = registry.result_model()(context=ctx, data_checks=checks, skipped=skipped, **results)
    if not opts.only:
        res.verdict = assess(con, ctx, res, present)
    return res
