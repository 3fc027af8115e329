"""What `analyze()` returns: the run context, the data checks, one field per registered
analysis (None when it did not run) and the analyses skipped with the input each lacked.

The class is built from the registry (`registry.result_model()`), so a registered analysis
is a field of `relplan analyze --json` without editing this file; its JSON keys are, in
order: context, data_checks, every analysis in registry order, skipped. `AnalyzeResult` is
the base every built class derives from: use it in annotations and read an analysis with
`result.get(Model)` (typed), or by its name as an attribute.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, Field

from relplan.analyses.assessment import Assessment
from relplan.analyses.common import SkippedAnalysis
from relplan.analyses.context import RunContext
from relplan.models import StrictModel

M = TypeVar("M", bound=BaseModel)


class DataChecks(StrictModel):
    """Edge cases counted, not guessed (queries/analyses/data_edge_cases.sql)."""

    executions_no_terminal: int
    executions_no_arrived: int
    attempts_no_execution: int
    attempts_unmatched: int
    steps_unknown_execution: int | None = Field(
        default=None,
        description="steps (in the analysed window) of executions with no lifecycle event;"
        " counted by wasted prefill, null when steps exist but it did not run (--only)",
    )
    execution_ids_on_several_replicas: int


class AnalyzeResult(StrictModel):
    context: RunContext
    data_checks: DataChecks
    verdict: Assessment | None = Field(
        default=None, description="the verdict and the evidence ladder behind it"
    )
    # The field of each analysis' model, filled by the registry when it builds the class
    # (registry.result_model), so this module need not import the registry (no circle).
    field_of_model: ClassVar[dict[type[BaseModel], str]] = {}

    if TYPE_CHECKING:  # fields the registry adds when it builds the class
        skipped: list[SkippedAnalysis]

        def __getattr__(self, name: str) -> Any: ...

    def get(self, model: type[M]) -> M | None:
        """The result of the analysis whose model is `model`, None when it did not run.
        KeyError when no registered analysis returns `model`."""
        name = type(self).field_of_model.get(model)
        if name is None:
            raise KeyError(f"no registered analysis returns {model.__name__}")
        value = getattr(self, name, None)
        return value if isinstance(value, model) else None
