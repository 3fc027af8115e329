"""The analyses of `relplan analyze`, one row each, in the order they run and are shown.

A row says everything the rest of relplan needs to know about an analysis:
- `name`: its one name: the `--only` choice, the `--json` key, the report section's anchor;
- `title`: a short human name (where the analysis has no report section of its own);
- `model`: the pydantic model its `run` returns (the type of its `--json` value);
- `missing(inputs)`: the input it lacks, in one sentence, or None when it can run;
- `run(inputs)`: computes the model (it may raise NoDataError: the analysis is then skipped
  with that message);
- `render`: "module:function" of its text for `relplan analyze`, `(model, ctx) -> str`
  (default `relplan.text.analyze:render_default`: title, a table of its `windows`, its finding);
- `finding`: "module:function" that words its one-sentence finding, `(model, ctx) -> str`
  (relplan/text/findings.py); `analyze()` stores it in the model's `finding` field. None when
  the model words nothing (or, like a toy analysis, fills its own);
- `section`: "module:attribute" of its report section (a `relplan.report.section.Section`),
  or None when the report does not show it;
- `data_checks`: optional, edge-case counts it finds on the way (fields of `DataChecks`).

`render`, `finding` and `section` are import strings, resolved when used, so that this layer never
imports the text renderer or the report (layering: analyses import neither relplan.report nor
relplan.sim). tests/test_analyses_registry.py resolves every row.

Adding an analysis: docs/development.md, "Adding an analysis".
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field, create_model

from relplan.alerts.health import HealthResult
from relplan.analyses import (
    amplification,
    capacity,
    counters,
    delivery,
    engine_health,
    heavy_requests,
    littles_law,
    restarts,
    retry_timing,
    stuck,
    wasted_prefill,
)
from relplan.analyses.common import SkippedAnalysis
from relplan.analyses.inputs import Inputs
from relplan.analyses.result import AnalyzeResult
from relplan.errors import UsageError

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Analysis(Generic[M]):
    name: str
    title: str
    model: type[M]
    missing: Callable[[Inputs], str | None]
    run: Callable[[Inputs], M]
    render: str = "relplan.text.analyze:render_default"
    finding: str | None = None
    section: str | None = None
    data_checks: Callable[[M], dict[str, int]] | None = None


ANALYSES: tuple[Analysis[Any], ...] = (
    Analysis(
        name="amplification",
        title="load and retry amplification",
        model=amplification.Amplification,
        missing=amplification.missing,
        run=amplification.run,
        finding="relplan.text.findings:amplification",
        render="relplan.text.analyze:render_amplification",
        section="relplan.report.sections.amplification:SECTION",
    ),
    Analysis(
        name="delivery",
        title="delivery and recovery",
        model=delivery.Delivery,
        missing=delivery.missing,
        run=delivery.run,
        finding="relplan.text.findings:delivery",
        render="relplan.text.analyze:render_delivery",
        section="relplan.report.sections.delivery:SECTION",
    ),
    Analysis(
        name="wasted_prefill",
        title="wasted prefill",
        model=wasted_prefill.WastedPrefill,
        missing=wasted_prefill.missing,
        run=wasted_prefill.run,
        finding="relplan.text.findings:wasted_prefill",
        render="relplan.text.analyze:render_wasted_prefill",
        section="relplan.report.sections.wasted_prefill:SECTION",
        data_checks=wasted_prefill.data_checks,
    ),
    Analysis(
        name="counters",
        title="counters that miss the problem",
        model=counters.Counters,
        missing=counters.missing,
        run=counters.run,
        finding="relplan.text.findings:counters",
        render="relplan.text.analyze:render_counters",
        section="relplan.report.sections.counters:SECTION",
    ),
    Analysis(
        name="littles_law",
        title="Little's law on the waiting queue",
        model=littles_law.LittlesLaw,
        missing=littles_law.missing,
        run=littles_law.run,
        finding="relplan.text.findings:littles_law",
        render="relplan.text.analyze:render_littles_law",
        section="relplan.report.sections.littles_law:SECTION",
    ),
    Analysis(
        name="retry_timing",
        title="retry timing",
        model=retry_timing.RetryTiming,
        missing=retry_timing.missing,
        run=retry_timing.run,
        finding="relplan.text.findings:retry_timing",
        render="relplan.text.analyze:render_retry_timing",
        section="relplan.report.sections.retry_timing:SECTION",
    ),
    Analysis(
        name="capacity",
        title="capacity calibration",
        model=capacity.CapacityCalibration,
        missing=capacity.missing,
        run=capacity.run,
        finding="relplan.text.findings:capacity",
        render="relplan.text.analyze:render_capacity",
    ),
    Analysis(
        name="restarts",
        title="crashes, restarts and rollouts",
        model=restarts.Restarts,
        missing=restarts.missing,
        run=restarts.run,
        finding="relplan.text.findings:restarts",
        render="relplan.text.restarts:render_restarts",
        section="relplan.report.sections.restarts:SECTION",
    ),
    Analysis(
        name="health",
        title="engine health signals (evaluated by relplan.alerts)",
        model=HealthResult,
        missing=engine_health.missing,
        run=engine_health.run,
        render="relplan.text.analyze:render_health",
        section="relplan.report.sections.health:SECTION",
    ),
    Analysis(
        name="heavy_requests",
        title="the requests that hurt",
        model=heavy_requests.HeavyRequests,
        missing=heavy_requests.missing,
        run=heavy_requests.run,
        finding="relplan.text.findings:heavy_requests",
        render="relplan.text.heavy:render_heavy_requests",
        section="relplan.report.sections.heavy_requests:SECTION",
    ),
    Analysis(
        name="stuck",
        title="stuck replicas (running, no tokens generated)",
        model=stuck.StuckEpisodes,
        missing=stuck.missing,
        run=stuck.run,
        finding="relplan.text.findings:stuck",
        render="relplan.text.heavy:render_stuck",
        section="relplan.report.sections.heavy_requests:STUCK_SECTION",
    ),
)


def analyses() -> tuple[Analysis[Any], ...]:
    """The registered analyses (read at call time, so a test may register one more)."""
    return ANALYSES


def names() -> tuple[str, ...]:
    return tuple(a.name for a in analyses())


def check_names(only: list[str]) -> list[str]:
    """`--only`'s names, refused (naming the flag) unless each is a registered analysis."""
    known = names()
    bad = [n for n in only if n not in known]
    if bad:
        raise UsageError(
            "--only", f"unknown analysis {', '.join(bad)}; expected one of {', '.join(known)}"
        )
    return only


def by_model(model: type[BaseModel]) -> Analysis[Any]:
    for a in analyses():
        if a.model is model:
            return a
    raise KeyError(f"no registered analysis returns {model.__name__}")


def resolve(ref: str) -> Any:
    """The object an import string "package.module:attribute" names."""
    module, _, attr = ref.partition(":")
    if not module or not attr:
        raise ValueError(f"expected 'module:attribute', got {ref!r}")
    return getattr(importlib.import_module(module), attr)


def result_model() -> type[AnalyzeResult]:
    """The `AnalyzeResult` class for the registered analyses."""
    return _result_model(analyses())


@cache
def _result_model(rows: tuple[Analysis[Any], ...]) -> type[AnalyzeResult]:
    fields: dict[str, Any] = {
        a.name: (a.model | None, Field(default=None, description=a.title)) for a in rows
    }
    fields["skipped"] = (list[SkippedAnalysis], Field(default_factory=list))
    model: type[AnalyzeResult] = create_model(
        "AnalyzeResult", __base__=AnalyzeResult, __module__=AnalyzeResult.__module__, **fields
    )
    model.field_of_model = {a.model: a.name for a in rows}
    return model
