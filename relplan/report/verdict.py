"""The verdict at the top of the report: the delivery analysis's recovery verdict, worded for
someone who was not there, with the figures behind it taken from the analyses (the recovery's
own "because", and for each phase after the overload its amplification and on-time figures).
"""

from __future__ import annotations

from relplan.analyses.amplification import Amplification
from relplan.analyses.assessment import Assessment
from relplan.analyses.context import RunContext
from relplan.analyses.counters import Counters
from relplan.analyses.delivery import Delivery, Verdict
from relplan.analyses.result import AnalyzeResult
from relplan.analyses.wasted_prefill import WastedPrefill
from relplan.report.data import KeyFigure, VerdictBlock
from relplan.text.report import phase_words, sentence, times
from relplan.text.verdict import (
    LABELS,
    assessment_headline,
    assessment_reasons,
    drained_after_text,
    evidence_reasons,
    figure_label,
    figure_text,
    phase_sentence,
    recovered_after_text,
    recovery_headline,
    seconds_text,
)
from relplan.values import pct


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
        block.verdict = a.verdict
        block.headline = assessment_headline(a)
    extra = [r for r in a.reasons if r not in (rec.because if rec else "")]
    block.reasons = [sentence(r) for r in extra] + block.reasons + evidence_reasons(a)
    block.figures += _recovery_figures(a)[1:]  # recovered after is the block's own figure
    return block


def _recovery_figures(a: Assessment) -> list[KeyFigure]:
    if a.drain is None and a.recovered_after_s is None:
        return []
    dr = a.drain
    return [
        KeyFigure(
            label=LABELS["recovered_after"],
            value=a.recovered_after_s,
            text=recovered_after_text(a),
        ),
        KeyFigure(
            label=LABELS["drained_after"],
            value=None if dr is None else dr.drained_after_s,
            text=drained_after_text(a),
        ),
    ]


def _assessment_block(a: Assessment, t0: float) -> VerdictBlock:
    figures = [
        KeyFigure(label=figure_label(f), value=f.value, text=figure_text(f, t0))
        for f in a.figures
        if f.status != "not available"
    ]
    return VerdictBlock(
        verdict=a.verdict,
        headline=assessment_headline(a),
        reasons=assessment_reasons(a),
        figures=figures,
    )


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
            headline=recovery_headline("insufficient data", ov, None),
            reasons=[sentence(why)],
            figures=[],
        )
    verdict: Verdict = rec.verdict
    headline = recovery_headline(verdict, ov, rec.recovery_s)
    reasons.append(sentence(rec.because))
    figures.append(
        KeyFigure(
            label=LABELS["recovery"].format(ov=ov),
            value=rec.recovery_s,
            text=seconds_text(rec.recovery_s),
        )
    )
    figures.append(
        KeyFigure(
            label=LABELS["calls_after"].format(ov=ov),
            value=rec.calls_x_capacity_after,
            text=times(rec.calls_x_capacity_after),
        )
    )
    figures.append(
        KeyFigure(
            label=LABELS["accepted_after"].format(ov=ov),
            value=rec.accepted_x_capacity_after,
            text=times(rec.accepted_x_capacity_after),
        )
    )
    figures.append(
        KeyFigure(
            label=LABELS["on_time_after"].format(ov=ov),
            value=rec.on_time_share_after,
            text=pct(rec.on_time_share_after, 0),
        )
    )
    after = _after_phases(ctx, rec.overload_end_s)
    amp_rows = {w.window: w for w in amplification.windows} if amplification else {}
    dl_rows = {w.window: w for w in dl.windows} if dl else {}
    detected = ctx.phases_source == "detected"
    for name in after[:3]:
        reasons.append(phase_sentence(ctx, name, amp_rows.get(name), dl_rows.get(name)))
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
                label=LABELS["completed" if done is not None else "completed_for_waiting"].format(
                    during=during
                ),
                value=done if done is not None else w.completed_for_waiting_x_capacity,
                text=times(done if done is not None else w.completed_for_waiting_x_capacity),
            )
        )
        figures.append(
            KeyFigure(
                label=LABELS["retries"].format(during=during),
                value=w.retry_share,
                text=pct(w.retry_share, 0),
            )
        )
    if wasted:
        run = next(w for w in wasted.windows if w.window == "run" and w.replica is None)
        reasons.append(sentence(wasted.finding))
        figures.append(
            KeyFigure(
                label=LABELS["aborted_prefill"],
                value=run.aborted_share,
                text=pct(run.aborted_share, 0),
            )
        )
    if counters:
        reasons.append(sentence(counters.finding))
    return VerdictBlock(verdict=verdict, headline=headline, reasons=reasons, figures=figures)


def _skip_reason(res: AnalyzeResult, analysis: str) -> str:
    return next((s.reason for s in res.skipped if s.analysis == analysis), "its input is missing")
