"""Arrange an `AnalyzeResult` into the report's `ReportData`.

No figure is computed here: every number comes from `relplan.analyses` (sections A-F, and
J, which `analyze()` gets from `relplan.alerts`'s Prometheus-semantics evaluator) or the
workspace's own bookkeeping (sources, row counts). What this
module does is choose, order, word and format:
- the verdict is the delivery analysis's recovery verdict, worded for someone who was not
  there, with the figures behind it taken from the analyses (the recovery's own "because",
  and for each phase after the overload its amplification and on-time figures);
- chart series are the analyses' per-bin series. The only arithmetic is a change of unit
  for the load chart: a bin's count divided by the bin's width (and by Ĉ when known) is
  drawn as a rate, so the chart and the tables' "× Ĉ" columns read alike;
- tables show each analysis's per-window rows (the whole run, then each phase).
"""

from __future__ import annotations

from datetime import datetime

from relplan.alerts.health import HealthResult
from relplan.analyses import AnalyzeResult
from relplan.analyses.amplification import Amplification, AmplificationWindow
from relplan.analyses.context import RunContext
from relplan.analyses.counters import Counters
from relplan.analyses.delivery import Delivery, DeliveryWindow
from relplan.analyses.littles_law import LittlesLaw
from relplan.analyses.retry_timing import RetryTiming
from relplan.analyses.wasted_prefill import FATES, WastedPrefill
from relplan.report import data as d
from relplan.values import num, pct
from relplan.workspace.facts import WorkspaceFacts

TITLES = {
    "load": "Load and retry amplification",
    "delivery": "Delivery and recovery",
    "prefill": "Where the prefill went",
    "counters": "Counters that miss it",
    "queue": "Waiting queue against Little's law",
    "retries": "Retry timing",
    "health": "Engine health signals",
    "missing": "What the data could not show",
}
QUESTIONS = {
    "load": "Was the engine offered more work than it could do, and who created that work?",
    "delivery": "Did calls get their answer in time, and when did that come back after the overload?",
    "prefill": "What did the GPU spend its prefill on: answers someone received, or work thrown away?",
    "counters": "Would vLLM's own counters have shown the wasted prefill on a dashboard?",
    "queue": "Is the waiting queue as long as Little's law says, and does it hold a whole "
    "deadline's worth of arrivals (so that everything in it times out)?",
    "retries": "How soon after an abort did the retry reach the GPU, and how much of its own "
    "deadline was left by then?",
    "health": "Which alerting signals would have fired on the metrics, on which replica, and when?",
    "missing": "Which figures are absent, and which input would supply them?",
}
# analyses.AnalyzeResult field -> report section
ANALYSIS_SECTION = {
    "amplification": "load",
    "delivery": "delivery",
    "wasted_prefill": "prefill",
    "counters": "counters",
    "littles_law": "queue",
    "retry_timing": "retries",
    "capacity": "capacity calibration",
    "health": "health",
}
HEADLINES = {
    "recovered": "Recovered: on-time delivery came back {rec} after the {ov} ended.",
    "metastable": "Metastable: the engine did not recover after the {ov} ended, although calls "
    "no longer arrived faster than it could serve them.",
    "draining": "Draining: not recovered by the end of the data, but accepted work stayed "
    "within capacity, so the backlog was shrinking.",
    "overloaded": "Overloaded: calls kept arriving faster than capacity after the {ov}.",
    "insufficient data": "Not enough data to judge recovery after the {ov}.",
}
ALL_REPLICAS = "all replicas"


# --- formatting -----------------------------------------------------------------------------


def _x(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}×"


def _s(v: float | None, digits: int = 1) -> str:
    return "–" if v is None else f"{v:,.{digits}f}"


def _count_x(count: int | None, x: float | None) -> str:
    if count is None:
        return "–"
    return f"{count:,} ({_x(x)})" if x is not None else f"{count:,}"


def _span(start_s: float, end_s: float) -> str:
    return f"{start_s:,.0f}–{end_s:,.0f} s"


