"""Phase alignment: by name when every run shares the names, else by the detected overload."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from relplan.compare.build import align, unaligned
from relplan.compare.model import RunFigures, RunWindow


def _run(phases: list[tuple[str, float, float]], overload: str | None) -> Any:
    figures = RunFigures(
        phases=[RunWindow(name=n, start_s=a, end_s=b) for n, a, b in phases],
        steady=None,
        overload_phase=overload,
        verdict=None,
        figures={},
        series=[],
    )
    return SimpleNamespace(figures=figures)


def _side(*runs: Any) -> Any:
    return SimpleNamespace(runs=list(runs), label="x")


def test_same_names_align_by_name() -> None:
    a = _run([("base", 0, 60), ("pulse", 60, 90), ("hold", 90, 300)], "pulse")
    b = _run([("base", 0, 50), ("pulse", 50, 80), ("hold", 80, 200)], "pulse")
    how, windows = align([_side(a), _side(b)])
    assert how == "by name"
    assert [n for n, _ in windows] == ["run", "base", "pulse", "hold"]
    pulse = dict(windows)["pulse"]
    assert [w.start_s for row in pulse for w in row] == [60, 50]


def test_different_names_align_around_the_detected_overload() -> None:
    a = _run([("warmup", 0, 60), ("spike", 60, 90), ("after", 90, 300)], "spike")
    b = _run([("base", 0, 50), ("pulse", 50, 80), ("hold", 80, 200)], "pulse")
    how, windows = align([_side(a), _side(b)])
    assert how == "by detected overload"
    assert [n for n, _ in windows] == ["run", "before", "overload", "after"]
    overload = dict(windows)["overload"]
    assert [w.name for row in overload for w in row] == ["spike", "pulse"]


def test_aligned_windows_never_share_a_name() -> None:
    """A run's own phase named like another offset's label (here `after` one phase later in
    b): each window gets a name of its own, so figure names stay unique."""
    a = _run(
        [("warmup", 0, 60), ("spike", 60, 90), ("cool", 90, 200), ("after", 200, 300)], "spike"
    )
    b = _run([("base", 0, 50), ("pulse", 50, 80), ("hold", 80, 150), ("after", 150, 200)], "pulse")
    how, windows = align([_side(a), _side(b)])
    assert how == "by detected overload"
    names = [n for n, _ in windows]
    assert names == ["run", "before", "overload", "after", "overload+2"]
    assert len(set(names)) == len(names)


def test_a_phase_only_one_side_has_is_listed_not_dropped() -> None:
    """A drill's `drain` that the other side never had: by name the common phases align and
    `drain` is listed as not compared, naming the side that has it."""
    a = _run([("base", 0, 60), ("pulse", 60, 90), ("hold", 90, 300), ("drain", 300, 330)], None)
    b = _run([("base", 0, 50), ("pulse", 50, 80), ("hold", 80, 200)], None)
    sa, sb = SimpleNamespace(runs=[a], label="a"), SimpleNamespace(runs=[b], label="b")
    how, windows = align([sa, sb])
    assert how == "by name"
    assert [n for n, _ in windows] == ["run", "base", "pulse", "hold"]
    left = unaligned([sa, sb], windows)
    assert [(m.name, m.supported_by) for m in left] == [("phase drain", ["a"])]
    assert "not compared" in left[0].reason
    assert unaligned([sb, sb], align([sb, sb])[1]) == []


def test_offsets_one_side_lacks_are_listed_too() -> None:
    a = _run(
        [("warmup", 0, 60), ("spike", 60, 90), ("after", 90, 300), ("tail", 300, 320)], "spike"
    )
    b = _run([("base", 0, 50), ("pulse", 50, 80), ("hold", 80, 200)], "pulse")
    sa, sb = SimpleNamespace(runs=[a], label="a"), SimpleNamespace(runs=[b], label="b")
    how, windows = align([sa, sb])
    assert how == "by detected overload"
    assert [(m.name, m.supported_by) for m in unaligned([sa, sb], windows)] == [
        ("phase tail", ["a"])
    ]
