"""Text of the verdict and its evidence ladder (`relplan analyze`, the report's top), and of
the run context's values and phases in `relplan analyze`'s Run lines."""

from __future__ import annotations

from relplan.analyses.amplification import AmplificationWindow
from relplan.analyses.assessment import Assessment
from relplan.analyses.context import RunContext
from relplan.analyses.delivery import DeliveryWindow
from relplan.analyses.evidence import Figure, source_name, source_status
from relplan.text.report import cell_number, clock_span_s, phase_words, sentence, times
from relplan.values import clock_span, clock_spans, fixed, num, pct, short, sig


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
        return f"{fixed(v, 2)} × Ĉ"
    if f.unit == "s":
        if f.status == "estimated" and f.low is not None:
            # a histogram percentile: three digits, inside its bucket's bounds
            top = "+Inf" if f.high is None else f"{short(f.high)}"
            return f"{sig(v, 3)} s (bucket {short(f.low)}–{top} s)"
        return f"{short(v)} s"
    if f.unit == "per_s":
        if f.low is not None and f.high is not None:
            return f"{sig(v, 3)}/s ({sig(f.low, 3)}–{sig(f.high, 3)}/s)"
        return f"{sig(v, 3)}/s"
    if f.unit == "window":
        if f.low is None or f.high is None:
            return f"{short(v)} s"
        if t0 is None:
            return f"{short(f.low)} s to {short(f.high)} s after t0"
        return f"{clock_span(t0 + f.low, t0 + f.high)} ({short(f.high - f.low)} s)"
    return f"{num(v)}"


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
            f"Window: {a.window.note} (sources within {short(a.window.tolerance_s)} s are adjacent)."
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
                f"  {v.source}: {num(v.value, 1)} over {span_text(v.start_s, v.end_s)} ({num(v.samples)} samples)"
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
    return f"{short(a)}..{short(b)} s after t0"


def recovery_lines(a: Assessment) -> list[str]:
    """`recovered after` and `drained after`, each with its definition (docs/analyses.md,
    "Recovery, two ways")."""
    from relplan.analyses.drain import DEFINITION, RECOVERED_DEFINITION

    fig = next((f for f in a.figures if f.key == "recovered_after"), None)
    if a.recovered_after_s is not None:
        rec = f"recovered after {short(a.recovered_after_s)} s ({a.recovered_source})"
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
            f"drained after {fixed(dr.drained_after_s, 0)} s (backlog from {dr.source}; pre-pulse"
            f" level {fixed(dr.pre_level, 1)}, peak {num(dr.peak)}"
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


# --- the report's verdict block (relplan.report.verdict arranges it) ---------------------

HEADLINES = {
    "recovered": "Recovered: on-time delivery came back {rec} after the {ov} ended.",
    "metastable": "Metastable: the engine did not recover after the {ov} ended, although calls "
    "no longer arrived faster than it could serve them.",
    "draining": "Draining: not recovered by the end of the data, but accepted work stayed "
    "within capacity, so the backlog was shrinking.",
    "overloaded": "Overloaded: calls kept arriving faster than capacity after the {ov}.",
    "insufficient data": "Not enough data to judge recovery after the {ov}.",
}


HEADLINES_FROM_ANY = {
    "recovered": "Recovered: the queue emptied after the overload.",
    "metastable": "Metastable: the engine did not recover after the overload ended; work kept"
    " arriving while completions collapsed.",
    "draining": "Draining: not recovered by the end of the data, but arrivals stayed within"
    " capacity, so the backlog was shrinking.",
    "overloaded": "Overloaded: work kept arriving faster than capacity after the overload.",
    "healthy": "Healthy: no overload found in the data, and work was delivered.",
    "failing": "Failing: the data shows work that was not delivered.",
    "cannot tell": "Cannot tell: the data holds no evidence of delivery to judge by.",
}


def evidence_reasons(a: Assessment) -> list[str]:
    """The evidence and window the verdict rests on, and the two recovery figures with their
    definitions (docs/report.md, "The verdict")."""
    out = [sentence(f"Evidence: {a.evidence}")]
    if a.window is not None:
        out.append(
            sentence(
                f"Window: {a.window.note} (sources at most {short(a.window.tolerance_s)} s apart are"
                " adjacent)"
            )
        )
    if a.missing_input:
        out.append(sentence(f"What would settle it: {a.missing_input}"))
    if a.drain is not None or a.recovered_after_s is not None:
        out.append(sentence("Recovery, two ways: " + "; ".join(recovery_lines(a))))
    out += [
        sentence(
            f"Two sources for {d.figure}: "
            + ", ".join(
                f"{v.source} {cell_number(v.value)} ({num(v.samples)} samples, {span_text(v.start_s, v.end_s)})"
                for v in d.values
            )
            + f"; the verdict uses {d.used} ({d.why})"
        )
        for d in a.disagreements
    ]
    return out


