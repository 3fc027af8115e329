"""Helpers shared by the analyses: ratios that are null with a
reason instead of raising on a zero denominator, and the row base model."""

from __future__ import annotations

from pydantic import Field

from relplan.models import StrictModel

# Every analysis model's `finding`: filled by analyze() from the registry row's text function,
# so the analyses themselves return data only.
FINDING = "one sentence, worded by relplan/text/findings.py (filled by analyze())"


class WindowRow(StrictModel):
    """Base of every per-window row: which window, where it lies, and why figures are null."""

    window: str = Field(description="`run` (the whole analysed window) or a phase name")
    start_s: float = Field(description="window start, seconds from t0")
    end_s: float = Field(description="window end, seconds from t0")
    null_reasons: dict[str, str] = Field(
        default_factory=dict, description="for each null figure, why it is null"
    )


class SkippedAnalysis(StrictModel):
    analysis: str
    reason: str


def ratio(
    num: float | None,
    den: float | None,
    reasons: dict[str, str],
    field: str,
    why_zero: str,
) -> float | None:
    """num / den, or None with `reasons[field]` set when den is 0 or either side is missing."""
    if num is None or den is None:
        reasons.setdefault(field, why_zero if den == 0 else "an input is missing")
        return None
    if den == 0:
        reasons[field] = why_zero
        return None
    return float(num) / float(den)


def per_capacity(
    rate: float | None, capacity: float | None, reasons: dict[str, str], field: str
) -> float | None:
    if rate is None:
        reasons.setdefault(field, "the rate is unknown")
        return None
    if capacity is None:
        reasons[field] = "capacity unknown: give --capacity or a run.json with capacity_calls_per_s"
        return None
    return rate / capacity
