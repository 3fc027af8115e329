"""The evidence ladder behind the verdict: each key figure with the inputs it came from and
whether it is measured, estimated or not available (then the input that would make it
available). Values are numbers with a unit; relplan.render words them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from relplan.models import StrictModel

Status = Literal["measured", "estimated", "not available"]
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