def phase_sentence(
    ctx: RunContext, name: str, amp: AmplificationWindow | None, dl: DeliveryWindow | None
) -> str:
    parts = []
    if amp is not None:
        waiting = times(amp.completed_for_waiting_x_capacity)
        done = (
            f"completed at {times(amp.completed_x_capacity)} ({waiting} for a client still waiting)"
            if amp.completed_x_capacity is not None
            else f"completed for a client still waiting at {waiting}"
            if amp.completed_for_waiting_x_capacity is not None
            else "completions unknown from the engine log ("
            + amp.null_reasons.get("executions_completed", "not recorded")
            + ")"
        )
        parts.append(
            f"calls arrived at {times(amp.calls_x_capacity)} capacity, executions were accepted"
            f" at {times(amp.accepted_x_capacity)} and {done}"
        )
        if amp.retry_share is not None:
            parts.append(f"retries created {pct(amp.retry_share, 0)} of executions")
    if dl is not None and dl.on_time_share is not None:
        parts.append(f"{pct(dl.on_time_share, 0)} of the calls planned then were answered on time")
    when = f" ({clock_span_s(ctx.t0, amp.start_s, amp.end_s)})" if amp is not None else ""
    during = phase_words(name, ctx.phases_source == "detected")
    return sentence(f"During {during}{when}: " + "; ".join(parts))


# The report's key figures: their labels (`{ov}` the overload phase, `{during}` a phase in words).
LABELS = {
    "recovered_after": "recovered after (first planned-arrival bin with >= 90 % on time)",
    "drained_after": "drained after (backlog back to its pre-pulse level)",
    "recovery": "recovery after the {ov}",
    "calls_after": "calls arriving after the {ov} (× Ĉ)",
    "accepted_after": "executions accepted after the {ov} (× Ĉ)",
    "on_time_after": "on-time share of calls after the {ov}",
    "completed": "executions completed during {during} (× Ĉ)",
    "completed_for_waiting": "executions completed for a waiting client during {during} (× Ĉ)",
    "retries": "executions created by retries during {during}",
    "aborted_prefill": "of computed prefill went to aborted executions",
}


def assessment_headline(a: Assessment) -> str:
    """The report's headline for the assessment's verdict; `Suspected ...` when indirect."""
    head = HEADLINES_FROM_ANY[a.verdict]
    return "Suspected " + head[0].lower() + head[1:] if a.suspected else head


def recovery_headline(verdict: str, ov: str, recovery_s: float | None) -> str:
    """The report's headline for the delivery analysis's recovery verdict."""
    return HEADLINES[verdict].format(
        ov=ov, rec="" if recovery_s is None else seconds_text(recovery_s)
    )


def seconds_text(v: float | None) -> str:
    """`42 s`, or `none`."""
    return "none" if v is None else f"{short(v)} s"


def figure_label(f: Figure) -> str:
    """A key figure's label with its status and inputs: `Ĉ (given: run.json)`."""
    return f"{f.label} ({f.status}{': ' + ', '.join(f.inputs) if f.inputs else ''})"


def assessment_reasons(a: Assessment) -> list[str]:
    """The report's reasons under the assessment's headline: its reasons, its evidence, and up
    to four figures it lacks with the input each needs."""
    reasons = [sentence(r) for r in a.reasons] + evidence_reasons(a)
    reasons += [
        sentence(f"{f.label} is not available: it needs {f.needs}")
        for f in a.figures
        if f.status == "not available" and f.needs
    ][:4]
    return reasons


def recovered_after_text(a: Assessment) -> str:
    """The `recovered after` key figure: the evidence list's own words ("not recovered" only
    when the verdict says so)."""
    if a.recovered_after_s is not None:
        return seconds_text(a.recovered_after_s)
    fig = next((f for f in a.figures if f.key == "recovered_after"), None)
    if fig is not None:
        return recovery_lines(a)[0].removeprefix("recovered after: ")
    return "not recovered"


def drained_after_text(a: Assessment) -> str:
    """The `drained after` key figure."""
    dr = a.drain
    if dr is None:
        return "unknown"
    if dr.drained_after_s is None:
        return f"not drained ({dr.null_reason})"
    return f"{fixed(dr.drained_after_s, 0)} s" + (
        " (only once the load stopped)" if dr.after_load_ended else ""
    )
