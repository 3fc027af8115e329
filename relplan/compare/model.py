"""The comparison as one pydantic model: the JSON of `relplan compare --format json`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from relplan.models import StrictModel

Sense = Literal["higher", "lower"]
Direction = Literal["better", "worse", "same", "unknown"]


class RunInfo(StrictModel):
    source: str = Field(description="the path given (or found in a folder of seeds)")
    kind: Literal["workspace", "input folder", "drill output", "lab recording"]
    verdict: str | None = Field(description="the verdict of relplan analyze, null when none")


class SideInfo(StrictModel):
    label: str
    spec: str = Field(description="the argument as given")
    runs: list[RunInfo]


class PhaseAlignment(StrictModel):
    name: str = Field(description="the name figures use for this window")
    per_side: list[list[str]] = Field(description="per side, per run: the phase's own name")


class SideValue(StrictModel):
    value: float | None = Field(description="the figure (mean over the side's runs)")
    low: float | None = Field(description="low end of the side's noise band")
    high: float | None = Field(description="high end of the side's noise band")
    method: str = Field(description="how the band was found, or why there is none")
    runs: list[float | None] = Field(description="the figure of each run of the side")


class Difference(StrictModel):
    side: str = Field(description="label of the side compared with the baseline")
    diff: float | None = Field(description="side minus baseline, in the figure's unit")
    rel: float | None = Field(description="diff / |baseline|, null when baseline is 0")
    low: float | None = Field(description="low end of the difference's band")
    high: float | None = Field(description="high end of the difference's band")
    direction: Direction
    beyond_noise: bool | None = Field(description="the band excludes 0; null: no band")


class FigureRow(StrictModel):
    name: str = Field(description="the name gates use, FAMILY or FAMILY.WINDOW")
    family: str
    window: str | None
    title: str
    unit: str = Field(description="share (0..1), ratio, s, per_s or count")
    sense: Sense = Field(description="which way is better")
    analysis: str = Field(description="the analysis (relplan/analyses/registry.py) it is from")
    values: list[SideValue] = Field(description="one per side, in the order given")
    differences: list[Difference] = Field(description="each side after the first vs it")


class NotCompared(StrictModel):
    name: str
    reason: str
    supported_by: list[str] = Field(description="labels of the sides that have it")


class GateLine(StrictModel):
    expr: str
    figure: str
    side: str
    diff: float | None
    measured: str = Field(description="the difference in the expression's unit, as text")
    failed: bool = Field(description="the condition holds and the difference is beyond noise")
    judged: bool = Field(
        description="false: the condition holds but the figure has no noise band (or no value)"
        " here, so the line neither fails nor passes on it"
    )
    note: str


class SeriesPoint(StrictModel):
    side: str
    measure: Literal["delivered_per_s", "waiting", "executions_per_call"]
    t_s: float = Field(description="start of the bin, seconds from the run's t0")
    value: float | None


class RunValue(StrictModel):
    """One run's figure in one of its windows, with the run's own noise band."""

    value: float
    low: float | None = Field(description="low end of the run's band (bootstrap), null: none")
    high: float | None
    method: str = Field(description="what was resampled, or why nothing could be")


class RunWindow(StrictModel):
    name: str = Field(description="the run's own name of the window")
    start_s: float
    end_s: float


class RunPoint(StrictModel):
    measure: Literal["delivered_per_s", "waiting", "executions_per_call"]
    t_s: float
    value: float | None


class RunFigures(StrictModel):
    """What compare needs of one analysed run (relplan/compare/extract.py): its windows, its
    verdict, every figure per window (a RunValue, or the reason it has none) and the charts'
    series. Compare's cache keeps this (relplan/compare/cache.py)."""

    phases: list[RunWindow]
    steady: RunWindow | None
    overload_phase: str | None
    verdict: str | None
    figures: dict[str, RunValue | str] = Field(
        description="key FAMILY (whole run) or FAMILY.WINDOW (the run's own window name)"
    )
    series: list[RunPoint]


class Comparison(StrictModel):
    schema_version: Literal[1] = 1
    baseline: str = Field(description="label of the first side")
    sides: list[SideInfo]
    alignment: Literal["by name", "by detected overload"]
    phases: list[PhaseAlignment]
    figures: list[FigureRow]
    not_compared: list[NotCompared]
    series: list[SeriesPoint] = Field(
        default_factory=list,
        description="the charts' data: per side (its first run), per bin of the analyses",
    )
    gate: list[GateLine] = Field(default_factory=list)
    failed: bool = Field(default=False, description="a --fail-if line failed")


def _type(p: dict[str, Any]) -> str:
    if "$ref" in p:
        return str(p["$ref"]).split("/")[-1]
    if "anyOf" in p:
        return " or ".join(_type(x) for x in p["anyOf"])
    if "enum" in p:
        return "one of " + ", ".join(map(str, p["enum"]))
    if "const" in p:
        return f"always {p['const']}"
    if p.get("type") == "array":
        return "list of " + _type(p.get("items", {}))
    return str(p.get("type"))


def schema_markdown() -> str:
    """The `--format json` schema as docs/compare.md lists it: `Comparison`, then every model
    it holds, alphabetically, each field with its type and description
    (tests/test_compare_sides.py keeps the two the same)."""
    schema = Comparison.model_json_schema()
    out: list[str] = []
    for name, model in [("Comparison", schema), *sorted(schema.get("$defs", {}).items())]:
        out.append(f"- `{name}`:")
        for field, p in model["properties"].items():
            about = p.get("description")
            out.append(f"  - `{field}` ({_type(p)})" + (f": {about}" if about else ""))
    return "\n".join(out)
