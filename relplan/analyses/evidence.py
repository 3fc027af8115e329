"""The evidence ladder behind the verdict: each key figure with the inputs it came from and
whether it is measured (counted in the data), given (stated by a flag or run.json, not
checked against the data), estimated (inferred from the data by a rule) or not available
(then the input that would make it available). Values are numbers with a unit;
relplan.text.verdict words them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from relplan.models import StrictModel

Status = Literal["measured", "given", "estimated", "not available"]
Unit = Literal["share", "x_capacity", "s", "count", "per_s", "tokens", "window"]


class Figure(StrictModel):
    key: str = Field(description="stable name of the figure")
    label: str
    value: float | None
    low: float | None = Field(default=None, description="lower bound, where the data gives one")
    high: float | None = Field(default=None, description="upper bound, where the data gives one")
    unit: Unit
    status: Status
    inputs: list[str] = Field(description="the inputs it came from")
    needs: str | None = Field(
        default=None, description="what would make it available (or measured, if estimated)"
    )
    note: str | None = None


def measured(
    key: str, label: str, value: float | None, unit: Unit, inputs: list[str], **kw: object
) -> Figure:
    return Figure(
        key=key, label=label, value=value, unit=unit, status="measured", inputs=inputs, **kw
    )


def given(
    key: str, label: str, value: float | None, unit: Unit, inputs: list[str], **kw: object
) -> Figure:
    return Figure(key=key, label=label, value=value, unit=unit, status="given", inputs=inputs, **kw)


def source_status(source: str | None) -> Status:
    """The status of a run-context value from its source (RunContext's `*_source`): a flag
    or run.json states it (given); a rule found it in the data (estimated); `None` has no
    value (not available)."""
    if source is None:
        return "not available"
    if source in ("flag", "--phases", "run.json"):
        return "given"
    if source.startswith(("estimated", "from the data", "detected")):
        return "estimated"
    return "measured"


def source_name(source: str) -> str:
    """`flag` as the flag's reader knows it; other sources as they are."""
    return "a command-line flag" if source == "flag" else source


def estimated(
    key: str, label: str, value: float | None, unit: Unit, inputs: list[str], **kw: object
) -> Figure:
    return Figure(
        key=key, label=label, value=value, unit=unit, status="estimated", inputs=inputs, **kw
    )


def missing(key: str, label: str, unit: Unit, needs: str, note: str | None = None) -> Figure:
    return Figure(
        key=key,
        label=label,
        value=None,
        unit=unit,
        status="not available",
        inputs=[],
        needs=needs,
        note=note,
    )
