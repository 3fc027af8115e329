"""The --fail-if expression language: parsing, positions of errors, units."""

from __future__ import annotations

import math

import pytest

from relplan.compare.build import check_gates
from relplan.compare.gate import measure, parse_gate
from relplan.compare.model import Difference, FigureRow
from relplan.errors import UsageError


def test_a_line_parses_into_figure_op_number_and_unit() -> None:
    g = parse_gate("on_time.hold < -5pt")
    assert (g.figure, g.op, g.threshold, g.unit, g.side) == ("on_time.hold", "<", -5.0, "pt", None)
    g = parse_gate("  executions_per_call.hold>=+10%  vs after ")
    assert (g.figure, g.op, g.threshold, g.unit, g.side) == (
        "executions_per_call.hold",
        ">=",
        10.0,
        "%",
        "after",
    )
    assert parse_gate("queue_wait.run > 2.5").unit == ""


@pytest.mark.parametrize(
    ("expr", "position", "expected"),
    [
        ("< 5", 1, "a figure name"),
        ("on_time.hold 5", 14, "a comparison"),
        ("on_time.hold < x", 16, "a number"),
        ("on_time.hold < -5x", 18, "a unit"),
        ("on_time.hold < -5pt extra", 21, "a unit"),
    ],
)
def test_a_bad_line_is_a_usage_error_naming_the_position(
    expr: str, position: int, expected: str
) -> None:
    with pytest.raises(UsageError) as err:
        parse_gate(expr)
    assert f"position {position}: expected {expected}" in str(err.value)
    assert str(err.value).startswith("--fail-if: ")


def test_holds_and_measure_follow_the_unit() -> None:
    g = parse_gate("on_time.hold < -5pt")
    value, shown = measure(g, -0.06, -0.1, "share")
    assert value is not None
    assert g.holds(value)
    assert shown == "-6.0pt"
    value, _ = measure(g, -0.04, -0.1, "share")
    assert value is not None
    assert not g.holds(value)
    rel = parse_gate("executions_per_call.hold > +10%")
    value, shown = measure(rel, 0.3, 0.15, "ratio")
    assert value is not None
    assert rel.holds(value)
    assert shown == "+15.0%"
    # against a baseline of 0 a change is infinitely large (0 % retries -> 3.5 % fails
    # "retry_share.hold > +10%"; it passed as "n/a" before), no change is 0 %
    assert measure(rel, 0.035, None, "share") == (math.inf, "+inf% (baseline is 0)")
    assert measure(rel, -0.2, None, "ratio") == (-math.inf, "-inf% (baseline is 0)")
    assert measure(rel, 0.0, None, "share") == (0.0, "+0.0% (baseline is 0)")


def _row(diff: float, beyond: bool | None) -> FigureRow:
    return FigureRow(
        name="drain_s",
        family="drain_s",
        window=None,
        title="",
        unit="s",
        sense="lower",
        analysis="verdict",
        values=[],
        differences=[
            Difference(
                side="b",
                diff=diff,
                rel=diff / 100,
                low=None,
                high=None,
                direction="worse",
                beyond_noise=beyond,
            )
        ],
    )


def test_a_bare_difference_is_never_a_failing_line() -> None:
    """The condition holds on a figure without a band (one crossing time a side): the line is
    not judged and does not fail; with a band it fails beyond noise only."""
    gate = [parse_gate("drain_s > 60")]
    (line,) = check_gates(gate, [_row(698.3, None)], ["a", "b"])
    assert (line.failed, line.judged) == (False, False)
    assert line.note.startswith("not judged: the condition holds but the figure has no noise band")
    (line,) = check_gates(gate, [_row(698.3, True)], ["a", "b"])
    assert (line.failed, line.judged, line.note) == (True, True, "fails (beyond noise)")
    (line,) = check_gates(gate, [_row(698.3, False)], ["a", "b"])
    assert (line.failed, line.judged, line.note) == (False, True, "passes (within noise)")
    (line,) = check_gates(gate, [_row(10.0, None)], ["a", "b"])
    assert (line.failed, line.judged, line.note) == (False, True, "passes")
