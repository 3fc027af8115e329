"""The text of `relplan compare`: verdicts side by side, the table of differences, the
figures not compared and why, the gate's lines."""

from __future__ import annotations

import re

from relplan.compare.figures import FAMILIES, NOT_IN_ANALYSES
from relplan.compare.model import Comparison, FigureRow
from relplan.text import compare as words
from relplan.values import fixed, num, sig
from relplan.values import signed as plus


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


def _row(r: FigureRow) -> list[str]:
    cells = [r.name]
    cells += [f"{fmt(v.value, r.unit)} {band(v.low, v.high, r.unit)}" for v in r.values]
    for d in r.differences:
        noise = {True: "beyond noise", False: "within noise", None: "no band"}[d.beyond_noise]
        cells.append(f"{fmt(d.diff, r.unit, True)} {d.direction}, {noise}")
    return cells


def _table(head: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(x[i]) for x in [head, *rows]) for i in range(len(head))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(x, widths, strict=True)).rstrip()
        for x in [head, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render_comparison(c: Comparison) -> str:
    labels = [s.label for s in c.sides]
    out = ["verdicts"]
    for s in c.sides:
        verdicts = ", ".join(r.verdict or "none" for r in s.runs)
        out.append(
            f"  {s.label}: {verdicts}  ({len(s.runs)} run{'s' if len(s.runs) > 1 else ''}: {s.spec})"
        )
    out.append(f"\nphases aligned {c.alignment}: " + ", ".join(p.name for p in c.phases))
    out += [f"  {line}" for line in phase_lines(c)]
    out.append(words.baseline_line(c.baseline))
    head = ["figure", *labels, *(f"{x} vs {c.baseline}" for x in labels[1:])]
    out.append(_table(head, [_row(r) for r in c.figures]))
    methods = band_methods(c)
    if methods:
        out.append("\nnoise bands (95 %):")
        out += [f"  {m}" for m in methods]
    if c.not_compared:
        out.append("\nnot compared:")
        out += [f"  {names}: {reason}" for names, reason in not_compared_lines(c)]
    if c.gate:
        out.append("\ngate:")
        out += [
            f"  {'FAIL' if g.failed else 'ok  ' if g.judged else '??  '} {g.expr}"
            f" ({g.side}: {g.measured}; {g.note})"
            for g in c.gate
        ]
    return "\n".join(out)


def phase_lines(c: Comparison) -> list[str]:
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


_PER_WINDOW = sorted((f.name for f in FAMILIES if f.per_window), key=len, reverse=True)


def _split(name: str) -> tuple[str, str | None]:
    """(family, window) of a figure name; the window is None for a whole-run family."""
    for family in _PER_WINDOW:
        if name.startswith(family + "."):
            return family, name[len(family) + 1 :]
    return name, None


_COUNT = re.compile(r"\(([\d,]+)\)")


def band_methods(c: Comparison) -> list[str]:
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


def not_compared_lines(c: Comparison) -> list[tuple[str, str]]:
    """The figures not compared, one line per reason: the families sharing it, each with
    its windows in braces (`(ttft_p50, ttft_p90).{run, hold}`), in the comparison's order."""
    by_reason: dict[str, dict[str, list[str]]] = {}
    for n in c.not_compared:
        family, window = _split(n.name)
        by_reason.setdefault(n.reason, {}).setdefault(family, [])
        if window is not None:
            by_reason[n.reason][family].append(window)
    lines = []
    for reason, families in by_reason.items():
        groups: dict[tuple[str, ...], list[str]] = {}
        for family, windows in families.items():
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


def render_figure_list(names: list[str] | None = None) -> str:
    if names is not None:
        return "\n".join(names)
    lines = []
    for f in FAMILIES:
        name = f"{f.name}.WINDOW" if f.per_window else f.name
        lines.append(
            f"{name.ljust(42)} {f.unit.ljust(6)} {f.sense} is better; {f.title} ({f.analysis})"
        )
    lines.append("WINDOW: run, steady, or a phase name (base, pulse, hold, ...)")
    lines += [f"{n.ljust(42)} not available: {why}" for n, why in NOT_IN_ANALYSES]
    return "\n".join(lines)
