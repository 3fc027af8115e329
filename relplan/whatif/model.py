"""The data `relplan whatif` produces, as pydantic models (its `--json`, the report's section).

This module imports neither the simulator nor the analyses, so the report (which never
imports the simulator) can show a what-if result: the simulation happens in
`relplan.whatif.replay`, and only these models cross into the report.

- `Provenance`: where one part of the fitted scenario came from (docs/whatif.md, The fit);
- `Figures`: the figures compared between the incident and a replay, per window;
- `FitCheck`: the as-observed replay beside the incident, its error, and whether controls
  may be ranked;
- `ControlOutcome`: one control's figures over seeds (median, min, max);
- `WhatIf`: all of it, plus the settings to hand over.
"""

from __future__ import annotations

from pydantic import Field

from relplan.models import StrictModel


class Provenance(StrictModel):
    part: str = Field(description="arrivals | lengths | client | proxy | engine | capacity")
    value: str = Field(description="what was fitted, in short")
    source: str = Field(description="where it came from in the workspace, or the flag")


class WindowFigures(StrictModel):
    window: str = Field(description="a phase name, or `overload+later`")
    calls: int
    delivered_share: float | None
    on_time_share: float | None


class Figures(StrictModel):
    """What the fit check and the control table compare (one run: incident or replay)."""

    windows: list[WindowFigures]
    executions_per_call: float | None
    accepted_x_capacity: float | None = Field(description="after the overload")
    completed_x_capacity: float | None = Field(description="after the overload")
    recovery_s: float | None = Field(description="seconds from the end of the overload")
    drained_s: float | None = Field(
        default=None,
        description="drained after: seconds from the end of the overload to the backlog's"
        " return to its pre-pulse level (relplan.analyses.drain)",
    )
    verdict: str

    def window(self, name: str) -> WindowFigures | None:
        return next((w for w in self.windows if w.window == name), None)


class FitCheck(StrictModel):
    incident: Figures
    replay: Figures = Field(description="the as-observed replay, median seed")
    replay_seeds: list[int]
    error: float | None = Field(
        description="largest absolute difference of delivered or on-time share over windows"
    )
    error_window: str | None
    verdict_matches: bool
    trusted: bool = Field(description="controls are ranked only when True")
    reason: str


class Spread(StrictModel):
    median: float | None
    low: float | None
    high: float | None


class ControlOutcome(StrictModel):
    name: str
    label: str
    sets: list[str] = Field(description="the scenario overrides this control applies")
    hooks: list[str] = Field(
        default_factory=list, description="simulation hooks it applies (relplan/whatif/hooks.py)"
    )
    available: bool = True
    reason: str = Field(default="", description="why the control was not replayed")
    seeds: list[int] = Field(default_factory=list)
    delivered_share: Spread | None = Field(default=None, description="overload and later calls")
    on_time_share: Spread | None = Field(default=None, description="overload and later calls")
    recovery_s: Spread | None = None
    drained_s: Spread | None = None
    executions_per_call: Spread | None = None
    verdicts: list[str] = Field(default_factory=list, description="one per seed")
    verdict: str = Field(default="", description="the most common verdict over seeds")


class SettingBlock(StrictModel):
    target: str = Field(description="vllm | envoy | gateway-api | client | coalescing")
    title: str
    control: str = Field(description="the control this setting implements")
    text: str = Field(description="what to configure: flags, YAML or a sentence")
    language: str = Field(description="shell | yaml | text")


class WhatIf(StrictModel):
    name: str
    capacity_calls_per_s: float | None
    deadline_s: float | None
    fit: list[Provenance]
    check: FitCheck
    controls: list[ControlOutcome]
    ranked: list[str] = Field(description="control names, best first; empty when not trusted")
    settings: list[SettingBlock]
    seeds: int
    wall_s: float
    replay_cpu_s: float = Field(description="CPU seconds of the replays, summed over runs")
