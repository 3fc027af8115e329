"""The words of `relplan compare` built from its figures' numbers and names: how each noise
band was found (or why none could be), why a figure has no value in a run, and the whole text
of `relplan compare` (verdicts, the table of differences, the noise bands, the figures not
compared, the gate; `--list-figures`), and the value words its page shows.

relplan/compare imports this package (and the report, which imports it too), so this module
never imports relplan.compare, not even its model (the layering contract counts package
circles: text -> compare -> text would be one): compare hands plain values (counts, seconds,
names) for its sentences, and the comparison is read by its shape, the `...Like` protocols
below naming the fields read of relplan/compare/model.py's `Comparison` (mypy checks the
model against them where compare's callers pass it). Numbers go through relplan.values.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from relplan.tables import format_table
from relplan.values import fixed, num, short, sig
from relplan.values import signed as plus

# --- how a noise band was found (a figure's `method`) --------------------------------------
# The count in parentheses is read back by band_methods (below) to join
# the same method over windows of different sizes into one line.


def bootstrap(what: str, n: int) -> str:
    """A band drawn by resampling `n` units (`what`: calls, executions)."""
    return f"bootstrap over {what} ({num(n)})"


def too_few_bins(bins: int) -> str:
    """No band: fewer than 3 time bins with data."""
    counted = "1 time bin" if bins == 1 else f"{bins} time bins"
    return f"none: {counted} with data (3 needed to resample)"


def time_bins(bin_s: float, bins: int) -> str:
    """A ratio figure's band, drawn over `bins` time bins of `bin_s` seconds."""
    return f"bootstrap over {short(bin_s)} s time bins ({bins})"


def histogram_time_bins(bin_s: float, bins: int) -> str:
    """A histogram quantile's band, drawn over `bins` time bins of `bin_s` seconds."""
    return f"bootstrap over {sig(bin_s, 3)} s time bins ({bins})"


def unknown_left_out(unknown: int) -> str:
    """Appended to a method: the attempts with no execution id it leaves out."""
    return f", {num(unknown)} attempt{'s' if unknown > 1 else ''} with no execution id left out"


def not_measured(source: str | None) -> str:
    """No band: a value given (`source`: run.json, --capacity), not measured."""
    return f"none: {source} (not measured)"


# --- why a figure has no value in a run --------------------------------------------------


def did_not_run(analysis: str, reason: str | None) -> str:
    return f"{analysis} did not run: {reason or 'no input'}"


def null_in_window(field: str) -> str:
    return f"{field} is null in the window"


def unknown_executions(unknown: int, sent: int) -> str:
    return (
        f"{num(unknown)} of {num(sent)} attempts sent have no execution id (a record that"
        " names the execution only when answered): executions would be undercounted"
    )


def did_not_recover(verdict: str) -> str:
    return f"did not recover ({verdict})"


def no_metric(metric: str) -> str:
    return f"no {metric} in the metrics"


def needs(what: str) -> str:
    return f"needs {what}"


def status_of(status: str, metric: str) -> str:
    return f"{status}: {metric}"


def no_histogram(metric: str) -> str:
    return f"no {metric} histogram"


# --- the comparison -----------------------------------------------------------------------


def phase_not_lined_up(labels: list[str]) -> str:
    """Why a phase that only some sides' runs have is not compared."""
    return (
        f"a phase of {', '.join(labels)} that no phase of the other side lines up with:"
        " its figures are not compared"
    )


def baseline_line(baseline: str) -> str:
    return f"baseline: {baseline}; differences are side minus baseline\n"


# --- the shapes read (relplan/compare/model.py's models and figures.py's Family have these) ----


class RunLike(Protocol):
    @property
    def verdict(self) -> str | None: ...


class SideLike(Protocol):
    @property
    def label(self) -> str: ...
    @property
    def spec(self) -> str: ...
    @property
    def runs(self) -> Sequence[RunLike]: ...


class PhaseLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def per_side(self) -> Sequence[Sequence[str]]: ...


class SideValueLike(Protocol):
    @property
    def value(self) -> float | None: ...
    @property
    def low(self) -> float | None: ...
    @property
    def high(self) -> float | None: ...
    @property
    def method(self) -> str: ...


class DifferenceLike(Protocol):
    @property
    def diff(self) -> float | None: ...
    @property
    def direction(self) -> str: ...
    @property
    def beyond_noise(self) -> bool | None: ...


class FigureRowLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def unit(self) -> str: ...
    @property
    def values(self) -> Sequence[SideValueLike]: ...
    @property
    def differences(self) -> Sequence[DifferenceLike]: ...


class NotComparedLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def reason(self) -> str: ...


class GateLineLike(Protocol):
    @property
    def expr(self) -> str: ...
    @property
    def side(self) -> str: ...
    @property
    def measured(self) -> str: ...
    @property
    def note(self) -> str: ...
    @property
    def failed(self) -> bool: ...
    @property
    def judged(self) -> bool: ...


class ComparisonLike(Protocol):
    @property
    def baseline(self) -> str: ...
    @property
    def sides(self) -> Sequence[SideLike]: ...
    @property
    def alignment(self) -> str: ...
    @property
    def phases(self) -> Sequence[PhaseLike]: ...
    @property
    def figures(self) -> Sequence[FigureRowLike]: ...
    @property
    def not_compared(self) -> Sequence[NotComparedLike]: ...
    @property
    def gate(self) -> Sequence[GateLineLike]: ...


class FamilyLike(Protocol):
    """A figure family of the catalogue (relplan/compare/figures.py's `Family`)."""

    @property
    def name(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def unit(self) -> str: ...
    @property
    def sense(self) -> str: ...
    @property
    def analysis(self) -> str: ...
    @property
    def per_window(self) -> bool: ...


# --- values in their unit (the terminal text and the page) ----------------------------------


def fmt(value: float | None, unit: str, signed: bool = False) -> str:
    """A value in its unit; a difference (`signed`) too small for the usual digits gets two
    significant ones, so that no nonzero difference reads as +0.0 beside better or worse."""
    if value is None:
        return "—"

    def digits(x: float, n: int) -> str:
        return plus(x, n) if signed else fixed(x, n)

    def significant(x: float, n: int) -> str:
        return plus(x, sig_digits=n) if signed else sig(x, n)

    if unit == "share":
        text = digits(value * 100, 1)
        if signed and value and not _NONZERO.search(text):
            text = significant(value * 100, 2)
        return text + ("pt" if signed else " %")
    if unit == "s":
        text = digits(value, 1)
        if signed and value and not _NONZERO.search(text):
            text = significant(value, 2)
        return text + " s"
    return significant(value, 3)


_NONZERO = re.compile(r"[1-9]")


def band(low: float | None, high: float | None, unit: str, signed: bool = False) -> str:
    if low is None or high is None:
        return "no band"
    return f"[{fmt(low, unit, signed)}, {fmt(high, unit, signed)}]"


# --- the text of `relplan compare` ------------------------------------------------------------


def _row(r: FigureRowLike) -> list[str]:
    cells = [r.name]
    cells += [f"{fmt(v.value, r.unit)} {band(v.low, v.high, r.unit)}" for v in r.values]
    for d in r.differences:
        noise = {True: "beyond noise", False: "within noise", None: "no band"}[d.beyond_noise]
        cells.append(f"{fmt(d.diff, r.unit, True)} {d.direction}, {noise}")
    return cells


def render_comparison(c: ComparisonLike, families: Sequence[FamilyLike]) -> str:
    """`relplan compare`'s text; `families`: the figure catalogue (compare's FAMILIES), which
    names the per-window families in the figures not compared."""
    labels = [s.label for s in c.sides]
    out = ["verdicts"]
    for s in c.sides:
        verdicts = ", ".join(r.verdict or "none" for r in s.runs)
        out.append(
            f"  {s.label}: {verdicts}  ({len(s.runs)} run{'s' if len(s.runs) > 1 else ''}: {s.spec})"
        )
    out.append(f"\nphases aligned {c.alignment}: " + ", ".join(p.name for p in c.phases))
    out += [f"  {line}" for line in phase_lines(c)]
    out.append(baseline_line(c.baseline))
    head = ["figure", *labels, *(f"{x} vs {c.baseline}" for x in labels[1:])]
    out.append(format_table(head, [_row(r) for r in c.figures], left=range(len(head))))
    methods = band_methods(c)
    if methods:
        out.append("\nnoise bands (95 %):")
        out += [f"  {m}" for m in methods]
    if c.not_compared:
        out.append("\nnot compared:")
        out += [f"  {names}: {reason}" for names, reason in not_compared_lines(c, families)]
    if c.gate:
        out.append("\ngate:")
        out += [
            f"  {'FAIL' if g.failed else 'ok  ' if g.judged else '??  '} {g.expr}"
            f" ({g.side}: {g.measured}; {g.note})"
            for g in c.gate
        ]
    return "\n".join(out)


def phase_lines(c: ComparisonLike) -> list[str]:
    """The aligned windows whose runs call them otherwise, one line each: `after: a: hold;
    b: after` (aligned by the detected overload, the names may differ)."""
    labels = [s.label for s in c.sides]
    lines = []
    for p in c.phases:
        own = [sorted(set(names)) for names in p.per_side]
        if all(names == [p.name] for names in own) or p.name == "run":
            continue
        per = "; ".join(f"{lb}: {', '.join(n)}" for lb, n in zip(labels, own, strict=True))
        lines.append(f"{p.name} = {per}")
    return lines


def _split(name: str, per_window: Sequence[str]) -> tuple[str, str | None]:
    """(family, window) of a figure name; the window is None for a whole-run family.
    `per_window`: the per-window families' names, longest first."""
    for family in per_window:
        if name.startswith(family + "."):
            return family, name[len(family) + 1 :]
    return name, None


_COUNT = re.compile(r"\(([\d,]+)\)")


def band_methods(c: ComparisonLike) -> list[str]:
    """How each side's bands were found, one line per side and method: the same method over
    windows of different sizes is one line with its counts (`calls (199, 804)`)."""
    labels = [s.label for s in c.sides]
    counts: dict[tuple[str, str], set[int]] = {}
    for r in c.figures:
        for label, v in zip(labels, r.values, strict=True):
            m = _COUNT.search(v.method)
            shape = _COUNT.sub("(N)", v.method, count=1)
            got = counts.setdefault((label, shape), set())
            if m is not None:
                got.add(int(m.group(1).replace(",", "")))
    lines = []
    for (label, shape), ns in sorted(counts.items()):
        text = shape.replace("(N)", "(" + ", ".join(num(n) for n in sorted(ns)) + ")", 1)
        lines.append(f"{label}: {text}")
    return lines


def not_compared_lines(c: ComparisonLike, families: Sequence[FamilyLike]) -> list[tuple[str, str]]:
    """The figures not compared, one line per reason: the families sharing it, each with
    its windows in braces (`(ttft_p50, ttft_p90).{run, hold}`), in the comparison's order."""
    per_window = sorted((f.name for f in families if f.per_window), key=len, reverse=True)
    by_reason: dict[str, dict[str, list[str]]] = {}
    for n in c.not_compared:
        family, window = _split(n.name, per_window)
        by_reason.setdefault(n.reason, {}).setdefault(family, [])
        if window is not None:
            by_reason[n.reason][family].append(window)
    lines = []
    for reason, fams in by_reason.items():
        groups: dict[tuple[str, ...], list[str]] = {}
        for family, windows in fams.items():
            groups.setdefault(tuple(windows), []).append(family)
        parts = []
        for group, names in groups.items():
            if not group:
                parts.append(", ".join(names))
            elif len(group) == 1:
                parts.append(", ".join(f"{n}.{group[0]}" for n in names))
            else:
                head = names[0] if len(names) == 1 else f"({', '.join(names)})"
                parts.append(f"{head}.{{{', '.join(group)}}}")
        lines.append(("; ".join(parts), reason))
    return lines


def render_figure_list(
    families: Sequence[FamilyLike],
    not_in_analyses: Sequence[tuple[str, str]],
    names: list[str] | None = None,
) -> str:
    """`relplan compare --list-figures`: the given sides' figure names (`names`), or the whole
    catalogue, one family a line, then the figures no analysis gives and why."""
    if names is not None:
        return "\n".join(names)
    lines = []
    for f in families:
        name = f"{f.name}.WINDOW" if f.per_window else f.name
        lines.append(
            f"{name.ljust(42)} {f.unit.ljust(6)} {f.sense} is better; {f.title} ({f.analysis})"
        )
    lines.append("WINDOW: run, steady, or a phase name (base, pulse, hold, ...)")
    lines += [f"{n.ljust(42)} not available: {why}" for n, why in not_in_analyses]
    return "\n".join(lines)
