"""Text of the verdict and its evidence ladder (`relplan analyze`, the report's top), and of
the run context's values and phases in `relplan analyze`'s Run lines."""

from __future__ import annotations

from relplan.analyses.assessment import Assessment
from relplan.analyses.context import RunContext
from relplan.analyses.evidence import Figure, source_name, source_status
from relplan.values import clock_span, clock_spans, num, pct


def verdict_line(a: Assessment) -> str:
    """`Verdict: X, from <basis>; evidence: <what, over which window>.` — every verdict line
    names its evidence and window."""
    word = a.verdict.capitalize() + (" (suspected)" if a.suspected else "")
    line = f"Verdict: {word}, from {a.basis}; evidence: {a.evidence}."
    if a.missing_input:
        line += f" It needs {a.missing_input} to settle it."
    return line


def figure_text(f: Figure, t0: float | None = None) -> str:
    """A figure's value for people; a window (seconds from t0) as wall-clock times when `t0`
    is given."""
    v = f.value
    if f.status == "not available":
        return "not available"
    if v is None:  # a finding without a number (not recovered): its note says it
        return f.note or "none"
    if f.unit == "share":
        text = pct(v, 1)
        if f.low is not None and f.high is not None:
            text += f" ({pct(f.low, 1)}–{pct(f.high, 1)})"
        return text
    if f.unit == "x_capacity":
        return f"{v:.2f} × Ĉ"
    if f.unit == "s":
        if f.status == "estimated" and f.low is not None:
            # a histogram percentile: three digits, inside its bucket's bounds
            top = "+Inf" if f.high is None else f"{f.high:g}"
            return f"{v:.3g} s (bucket {f.low:g}–{top} s)"
        return f"{v:g} s"
    if f.unit == "per_s":
        if f.low is not None and f.high is not None:
            return f"{v:.3g}/s ({f.low:.3g}–{f.high:.3g}/s)"
        return f"{v:.3g}/s"
    if f.unit == "window":
        if f.low is None or f.high is None:
            return f"{v:g} s"
        if t0 is None:
            return f"{f.low:g} s to {f.high:g} s after t0"
        return f"{clock_span(t0 + f.low, t0 + f.high)} ({f.high - f.low:g} s)"
    return f"{v:,.0f}"


def figure_line(f: Figure, t0: float | None = None) -> str:
    where = ", ".join(f.inputs) if f.inputs else ""
    tail = f" [{f.status}{': ' + where if where else ''}]"
    if f.status == "not available" and f.needs:
        tail = f" [not available: needs {f.needs}]"
    elif f.status == "estimated" and f.needs:
        tail += f" ({f.needs} would settle it)"
    how = _how(f)
    return f"  {f.label}: {figure_text(f, t0)}{tail}" + (f"; {how}" if how else "")


def _how(f: Figure) -> str | None:
    """An estimate's method and uncertainty, as its note states them (the bucket bounds are
    in the value's text already)."""
    if f.status != "estimated" or not f.note:
        return None
    note = f.note
    if note.startswith("bucket "):
        note = note.partition("; ")[2]
    return note or None


def render_verdict(a: Assessment, t0: float | None = None) -> str:
    lines = [verdict_line(a)]
    lines += [f"  because {r}" for r in a.reasons]
    if a.window is not None:
        lines.append(
            f"Window: {a.window.note} (sources within {a.window.tolerance_s:g} s are adjacent)."
        )
    if a.drain is not None or a.recovered_after_s is not None:
        lines.append("Recovery, two ways:")
        lines += [f"  {x}" for x in recovery_lines(a)]
    lines.append("Evidence:")
    lines += [figure_line(f, t0) for f in a.figures if f.status != "not available"]
    for d in a.disagreements:
        lines.append(f"Two sources for {d.figure} (the verdict uses {d.used}: {d.why}):")
        for v in d.values:
            lines.append(
                f"  {v.source}: {num(v.value, 1)} over {span_text(v.start_s, v.end_s)} ({v.samples:,} samples)"
            )
    gaps = [f for f in a.figures if f.status == "not available"]
    if gaps:
        lines.append("Not available:")
        lines += [
            f"  {f.label}: " + (f"needs {f.needs}" if f.needs else (f.note or "no value"))
            for f in gaps
        ]
    return "\n".join(lines)


def span_text(a: float | None, b: float | None) -> str:
    """A source's span in seconds after t0 (`no samples` without one)."""
    if a is None or b is None:
        return "no samples"
    return f"{a:g}..{b:g} s after t0"


def recovery_lines(a: Assessment) -> list[str]:
    """`recovered after` and `drained after`, each with its definition (docs/analyses.md,
    "Recovery, two ways")."""
    from relplan.analyses.drain import DEFINITION, RECOVERED_DEFINITION

    fig = next((f for f in a.figures if f.key == "recovered_after"), None)
    if a.recovered_after_s is not None:
        rec = f"recovered after {a.recovered_after_s:g} s ({a.recovered_source})"
    elif fig is not None and fig.status == "not available":
        rec = f"recovered after: not measured (needs {fig.needs})"
    else:  # the same words as the evidence list's figure
        rec = f"recovered after: {fig.note if fig is not None and fig.note else 'not recovered'}"
    dr = a.drain
    if dr is None:
        drained = "drained after: unknown (no overload phase)"
    elif dr.drained_after_s is None:
        drained = f"drained after: none ({dr.null_reason})"
    else:
        drained = (
            f"drained after {dr.drained_after_s:.0f} s (backlog from {dr.source}; pre-pulse"
            f" level {dr.pre_level:.1f}, peak {num(dr.peak)}"
            + (", only once the load stopped" if dr.after_load_ended else "")
            + ")"
        )
    rec_def = (
        "recovered after: seconds from the end of the overload (without one, from the start of"
        " the failure window) to the end of the failure window of finished requests over D"
        " (vLLM's e2e histogram, by finish time; no gateway durations to judge calls by)"
        if (a.recovered_source or "").startswith("finished requests")
        else RECOVERED_DEFINITION
    )
    return [
        rec,
        drained,
        f"definitions: {rec_def}; {DEFINITION if dr is None else dr.definition}",
    ]


def given_value(value: float | None, unit: str, source: str | None, digits: int = 0) -> str:
    """A run-context value with where it came from: `2.800 calls/s (given: run.json)`,
    `2.644 calls/s (estimated: ...)`; `unknown` when there is no value."""
    if value is None:
        return "unknown"
    how = source or "flag"
    status = source_status(how)
    label = how if status == "estimated" else f"given: {source_name(how)}"
    return f"{num(value, digits)} {unit} ({label})"


def phase_list(ctx: RunContext) -> str:
    """`base 00:00:00–00:02:00, pulse 00:02:00–00:03:47 (2025-11-30, UTC)`, or `none`."""
    if not ctx.phases:
        return "none"
    head, cells = clock_spans([(ctx.t0 + p.start_s, ctx.t0 + p.end_s) for p in ctx.phases])
    listed = ", ".join(f"{p.name} {c}" for p, c in zip(ctx.phases, cells, strict=True))
    return f"{listed} ({head})" if head else listed
