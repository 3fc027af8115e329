"""Pydantic models shared across the package: the strict base and the run manifest.

Command-specific output models live beside the code that fills them (planning/, analyses/,
sim/), all deriving from `StrictModel` so that unknown keys are refused.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

# Metric label names that name a replica, in order of preference: the analyses and the alert
# rules take the first one present in the data unless --replica-label names another.
REPLICA_LABELS = ("replica", "pod", "instance")


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Phase(StrictModel):
    name: str = Field(min_length=1)
    start: float = Field(description="seconds from t0")
    end: float = Field(description="seconds from t0")

    @model_validator(mode="after")
    def _ordered(self) -> Phase:
        if self.end <= self.start:
            raise ValueError(
                f"phase {self.name!r}: end {self.end} must be after start {self.start}"
            )
        return self


class RunManifest(StrictModel):
    """`run.json` (docs/formats.md, Run manifest). Flags given to a command override it."""

    name: str
    capacity_calls_per_s: float | None = Field(default=None, gt=0)
    deadline_s: float | None = Field(default=None, gt=0)
    delivery_window_s: float | None = Field(default=None, gt=0)
    overload_phase: str | None = None
    phases: list[Phase] = Field(default_factory=list)
    t0: float | None = Field(default=None, description="epoch seconds of the run's start")
    notes: str | None = None
    meta: dict[str, Any] = Field(
        default_factory=dict, description="free-form provenance (generator, scenario, seed)"
    )
