"""The captions and table cells of the report's `amplification`, `delivery`, `counters`,
`littles_law`, `retry_timing`, `wasted_prefill` and `what_would_have_helped` sections
(relplan/report/sections/ arranges them into the page). The last imports only
relplan.whatif.model: the report never imports the simulator, which whatif's controls do."""

from __future__ import annotations

from relplan.analyses.amplification import Amplification
from relplan.analyses.counters import Counters, CounterWindow
from relplan.analyses.delivery import Delivery
from relplan.analyses.littles_law import LittleWindow
from relplan.analyses.retry_timing import RetryTiming
from relplan.analyses.wasted_prefill import WastedPrefill
from relplan.text.report import ALL_REPLICAS, at_s, cell_number, coincide_caption, count_times
from relplan.values import fixed, num, pct, short
from relplan.whatif.model import ControlOutcome, Spread, WhatIf


def delivery_recovery_text(dl: Delivery) -> str:
    """The recovery in words: `42 s after the pulse ended`, the verdict without a time, or why
    there is no recovery verdict."""
    rec = dl.recovery
    if rec is None:
        return dl.recovery_null_reason or ""
    if rec.recovery_s is not None:
        return f"{num(rec.recovery_s)} s after the {rec.overload_phase} ended"
    return rec.verdict


def delivery_report_rows(dl: Delivery, cells: list[str]) -> list[list[str]]:
    """One row per window (`cells` the span column's)."""
    return [
        [
            w.window,
            cell,
            num(w.calls),
            pct(w.delivered_share),
            pct(w.on_time_share),
            num(w.window_open_at_end),
            cell_number(w.delivery_median_s),
            cell_number(w.delivery_p99_s),
        ]
        for w, cell in zip(dl.windows, cells, strict=True)
    ]


def delivery_caption(t0: float, threshold: float, recovery_s: float | None, text: str) -> str:
    """The on-time chart's caption: the threshold line, and the recovery line when there is one."""
    caption = f"The green dashed line is the recovery threshold, {pct(threshold, 0)} on time."
    if recovery_s is not None:
        caption += f" The solid green line marks the recovery, at {at_s(t0, recovery_s)}"
        caption += f" ({text})."
    return caption


def counters_report_rows(
    shown: list[CounterWindow], *, trace: bool, steps: bool
) -> list[list[str]]:
    """One row per window (per replica too); the engine trace's columns when it is there."""
    return [
        [
            w.window,
            w.replica or ALL_REPLICAS,
            num(w.prompt_rise),
            num(w.query_rise),
            pct(w.shortfall),
            *([pct(w.truth_shortfall)] if trace else []),
            *([num(w.trace_computed_tokens), pct(w.counter_share_of_computed)] if steps else []),
            num(w.resets),
        ]
        for w in shown
    ]


def counters_caption(c: Counters, *, points: bool, dashed: list[str]) -> str:
    """The rises chart's caption: the rolling window, the alarm bands, the dashed lines."""
    return " ".join(
        x
        for x in (
            f"Each point is the rise over the {short(c.rolling_window_s)} s before it."
            if points
            else "",
            "The red bands are the alarm intervals; the black dashed line is the"
            f" {pct(c.threshold, 0)} threshold."
            if c.alarms
            else "",
            coincide_caption(dashed),
        )
        if x
    )


def retry_timing_report_rows(rt: RetryTiming) -> list[list[str]]:
    """One row per window: retries after an abort, never scheduled, gap and slack spreads."""
    return [
        [
            w.window,
            num(w.retries_after_abort),
            num(w.never_scheduled),
            f"{cell_number(w.gap_p10_s)} / {cell_number(w.gap_median_s)} / {cell_number(w.gap_p90_s)}",
            f"{cell_number(w.slack_p10_s)} / {cell_number(w.slack_median_s)} / {cell_number(w.slack_p90_s)}",
            "–" if w.slack_negative is None else num(w.slack_negative),
        ]
        for w in rt.windows
    ]


REPLICA_CAPTION = (
    "The lower chart splits the load by replica: {what} (solid) and {done} (dashed) per"
    " replica, in the same unit."
)


def amplification_report_columns(span_head: str, *, capacity: bool) -> list[str]:
    """The windows table's header: rates in × Ĉ when capacity is known."""
    unit = " (× Ĉ)" if capacity else ""
    return [
        "window",
        span_head,
        f"calls{unit}",
        f"accepted{unit}",
        f"completed{unit}",
        f"for a waiting client{unit}",
        "retry share",
        "executions per call",
    ]


def amplification_report_rows(amp: Amplification, cells: list[str]) -> list[list[str]]:
    """One row per window (`cells` the span column's), then the whole run per engine replica."""
    rows = [
        [
            w.window,
            cell,
            count_times(w.calls, w.calls_x_capacity),
            count_times(w.executions_accepted, w.accepted_x_capacity),
            count_times(w.executions_completed, w.completed_x_capacity),
            count_times(w.completed_for_waiting, w.completed_for_waiting_x_capacity),
            pct(w.retry_share),
            num(w.executions_per_call, 2),
        ]
        for w, cell in zip(amp.windows, cells, strict=True)
    ]
    return rows + _replica_rows(amp, cells[0] if cells else "")


