"""The flags of `relplan analyze` (and `relplan report`), as one model.

Times (`t_from`, `t_to`) are seconds from t0, or epoch seconds when larger than 1e8; durations
are seconds. `only` names analyses of the registry (relplan/analyses/registry.py; `analyze()` checks
the names with registry.check_names, so this model needs no registry); empty means all of
them. None means "not given": run.json's value, else unknown, is used.
"""

from __future__ import annotations

from pydantic import Field

from relplan.models import StrictModel


class AnalyzeOptions(StrictModel):
    phases: list[tuple[str, float, float]] | None = Field(
        default=None,
        description="--phases as (name, start, end), parsed by values.parse_phases; each"
        " bound seconds from t0 or epoch seconds",
    )
    capacity: float | None = Field(default=None, gt=0, description="Ĉ, calls per second")
    deadline: float | None = Field(default=None, gt=0, description="D, seconds")
    delivery_window: float | None = Field(default=None, gt=0, description="W, seconds")
    window: float = Field(default=60.0, gt=0, description="rolling window length (D), seconds")
    step: float = Field(default=15.0, gt=0, description="rolling evaluation step, seconds")
    bin: float | None = Field(
        default=None,
        gt=0,
        description="series bin width, seconds; default 30 s, widened for long windows",
    )
    t_from: float | None = None
    t_to: float | None = None
    replica_label: str | None = None
    prometheus_url: str | None = Field(
        default=None,
        description="evaluate the engine health signals on this Prometheus-compatible server",
    )
    only: list[str] = Field(default_factory=list)
