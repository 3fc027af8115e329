"""The verdict at the top of the report: the delivery analysis's recovery verdict, worded for
someone who was not there, with the figures behind it taken from the analyses (the recovery's
own "because", and for each phase after the overload its amplification and on-time figures).
"""

from __future__ import annotations

from relplan.analyses.amplification import Amplification, AmplificationWindow
from relplan.analyses.assessment import Assessment
from relplan.analyses.context import RunContext
from relplan.analyses.counters import Counters
from relplan.analyses.delivery import Delivery, DeliveryWindow, Verdict
from relplan.analyses.result import AnalyzeResult
from relplan.analyses.wasted_prefill import WastedPrefill
from relplan.report.data import KeyFigure, VerdictBlock
from relplan.report.wording import clock_span_s, fixed, phase_words, sentence, times
from relplan.text.verdict import figure_text, recovery_lines, span_text
from relplan.values import pct

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


def _after_phases(ctx: RunContext, overload_end_s: float) -> list[str]:
    return [p.name for p in ctx.phases if p.start_s >= overload_end_s - 1e-9]


def verdict_block(res: AnalyzeResult) -> VerdictBlock:
    """The verdict at the top: the assessment (relplan.analyses.assessment) when analyze made
    one and the gateway log gave no recovery verdict, worded with its evidence ladder; else the
    delivery analysis's recovery verdict with its figures."""
    rec = res.delivery.recovery if res.delivery is not None else None
    decisive = rec is not None and rec.verdict != "insufficient data"
    if res.verdict is not None and not decisive:
        return _assessment_block(res.verdict, res.context.t0)
    block = _recovery_block(res)
    a = res.verdict
    if a is None:
        return block
    if a.verdict != block.verdict or a.suspected:
        # the assessment corrected it, or holds it a suspicion (late to the end with
        # executions within Ĉ: metastable, suspected)
        head = HEADLINES_FROM_ANY[a.verdict]
        block.verdict = a.verdict
        block.headline = "Suspected " + head[0].lower() + head[1:] if a.suspected else head
    extra = [r for r in a.reasons if r not in (rec.because if rec else "")]
    block.reasons = [sentence(r) for r in extra] + block.reasons + _evidence_reasons(a)
    block.figures += _recovery_figures(a)[1:]  # recovered after is the block's own figure
    return block


def _evidence_reasons(a: Assessment) -> list[str]:
    """The evidence and window the verdict rests on, and the two recovery figures with their
    definitions (docs/report.md, "The verdict")."""
    out = [sentence(f"Evidence: {a.evidence}")]
    if a.window is not None:
        out.append(
            sentence(
                f"Window: {a.window.note} (sources at most {a.window.tolerance_s:g} s apart are"
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
                f"{v.source} {fixed(v.value)} ({v.samples:,} samples, {span_text(v.start_s, v.end_s)})"
                for v in d.values
            )
            + f"; the verdict uses {d.used} ({d.why})"
        )
        for d in a.disagreements
    ]
    return out


def _recovery_figures(a: Assessment) -> list[KeyFigure]:
    if a.drain is None and a.recovered_after_s is None:
        return []
    dr = a.drain
    fig = next((f for f in a.figures if f.key == "recovered_after"), None)
    return [
        KeyFigure(
            label="recovered after (first planned-arrival bin with >= 90 % on time)",
            value=a.recovered_after_s,
            # the evidence list's own words: "not recovered" only when the verdict says so
            text=f"{a.recovered_after_s:g} s"
            if a.recovered_after_s is not None
            else recovery_lines(a)[0].removeprefix("recovered after: ")
            if fig is not None
            else "not recovered",
        ),
        KeyFigure(
            label="drained after (backlog back to its pre-pulse level)",
            value=None if dr is None else dr.drained_after_s,
            text="unknown"
            if dr is None
            else (
                f"not drained ({dr.null_reason})"
                if dr.drained_after_s is None
                else f"{dr.drained_after_s:.0f} s"
                + (" (only once the load stopped)" if dr.after_load_ended else "")
            ),
        ),
    ]