def _replica_rows(amp: Amplification, span: str) -> list[list[str]]:
    """The whole run on each engine replica (the engine trace's executions)."""
    return [
        [
            f"run on {r.replica or 'unnamed'}",
            span,
            "–",
            count_times(r.executions_accepted, r.accepted_x_capacity),
            count_times(r.executions_completed, r.completed_x_capacity),
            count_times(r.completed_for_waiting, None),
            "–",
            "–",
        ]
        for r in amp.by_replica
        if r.window == "run"
    ]


def amplification_caption(
    amp: Amplification, *, capacity_line: bool, replicas: bool, dashed: list[str]
) -> str:
    """The load charts' caption: the capacity line, the per-replica chart, the dashed lines."""
    return " ".join(
        c
        for c in (
            "The black dashed line is capacity Ĉ (1×)." if capacity_line else "",
            REPLICA_CAPTION.format(
                what="executions accepted"
                if amp.replica_series_source == "engine trace"
                else "attempts sent",
                done="completed" if amp.replica_series_source == "engine trace" else "delivered",
            )
            if replicas
            else "",
            coincide_caption(dashed),
        )
        if c
    )


def littles_law_report_rows(shown: list[LittleWindow], *, per_replica: bool) -> list[list[str]]:
    """One row per window (per replica too when the analysis split them)."""
    return [
        [
            w.window,
            *([w.replica or ALL_REPLICAS] if per_replica else []),
            w.source,
            cell_number(w.waiting_l, 2),
            cell_number(w.lambda_per_s, 3),
            cell_number(w.wq_s),
            cell_number(w.consistency, 2),
            cell_number(w.deadline_saturation, 2),
            cell_number(w.waiting_l_metrics, 2),
        ]
        for w in shown
    ]


def wasted_prefill_report_rows(wp: WastedPrefill) -> list[list[str]]:
    """One row per window (and the whole run per replica): computed tokens by fate."""
    return [
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


# --- the report's "what would have helped" section (relplan/report/sections/
# what_would_have_helped.py arranges it) ------------------------------------------------------


def _cell(s: Spread | None, share: bool = True) -> str:
    if s is None or s.median is None:
        return "-"
    f = pct if share else (lambda v: num(v, 0))
    return f(s.median) if s.low == s.high else f"{f(s.median)} ({f(s.low)}-{f(s.high)})"


def incident_report_row(w: WhatIf) -> list[str]:
    """The report table's first row: the incident as observed."""
    c = w.check
    inc = c.incident.window("overload+later")
    inc_share = None if inc is None else inc.delivered_share
    return [
        "as observed (the incident)",
        pct(inc_share),
        pct(None if inc is None else inc.on_time_share),
        num(c.incident.recovery_s),
        num(c.incident.drained_s),
        num(c.incident.executions_per_call, 2),
        c.incident.verdict,
    ]


def control_report_row(o: ControlOutcome) -> list[str]:
    """The report table's row for one control (its medians over the seeds, with their range)."""
    if not o.available:
        return [o.label, "-", "-", "-", "-", "-", f"not replayed: {o.reason}"]
    return [
        o.label,
        _cell(o.delivered_share),
        _cell(o.on_time_share),
        _cell(o.recovery_s, share=False),
        _cell(o.drained_s, share=False),
        "-"
        if o.executions_per_call is None or o.executions_per_call.median is None
        else fixed(o.executions_per_call.median, 2),
        o.verdict,
    ]


def _seeds(w: WhatIf) -> str:
    return f"{w.seeds} seed" + ("" if w.seeds == 1 else "s")


def whatif_report_finding(w: WhatIf) -> str:
    """The section's finding: whether the fit is trusted, the best control, how to get more."""
    c = w.check
    inc = c.incident.window("overload+later")
    inc_share = None if inc is None else inc.delivered_share
    seeds = _seeds(w)
    fit = (
        f"The as-observed replay reached the incident's verdict ({c.incident.verdict}); "
        f"fit error {pct(c.error)}."
        if c.trusted
        else f"The fit is not trusted, so the controls are not ranked: {c.reason}."
    )
    best = ""
    if w.ranked:
        top = next(o for o in w.controls if o.name == w.ranked[0])
        best = (
            f" Best: {top.label}, {_cell(top.delivered_share)} of overload-and-later calls "
            f"delivered against {pct(inc_share)} in the incident ({top.verdict})."
        )
    finding = (
        f"{fit}{best} The report replays {seeds} per control to stay quick; "
        "`relplan whatif --db FILE --seeds 3` gives the range over seeds and the settings to "
        "configure."
    )
    return finding


def whatif_report_caption(w: WhatIf) -> str:
    """The chart's caption."""
    return (
        "Delivered share of the calls planned from the start of the overload on, per control "
        f"(median over {_seeds(w)}); the dashed line is the incident's."
    )
