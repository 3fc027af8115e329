"""The comparison: sides loaded, phases aligned, every figure's values, bands and
differences, the figures only some sides have, and the gate."""

from __future__ import annotations

from typing import TYPE_CHECKING

from relplan.compare import extract as X
from relplan.compare import figures as F
from relplan.compare import gate as G
from relplan.compare import noise
from relplan.compare.model import (
    Comparison,
    Difference,
    Direction,
    FigureRow,
    GateLine,
    NotCompared,
    PhaseAlignment,
    RunInfo,
    RunValue,
    SeriesPoint,
    SideInfo,
    SideValue,
)
from relplan.compare.sides import Run, Side, load_sides
from relplan.errors import UsageError
from relplan.text import compare as words
from relplan.values import signed

if TYPE_CHECKING:
    from relplan.analyses.options import AnalyzeOptions
    from relplan.ingest.base import IngestOptions


def _phases(run: Run) -> list[F.Window]:
    return [F.Window(p.name, p.start_s, p.end_s) for p in run.figures.phases]


def align(sides: list[Side]) -> tuple[str, list[tuple[str, list[list[F.Window | None]]]]]:
    """Aligned windows: (name, per side, per run: the run's window). By phase name when every
    run shares the names, else by position around each run's detected overload phase."""
    runs = [r for s in sides for r in s.runs]
    names = [[w.name for w in _phases(r)] for r in runs]
    common = [n for n in names[0] if all(n in other for other in names[1:])]
    aligned: list[tuple[str, list[list[F.Window | None]]]] = [
        ("run", [[None for _ in s.runs] for s in sides])
    ]
    steady = [[r.figures.steady for r in s.runs] for s in sides]
    if all(x is not None for row in steady for x in row):
        aligned.append(
            (
                "steady",
                [
                    [F.Window(x.name, x.start_s, x.end_s) for x in row if x is not None]
                    for row in steady
                ],
            )
        )
    overloads = [r.figures.overload_phase for r in runs]
    if common and (len(common) == len(names[0]) or None in overloads):
        how = "by name"
        for n in common:
            per = [[next(w for w in _phases(r) if w.name == n) for r in s.runs] for s in sides]
            aligned.append((n, list(per)))  # type: ignore[arg-type]
        return how, aligned
    if None in overloads:
        return "by name", aligned
    # by the detected overload: offsets from each run's overload phase
    offsets: dict[int, list[list[F.Window | None]]] = {}
    for si, s in enumerate(sides):
        for ri, r in enumerate(s.runs):
            ph = _phases(r)
            k = [w.name for w in ph].index(r.figures.overload_phase or "")
            for i, w in enumerate(ph):
                grid = offsets.setdefault(i - k, [[None] * len(x.runs) for x in sides])
                grid[si][ri] = w
    used = {n for n, _ in aligned}
    for off in sorted(offsets):
        grid = offsets[off]
        if any(w is None for row in grid for w in row):
            continue
        label = {0: "overload", -1: "before", 1: "after"}.get(off, "overload" + signed(off))
        first = {w.name for row in grid for w in row if w is not None}
        # the runs' own name when they share it, unless another window took it already
        for name in ([first.pop()] if len(first) == 1 else []) + [label, "overload" + signed(off)]:
            if name not in used:
                break
        used.add(name)
        aligned.append((name, grid))
    return "by detected overload", aligned


def unaligned(
    sides: list[Side], windows: list[tuple[str, list[list[F.Window | None]]]]
) -> list[NotCompared]:
    """The phases of a side's runs that no aligned window holds (a drill's `drain` the other
    side never had): listed with the reason, never dropped without a word."""
    used = [
        [
            {w.name for _, grid in windows if (w := grid[si][ri]) is not None}
            for ri in range(len(s.runs))
        ]
        for si, s in enumerate(sides)
    ]
    have: dict[str, list[str]] = {}
    for si, s in enumerate(sides):
        for ri, r in enumerate(s.runs):
            for w in _phases(r):
                if w.name not in used[si][ri] and s.label not in have.setdefault(w.name, []):
                    have[w.name].append(s.label)
    return [
        NotCompared(
            name=f"phase {name}",
            reason=words.phase_not_lined_up(labels),
            supported_by=labels,
        )
        for name, labels in have.items()
    ]


def _direction(diff: float | None, sense: str) -> Direction:
    if diff is None:
        return "unknown"
    if diff == 0:
        return "same"
    return "better" if (diff > 0) == (sense == "higher") else "worse"