def _assessment_block(a: Assessment, t0: float) -> VerdictBlock:
    head = HEADLINES_FROM_ANY[a.verdict]
    if a.suspected:
        head = "Suspected " + head[0].lower() + head[1:]
    figures = [
        KeyFigure(
            label=f"{f.label} ({f.status}{': ' + ', '.join(f.inputs) if f.inputs else ''})",
            value=f.value,
            text=figure_text(f, t0),
        )
        for f in a.figures
        if f.status != "not available"
    ]
    reasons = [sentence(r) for r in a.reasons] + _evidence_reasons(a)
    reasons += [
        sentence(f"{f.label} is not available: it needs {f.needs}")
        for f in a.figures
        if f.status == "not available" and f.needs
    ][:4]
    return VerdictBlock(verdict=a.verdict, headline=head, reasons=reasons, figures=figures)


def _recovery_block(res: AnalyzeResult) -> VerdictBlock:
    ctx = res.context
    dl = res.get(Delivery)
    amplification = res.get(Amplification)
    wasted = res.get(WastedPrefill)
    counters = res.get(Counters)
    rec = dl.recovery if dl else None
    ov = ctx.overload_phase or "overload"
    figures: list[KeyFigure] = []
    reasons: list[str] = []
    if rec is None:
        why = (dl.recovery_null_reason if dl else None) or _skip_reason(res, "delivery")
        return VerdictBlock(
            verdict="insufficient data",
            headline=HEADLINES["insufficient data"].format(ov=ov),
            reasons=[sentence(why)],
            figures=[],
        )
    verdict: Verdict = rec.verdict
    rec_text = f"{rec.recovery_s:g} s" if rec.recovery_s is not None else ""
    headline = HEADLINES[verdict].format(ov=ov, rec=rec_text)
    reasons.append(sentence(rec.because))
    figures.append(
        KeyFigure(
            label=f"recovery after the {ov}",
            value=rec.recovery_s,
            text=f"{rec.recovery_s:g} s" if rec.recovery_s is not None else "none",
        )
    )
    figures.append(
        KeyFigure(
            label=f"calls arriving after the {ov} (× Ĉ)",
            value=rec.calls_x_capacity_after,
            text=times(rec.calls_x_capacity_after),
        )
    )
    figures.append(
        KeyFigure(
            label=f"executions accepted after the {ov} (× Ĉ)",
            value=rec.accepted_x_capacity_after,
            text=times(rec.accepted_x_capacity_after),
        )
    )
    figures.append(
        KeyFigure(
            label=f"on-time share of calls after the {ov}",
            value=rec.on_time_share_after,
            text=pct(rec.on_time_share_after, 0),
        )
    )
    after = _after_phases(ctx, rec.overload_end_s)
    amp_rows = {w.window: w for w in amplification.windows} if amplification else {}
    dl_rows = {w.window: w for w in dl.windows} if dl else {}
    detected = ctx.phases_source == "detected"
    for name in after[:3]:
        reasons.append(_phasesentence(ctx, name, amp_rows.get(name), dl_rows.get(name)))
    if (
        len(after) == 1
        and after[0] in amp_rows
        and not (
            amp_rows[after[0]].completed_x_capacity is None
            and amp_rows[after[0]].completed_for_waiting_x_capacity is None
        )
    ):
        w = amp_rows[after[0]]
        during = phase_words(after[0], detected)
        done = w.completed_x_capacity
        figures.append(
            KeyFigure(
                label=f"executions completed during {during} (× Ĉ)"
                if done is not None
                else f"executions completed for a waiting client during {during} (× Ĉ)",
                value=done if done is not None else w.completed_for_waiting_x_capacity,
                text=times(done if done is not None else w.completed_for_waiting_x_capacity),
            )
        )
        figures.append(
            KeyFigure(
                label=f"executions created by retries during {during}",
                value=w.retry_share,
                text=pct(w.retry_share, 0),
            )
        )
    if wasted:
        run = next(w for w in wasted.windows if w.window == "run" and w.replica is None)
        reasons.append(sentence(wasted.finding))
        figures.append(
            KeyFigure(
                label="of computed prefill went to aborted executions",
                value=run.aborted_share,
                text=pct(run.aborted_share, 0),
            )
        )
    if counters:
        reasons.append(sentence(counters.finding))
    return VerdictBlock(verdict=verdict, headline=headline, reasons=reasons, figures=figures)


def _phasesentence(
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


def _skip_reason(res: AnalyzeResult, analysis: str) -> str:
    return next((s.reason for s in res.skipped if s.analysis == analysis), "its input is missing")