def _sentence(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith(".") else text + "."


# --- sections -------------------------------------------------------------------------------


def _unavailable(name: str, reasons: list[str]) -> dict[str, object]:
    return {
        "title": TITLES[name],
        "question": QUESTIONS[name],
        "available": False,
        "missing": reasons or ["the input this analysis needs"],
    }


def _load(amp: Amplification, ctx: RunContext, end_s: float) -> d.LoadSection:
    cap = ctx.capacity
    bins = []
    for b in amp.series:
        b_end = min(b.start_s + amp.series_bin_s, end_s)
        width = b_end - b.start_s
        if width <= 0:
            continue
        scale = width * (cap if cap else 1.0)

        def rate(count: int | None, scale: float = scale) -> float | None:
            return None if count is None else count / scale

        bins.append(
            d.LoadBin(
                start_s=b.start_s,
                end_s=b_end,
                calls=rate(b.calls),
                accepted=rate(b.executions_accepted),
                completed=rate(b.executions_completed),
                completed_waiting=rate(b.completed_for_waiting),
            )
        )
    rows = [
        [
            w.window,
            _span(w.start_s, w.end_s),
            _count_x(w.calls, w.calls_x_capacity),
            _count_x(w.executions_accepted, w.accepted_x_capacity),
            _count_x(w.executions_completed, w.completed_x_capacity),
            _count_x(w.completed_for_waiting, w.completed_for_waiting_x_capacity),
            pct(w.retry_share),
            num(w.executions_per_call, 2),
        ]
        for w in amp.windows
    ]
    unit = " (× Ĉ)" if cap else ""
    return d.LoadSection(
        title=TITLES["load"],
        question=QUESTIONS["load"],
        finding=amp.finding,
        rate_unit="x capacity" if cap else "per second",
        capacity_calls_per_s=cap,
        bins=bins,
        table=d.Table(
            columns=[
                "window",
                "span",
                f"calls{unit}",
                f"accepted{unit}",
                f"completed{unit}",
                f"for a waiting client{unit}",
                "retry share",
                "executions per call",
            ],
            rows=rows,
        ),
    )


def _delivery(dl: Delivery, end_s: float) -> d.DeliverySection:
    rec = dl.recovery
    recovery_s = None
    text = dl.recovery_null_reason or ""
    if rec is not None:
        if rec.recovery_s is not None:
            recovery_s = rec.overload_end_s + rec.recovery_s
            text = f"{rec.recovery_s:g} s after the {rec.overload_phase}"
        else:
            text = rec.verdict
    rows = [
        [
            w.window,
            _span(w.start_s, w.end_s),
            f"{w.calls:,}",
            pct(w.delivered_share),
            pct(w.on_time_share),
            f"{w.window_open_at_end:,}",
            _s(w.delivery_median_s),
            _s(w.delivery_p99_s),
        ]
        for w in dl.windows
    ]
    return d.DeliverySection(
        title=TITLES["delivery"],
        question=QUESTIONS["delivery"],
        finding=dl.finding,
        threshold=rec.threshold if rec else 0.9,
        min_calls=rec.min_calls if rec else 5,
        overload_end_s=rec.overload_end_s if rec else None,
        recovery_s=recovery_s,
        recovery_text=text,
        bins=[
            d.DeliveryBin(
                start_s=b.start_s,
                end_s=min(b.start_s + dl.series_bin_s, end_s),
                calls=b.calls,
                on_time_share=b.on_time_share,
            )
            for b in dl.series
        ],
        table=d.Table(
            columns=[
                "window (planned arrival)",
                "span",
                "calls",
                "delivered",
                "on time",
                "window open at end",
                "p50 to delivery (s)",
                "p99 (s)",
            ],
            rows=rows,
        ),
    )


def _prefill(wp: WastedPrefill) -> d.PrefillSection:
    run = next(w for w in wp.windows if w.window == "run" and w.replica is None)
    fates = [
        d.FateTokens(fate=f, tokens=run.tokens_by_fate[f], share=run.share_by_fate.get(f))
        for f in FATES
        if run.tokens_by_fate.get(f)
    ]
    rows = [
        [
            w.window,
            w.replica or ALL_REPLICAS,
            num(w.computed_tokens),
            pct(w.share_by_fate.get("delivered")),
            pct(w.share_by_fate.get("finished_for_nobody")),
            pct(w.aborted_share),
            pct(w.before_first_output_share),
            pct(w.inflight_share_of_aborted),
            num(w.recomputed_tokens),
        ]
        for w in wp.windows
        if w.replica is None or w.window == "run"
    ]
    return d.PrefillSection(
        title=TITLES["prefill"],
        question=QUESTIONS["prefill"],
        finding=wp.finding,
        fates=fates,
        total_tokens=run.computed_tokens,
        in_flight_tokens=run.inflight_prompt_tokens,
        in_flight_share=run.inflight_share_of_aborted,
        before_first_token_tokens=run.before_first_output_tokens,
        before_first_token_share=run.before_first_output_share,
        recomputed_tokens=run.recomputed_tokens,
        table=d.Table(
            columns=[
                "window",
                "replica",
                "computed prompt tokens",
                "delivered",
                "finished for nobody",
                "aborted",
                "aborted before first output",
                "in flight at the abort (of aborted)",
                "recomputed tokens",
            ],
            rows=rows,
        ),
    )


def _counters(c: Counters) -> d.CountersSection:
    summed = [p for p in c.series if p.replica is None]
    points = summed or c.series
    rows = [
        [
            w.window,
            w.replica or ALL_REPLICAS,
            num(w.prompt_rise),
            num(w.query_rise),
            pct(w.shortfall),
            pct(w.truth_shortfall),
            f"{w.resets:,}",
        ]
        for w in c.windows
        if w.replica is None or w.window == "run"
    ]
    return d.CountersSection(
        title=TITLES["counters"],
        question=QUESTIONS["counters"],
        finding=c.finding,
        window_s=c.rolling_window_s,
        threshold=c.threshold,
        points=[
            d.CounterPoint(
                t_s=p.t_s,
                replica=p.replica or ALL_REPLICAS,
                prompt_rise=p.prompt_rise,
                query_rise=p.query_rise,
                shortfall=p.shortfall,
            )
            for p in points
        ],
        alarms=[
            d.Interval(
                replica=a.replica or ALL_REPLICAS,
                name=f"shortfall > {pct(c.threshold, 0)}",
                start_s=a.start_s,
                end_s=a.end_s,
            )
            for a in c.alarms
        ],
        table=d.Table(
            columns=[
                "window",
                "replica",
                f"rise of {c.prompt_metric}",
                f"rise of {c.query_metric}",
                "shortfall",
                "engine trace shortfall",
                "resets",
            ],
            rows=rows,
        ),
    )


def _queue(ll: LittlesLaw, end_s: float) -> d.QueueSection:
    points: list[d.QueuePoint] = []
    for b in ll.series:
        b_end = min(b.start_s + ll.series_bin_s, end_s)
        series: d.QueueSeries
        for series, value in (
            ("waiting", b.waiting_l),
            ("waiting_metrics", b.waiting_l_metrics),
            ("deadline", b.lambda_x_deadline),
        ):
            if value is not None:
                points.append(
                    d.QueuePoint(start_s=b.start_s, end_s=b_end, series=series, value=value)
                )
    rows = [
        [
            w.window,
            w.source,
            _s(w.waiting_l, 2),
            _s(w.lambda_per_s, 3),
            _s(w.wq_s),
            _s(w.consistency, 2),
            _s(w.deadline_saturation, 2),
            _s(w.waiting_l_metrics, 2),
        ]
        for w in ll.windows
    ]
    return d.QueueSection(
        title=TITLES["queue"],
        question=QUESTIONS["queue"],
        finding=ll.finding,
        deadline_s=ll.deadline_s,
        source=ll.source,
        points=points,
        table=d.Table(
            columns=[
                "window",
                "source",
                "L waiting",
                "λ per s",
                "Wq (s)",
                "L / (λ·Wq)",
                "L / (λ·D)",
                "L from metrics",
            ],
            rows=rows,
        ),
    )


def _retries(rt: RetryTiming) -> d.RetrySection:
    stats: list[d.RetryStat] = []
    for w in rt.windows:
        if w.gap_n and None not in (w.gap_p10_s, w.gap_median_s, w.gap_p90_s):
            stats.append(
                d.RetryStat(
                    window=w.window,
                    measure="gap",
                    n=w.gap_n,
                    p10_s=w.gap_p10_s or 0.0,
                    median_s=w.gap_median_s or 0.0,
                    p90_s=w.gap_p90_s or 0.0,
                )
            )
        if w.slack_n and None not in (w.slack_p10_s, w.slack_median_s, w.slack_p90_s):
            stats.append(
                d.RetryStat(
                    window=w.window,
                    measure="slack",
                    n=w.slack_n,
                    p10_s=w.slack_p10_s or 0.0,
                    median_s=w.slack_median_s or 0.0,
                    p90_s=w.slack_p90_s or 0.0,
                )
            )
    rows = [
        [
            w.window,
            f"{w.retries_after_abort:,}",
            f"{w.never_scheduled:,}",
            f"{_s(w.gap_p10_s)} / {_s(w.gap_median_s)} / {_s(w.gap_p90_s)}",
            f"{_s(w.slack_p10_s)} / {_s(w.slack_median_s)} / {_s(w.slack_p90_s)}",
            "–" if w.slack_negative is None else f"{w.slack_negative:,}",
        ]
        for w in rt.windows
    ]
    return d.RetrySection(
        title=TITLES["retries"],
        question=QUESTIONS["retries"],
        finding=rt.finding,
        stats=stats,
        table=d.Table(
            columns=[
                "window (retry sent)",
                "retries after an abort",
                "never scheduled",
                "gap p10 / p50 / p90 (s)",
                "slack p10 / p50 / p90 (s)",
                "on the GPU after the client left",
            ],
            rows=rows,
        ),
    )


def _health(h: HealthResult, ctx: RunContext) -> tuple[d.HealthSection, list[d.MissingItem]]:
    """Firing intervals as a timeline (s from t0); unevaluated signals as missing inputs."""
    evaluated = [s for s in h.signals if s.evaluated]
    intervals = sorted(
        (
            d.Interval(
                replica=i.replica or ALL_REPLICAS,
                name=s.signal.replace("_", " "),
                start_s=ctx.s(i.start),
                end_s=ctx.s(i.end),
            )
            for s in evaluated
            for i in s.intervals
        ),
        key=lambda i: (i.replica, i.name, i.start_s),
    )
    rows = []
    for s in h.signals:
        if not s.evaluated:
            state = f"not evaluated: {s.skipped_reason}"
            fired = first = "–"
        elif s.intervals:
            reps = sorted({i.replica or ALL_REPLICAS for i in s.intervals})
            fired = f"{len(s.intervals)} on {', '.join(reps)}"
            first = f"{min(ctx.s(i.start) for i in s.intervals):,.0f}"
            state = "fired"
        else:
            state, fired, first = "quiet", "0", "–"
        rows.append([s.signal.replace("_", " "), s.alert, state, fired, first])
    missing = [
        d.MissingItem(
            section=f"health signal {s.signal.replace('_', ' ')}", reason=str(s.skipped_reason)
        )
        for s in h.signals
        if not s.evaluated
    ]
    quiet = [s.signal.replace("_", " ") for s in evaluated if not s.intervals]
    fired_names = [s.signal.replace("_", " ") for s in evaluated if s.intervals]
    if fired_names:
        finding = f"Fired: {', '.join(fired_names)}"
        finding += f"; quiet: {', '.join(quiet)}." if quiet else "."
    else:
        finding = f"No signal fired ({len(evaluated)} evaluated)."
    section = d.HealthSection(
        title=TITLES["health"],
        question=QUESTIONS["health"],
        finding=finding
        + f" Evaluated every {h.step_s:g} s as Prometheus would ({h.evaluations:,} evaluations).",
        signals=[s.signal.replace("_", " ") for s in evaluated],
        replicas=sorted(h.replicas),
        intervals=intervals,
        table=d.Table(
            columns=["signal", "alert", "state", "firing intervals", "first firing (s)"],
            rows=rows,
        ),
    )
    return section, missing


# --- verdict --------------------------------------------------------------------------------


def _after_phases(ctx: RunContext, overload_end_s: float) -> list[str]:
    return [p.name for p in ctx.phases if p.start_s >= overload_end_s - 1e-9]


def _verdict(res: AnalyzeResult) -> d.VerdictBlock:
    ctx = res.context
    dl = res.delivery
    rec = dl.recovery if dl else None
    ov = ctx.overload_phase or "overload"
    figures: list[d.KeyFigure] = []
    reasons: list[str] = []
    if rec is None:
        why = (dl.recovery_null_reason if dl else None) or _skip_reason(res, "delivery")
        return d.VerdictBlock(
            verdict="insufficient data",
            headline=HEADLINES["insufficient data"].format(ov=ov),
            reasons=[_sentence(why)],
            figures=[],
        )
    verdict: d.Verdict = rec.verdict
    rec_text = f"{rec.recovery_s:g} s" if rec.recovery_s is not None else ""
    headline = HEADLINES[verdict].format(ov=ov, rec=rec_text)
    reasons.append(_sentence(rec.because))
    figures.append(
        d.KeyFigure(
            label=f"recovery after the {ov}",
            value=rec.recovery_s,
            text=f"{rec.recovery_s:g} s" if rec.recovery_s is not None else "none",
        )
    )
    figures.append(
        d.KeyFigure(
            label=f"calls arriving after the {ov} (× Ĉ)",
            value=rec.calls_x_capacity_after,
            text=_x(rec.calls_x_capacity_after),
        )
    )
    figures.append(
        d.KeyFigure(
            label=f"executions accepted after the {ov} (× Ĉ)",
            value=rec.accepted_x_capacity_after,
            text=_x(rec.accepted_x_capacity_after),
        )
    )
    figures.append(
        d.KeyFigure(
            label=f"on-time share of calls after the {ov}",
            value=rec.on_time_share_after,
            text=pct(rec.on_time_share_after, 0),
        )
    )
    after = _after_phases(ctx, rec.overload_end_s)
    amp_rows = {w.window: w for w in res.amplification.windows} if res.amplification else {}
    dl_rows = {w.window: w for w in dl.windows} if dl else {}
    for name in after[:3]:
        reasons.append(_phase_sentence(name, amp_rows.get(name), dl_rows.get(name)))
    if len(after) == 1 and after[0] in amp_rows:
        w = amp_rows[after[0]]
        figures.append(
            d.KeyFigure(
                label=f"executions completed during the {after[0]} (× Ĉ)",
                value=w.completed_x_capacity,
                text=_x(w.completed_x_capacity),
            )
        )
        figures.append(
            d.KeyFigure(
                label=f"executions created by retries during the {after[0]}",
                value=w.retry_share,
                text=pct(w.retry_share, 0),
            )
        )
    if res.wasted_prefill:
        run = next(w for w in res.wasted_prefill.windows if w.window == "run" and w.replica is None)
        reasons.append(_sentence(res.wasted_prefill.finding))
        figures.append(
            d.KeyFigure(
                label="of computed prefill went to aborted executions",
                value=run.aborted_share,
                text=pct(run.aborted_share, 0),
            )
        )
    if res.counters:
        reasons.append(_sentence(res.counters.finding))
    return d.VerdictBlock(verdict=verdict, headline=headline, reasons=reasons, figures=figures)


def _phase_sentence(name: str, amp: AmplificationWindow | None, dl: DeliveryWindow | None) -> str:
    parts = []
    if amp is not None:
        parts.append(
            f"calls arrived at {_x(amp.calls_x_capacity)} capacity, executions were accepted at "
            f"{_x(amp.accepted_x_capacity)} and completed at {_x(amp.completed_x_capacity)} "
            f"({_x(amp.completed_for_waiting_x_capacity)} for a client still waiting)"
        )
        if amp.retry_share is not None:
            parts.append(f"retries created {pct(amp.retry_share, 0)} of executions")
    if dl is not None and dl.on_time_share is not None:
        parts.append(f"{pct(dl.on_time_share, 0)} of the calls planned then were answered on time")
    span = f" ({_span(amp.start_s, amp.end_s)})" if amp is not None else ""
    return _sentence(f"During the {name}{span}: " + "; ".join(parts))


def _skip_reason(res: AnalyzeResult, analysis: str) -> str:
    return next((s.reason for s in res.skipped if s.analysis == analysis), "its input is missing")


# --- the whole report -----------------------------------------------------------------------


def build_report_data(
    res: AnalyzeResult,
    facts: WorkspaceFacts,
    generated_at: datetime,
    relplan_version: str,
) -> d.ReportData:
    """The report's data model from the analyses' result. Pure: no I/O, no clock."""
    ctx = res.context
    end_s = ctx.s(ctx.window_end)

    def reasons(analysis: str) -> list[str]:
        return [s.reason for s in res.skipped if s.analysis == analysis]

    load = (
        _load(res.amplification, ctx, end_s)
        if res.amplification
        else d.LoadSection.model_validate(_unavailable("load", reasons("amplification")))
    )
    delivery = (
        _delivery(res.delivery, end_s)
        if res.delivery
        else d.DeliverySection.model_validate(_unavailable("delivery", reasons("delivery")))
    )
    prefill = (
        _prefill(res.wasted_prefill)
        if res.wasted_prefill
        else d.PrefillSection.model_validate(_unavailable("prefill", reasons("wasted_prefill")))
    )
    counters = (
        _counters(res.counters)
        if res.counters
        else d.CountersSection.model_validate(_unavailable("counters", reasons("counters")))
    )
    queue = (
        _queue(res.littles_law, end_s)
        if res.littles_law
        else d.QueueSection.model_validate(_unavailable("queue", reasons("littles_law")))
    )
    retries = (
        _retries(res.retry_timing)
        if res.retry_timing
        else d.RetrySection.model_validate(_unavailable("retries", reasons("retry_timing")))
    )
    missing_items = [
        d.MissingItem(section=_section_title(s.analysis), reason=s.reason) for s in res.skipped
    ]
    if res.health is not None:
        health_section, health_gaps = _health(res.health, ctx)
        missing_items += health_gaps
    else:  # analyze() skipped J; the reason is already among the missing items
        health_section = d.HealthSection.model_validate(_unavailable("health", reasons("health")))
    if ctx.capacity is None:
        missing_items.append(
            d.MissingItem(
                section="capacity Ĉ",
                reason="unknown: rates are shown per second and the verdict cannot compare "
                "load with capacity; give --capacity or a run.json with capacity_calls_per_s",
            )
        )
    if ctx.deadline_s is None:
        missing_items.append(
            d.MissingItem(
                section="client deadline D",
                reason="unknown: no on-time share, recovery or slack; give --deadline or a "
                "run.json with deadline_s",
            )
        )
    missing_items += [d.MissingItem(section="note on the inputs", reason=n) for n in ctx.notes]
    missing = d.MissingSection(
        title=TITLES["missing"],
        question=QUESTIONS["missing"],
        finding=(f"{len(missing_items)} item(s)." if missing_items else "Nothing is missing."),
        items=missing_items,
    )
    return d.ReportData(
        title=f"Incident report: {facts.run_name}",
        run_name=facts.run_name,
        t0=ctx.t0,
        end_s=end_s,
        capacity_calls_per_s=ctx.capacity,
        deadline_s=ctx.deadline_s,
        phases=[d.PhaseBand(name=p.name, start_s=p.start_s, end_s=p.end_s) for p in ctx.phases],
        verdict=_verdict(res),
        load=load,
        delivery=delivery,
        prefill=prefill,
        counters=counters,
        queue=queue,
        retries=retries,
        health=health_section,
        missing=missing,
        footer=d.Footer(
            sources=facts.sources,
            row_counts=facts.row_counts,
            relplan_version=relplan_version,
            generated_at=generated_at,
        ),
    )


def _section_title(analysis: str) -> str:
    section = ANALYSIS_SECTION.get(analysis, analysis)
    return TITLES.get(section, section)