def _rows(
    sides: list[Side], windows: list[tuple[str, list[list[F.Window | None]]]]
) -> tuple[list[FigureRow], list[NotCompared]]:
    rows: list[FigureRow] = []
    missing: list[NotCompared] = []
    whole: list[tuple[str, list[list[F.Window | None]]]] = [
        ("", [[None for _ in s.runs] for s in sides])
    ]
    for fam in F.FAMILIES:
        for wname, grid in windows if fam.per_window else whole:
            name = f"{fam.name}.{wname}" if fam.per_window else fam.name
            per_side: list[list[RunValue | None]] = []
            reasons: dict[str, str] = {}
            for s, row in zip(sides, grid, strict=True):
                got: list[RunValue | None] = []
                for run, w in zip(s.runs, row, strict=True):
                    m = run.figures.figures.get(
                        X.key(fam, w.name if w else None), "no such window in the run"
                    )
                    if isinstance(m, str):
                        reasons.setdefault(s.label, m)
                        got.append(None)
                    else:
                        got.append(m)
                per_side.append(got)
            have = [s.label for s, got in zip(sides, per_side, strict=True) if any(got)]
            if len(have) < len(sides):
                by_reason: dict[str, list[str]] = {}
                for label, reason in reasons.items():
                    if label not in have:
                        by_reason.setdefault(reason, []).append(label)
                why = "; ".join(f"{', '.join(ls)}: {r}" for r, ls in by_reason.items())
                missing.append(NotCompared(name=name, reason=why, supported_by=have))
                continue
            bands = [noise.side_band(got) for got in per_side]
            values = [
                SideValue(value=b.value, low=b.low, high=b.high, method=b.method, runs=b.runs)
                for b in bands
            ]
            diffs = []
            base = bands[0]
            for s, b in zip(sides[1:], bands[1:], strict=True):
                d = None if b.value is None or base.value is None else b.value - base.value
                if d is not None and abs(d) <= 1e-9 * max(1.0, abs(base.value or 0.0)):
                    d = 0.0  # a mean over runs that differs in the last bits only
                rel = None if d is None or not base.value else d / abs(base.value)
                low, high, beyond = noise.difference_band(base, b)
                diffs.append(
                    Difference(
                        side=s.label,
                        diff=d,
                        rel=rel,
                        low=low,
                        high=high,
                        direction=_direction(d, fam.sense),
                        beyond_noise=beyond,
                    )
                )
            rows.append(
                FigureRow(
                    name=name,
                    family=fam.name,
                    window=wname or None,
                    title=fam.title,
                    unit=fam.unit,
                    sense=fam.sense,
                    analysis=fam.analysis,
                    values=values,
                    differences=diffs,
                )
            )
    for name, reason in F.NOT_IN_ANALYSES:
        missing.append(NotCompared(name=name, reason=reason, supported_by=[]))
    return rows, missing


def check_gates(gates: list[G.Gate], rows: list[FigureRow], labels: list[str]) -> list[GateLine]:
    out = []
    by_name = {r.name: r for r in rows}
    for g in gates:
        row = by_name.get(g.figure)
        if row is None:
            raise UsageError(
                "--fail-if",
                f"{g.expr!r}: position 1: {g.figure!r} is not a figure both sides have;"
                " see relplan compare --list-figures and the comparison's not-compared list",
            )
        if g.unit == "pt" and row.unit != "share":
            raise UsageError(
                "--fail-if", f"{g.expr!r}: pt applies to shares; {g.figure} is {row.unit}"
            )
        if g.side is not None and g.side not in labels[1:]:
            raise UsageError(
                "--fail-if", f"{g.expr!r}: vs {g.side}: expected one of {', '.join(labels[1:])}"
            )
        for d in row.differences:
            if g.side is not None and d.side != g.side:
                continue
            if d.diff is None:
                out.append(
                    GateLine(
                        expr=g.expr,
                        figure=g.figure,
                        side=d.side,
                        diff=None,
                        measured="n/a",
                        failed=False,
                        judged=False,
                        note="not judged: no value",
                    )
                )
                continue
            value, shown = G.measure(g, d.diff, d.rel, row.unit)
            holds = value is not None and g.holds(value)
            judged = True
            if not holds:
                note = "passes"
            elif d.beyond_noise is None:
                # a bare difference is never called a regression (docs/compare.md, Gate)
                judged = False
                note = (
                    "not judged: the condition holds but the figure has no noise band here"
                    " (one run a side; several runs a side, e.g. seeds, give a spread)"
                )
            elif d.beyond_noise:
                note = "fails (beyond noise)"
            else:
                note = "passes (within noise)"
            out.append(
                GateLine(
                    expr=g.expr,
                    figure=g.figure,
                    side=d.side,
                    diff=value,
                    measured=shown,
                    failed=holds and d.beyond_noise is True,
                    judged=judged,
                    note=note,
                )
            )
    return out


def series(sides: list[Side]) -> list[SeriesPoint]:
    """The paired charts' rows: the analyses' series of each side's first run."""
    return [
        SeriesPoint(side=s.label, measure=p.measure, t_s=p.t_s, value=p.value)
        for s in sides
        for p in s.runs[0].figures.series
    ]


def compare(
    specs: list[str],
    opts: AnalyzeOptions | None = None,
    fail_if: list[str] | None = None,
    inputs: IngestOptions | None = None,
) -> Comparison:
    """Compare the sides named by `specs` (the first is the baseline)."""
    if len(specs) < 2:
        raise UsageError("SIDES", "expected at least two sides (the first is the baseline)")
    gates = [G.parse_gate(e) for e in fail_if or []]  # usage errors before any work
    sides = load_sides(specs, opts, inputs)
    how, windows = align(sides)
    rows, missing = _rows(sides, windows)
    missing += unaligned(sides, windows)
    lines = check_gates(gates, rows, [s.label for s in sides])
    return Comparison(
        baseline=sides[0].label,
        sides=[
            SideInfo(
                label=s.label,
                spec=s.spec,
                runs=[
                    RunInfo(
                        source=str(r.spec.path),
                        kind=r.spec.kind,
                        verdict=r.figures.verdict,
                    )
                    for r in s.runs
                ],
            )
            for s in sides
        ],
        alignment=how,
        phases=[
            PhaseAlignment(name=n, per_side=[[w.name if w else "run" for w in row] for row in grid])
            for n, grid in windows
        ],
        figures=rows,
        not_compared=missing,
        series=series(sides),
        gate=lines,
        failed=any(g.failed for g in lines),
    )
