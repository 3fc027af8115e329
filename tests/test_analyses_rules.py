"""The conventions and verdict rules of docs/analyses.md (Conventions, delivery), each on a run built for it."""

from __future__ import annotations

import pytest

from relplan.analyses import AnalyzeOptions, analyze, resolve_context
from relplan.errors import NoDataError, UsageError
from relplan.values import parse_phases
from tests.helpers.incident import (
    ATTEMPTS,
    EVENTS,
    METRICS,
    STEPS,
    T0,
    insert_attempts,
    insert_events,
    insert_manifest,
    insert_metrics,
    insert_steps,
)
from tests.helpers.synthetic_runs import memory_workspace, recovery_run, staged_ramp

# --- context: t0, T, phases, overload phase -------------------------------------------------


def test_t0_defaults_to_earliest_proxy_or_engine_record_not_metrics() -> None:
    """No run.json: t0 = earliest proxy/engine time (0 here), although metrics start at -500
    (scrapes often start long before); T = last proxy/engine time, 230.5 (c12's t_end)."""
    con = memory_workspace()
    insert_attempts(con, ATTEMPTS)
    insert_events(con, EVENTS)
    insert_metrics(con, [(-500, "vllm:num_requests_waiting", "r0", 0), *METRICS])
    ctx = resolve_context(con, AnalyzeOptions())
    assert ctx.t0 == T0
    assert ctx.t0_source == "earliest proxy/engine record"
    assert ctx.t_end == pytest.approx(T0 + 230.5)
    assert ctx.phases == []
    assert ctx.overload_phase is None


def test_flags_override_run_json_and_phases_flag_takes_relative_or_epoch_times() -> None:
    con = memory_workspace()
    insert_attempts(con, ATTEMPTS)
    insert_manifest(
        con,
        {
            "name": "m",
            "capacity_calls_per_s": 2.0,
            "deadline_s": 9,
            "t0": T0,
            "phases": [{"name": "pulse", "start": 0, "end": 10}],
        },
    )
    opts = AnalyzeOptions(
        capacity=3.0, phases=parse_phases(f"calm=0:50,storm={T0 + 50}:{T0 + 100}")
    )
    ctx = resolve_context(con, opts)
    assert (ctx.capacity, ctx.capacity_source) == (3.0, "flag")
    assert (ctx.deadline_s, ctx.deadline_source) == (9, "run.json")
    assert [(p.name, p.start_s, p.end_s) for p in ctx.phases] == [
        ("calm", 0, 50),
        ("storm", 50, 100),
    ]
    assert ctx.phases_source == "--phases"


def test_overload_phase_is_highest_arrival_rate_when_none_is_named() -> None:
    """Phases a [0, 60): c1 c2 = 2 calls (0.033/s); b [60, 120): 6 calls (0.1/s);
    c [120, 240): 4 calls (0.033/s) -> b."""
    con = memory_workspace()
    insert_attempts(con, ATTEMPTS)
    ctx = resolve_context(con, AnalyzeOptions(phases=parse_phases("a=0:60,b=60:120,c=120:240")))
    assert ctx.overload_phase == "b"
    assert "highest arrival rate" in (ctx.overload_rule or "")
    ctx = resolve_context(con, AnalyzeOptions(phases=parse_phases("a=0:60,pulse=60:120")))
    assert ctx.overload_phase == "pulse"


def test_event_on_a_phase_boundary_belongs_to_the_later_phase() -> None:
    """t0 = 0 (call z); calls planned at exactly 60 and 120 fall in [60, 120) and [120, 180)."""
    con = memory_workspace()
    insert_attempts(
        con,
        [
            ("z", 0, 0, 0, 1, "delivered", "w", False, None, None, 1),
            ("a", 0, 60, 60, 61, "delivered", "x", False, None, None, 1),
            ("b", 0, 120, 120, 121, "delivered", "y", False, None, None, 1),
        ],
    )
    r = analyze(
        con,
        AnalyzeOptions(phases=parse_phases("p1=0:60,p2=60:120,p3=120:180"), only=["amplification"]),
    )
    calls = {w.window: w.calls for w in r.amplification.windows}  # type: ignore[union-attr]
    assert calls == {"run": 3, "p1": 1, "p2": 1, "p3": 1}


def test_non_overlapping_clock_ranges_are_named() -> None:
    con = memory_workspace()
    insert_attempts(con, ATTEMPTS)
    insert_events(con, EVENTS, t0=T0 + 100_000)
    ctx = resolve_context(con, AnalyzeOptions())
    assert any(
        "proxy log" in n and "engine trace" in n and "do not overlap" in n for n in ctx.notes
    )


def test_empty_workspace_is_a_clear_error() -> None:
    with pytest.raises(NoDataError, match="holds no proxy log"):
        resolve_context(memory_workspace(), AnalyzeOptions())


@pytest.mark.parametrize(
    ("text", "msg"),
    [
        ("base", "expected NAME=START:END"),
        ("a=5:1", "must be after start"),
        ("a=0:1,a=1:2", "unique"),
    ],
)
def test_bad_phases_flag_names_the_flag(text: str, msg: str) -> None:
    with pytest.raises(UsageError, match=msg) as exc:
        parse_phases(text)
    assert str(exc.value).startswith("--phases: ")


# --- skipped analyses and missing inputs ----------------------------------------------------


def test_proxy_only_workspace_runs_what_it_can_and_names_the_missing_inputs() -> None:
    """Without an engine trace: accepted executions come from the proxy log (13 created),
    completions for nobody are unknown; C, F need the trace; D needs metrics."""
    con = memory_workspace()
    insert_attempts(con, ATTEMPTS)
    r = analyze(con, AnalyzeOptions(capacity=0.05))
    run = r.amplification.windows[0]  # type: ignore[union-attr]
    assert run.accepted_source == "proxy log"
    assert run.executions_accepted == 13
    assert run.executions_completed is None
    assert "invisible without an engine trace" in run.null_reasons["executions_completed"]
    assert run.completed_for_waiting == 8
    reasons = {s.analysis: s.reason for s in r.skipped}
    assert reasons["wasted_prefill"] == "wasted prefill needs an engine trace with step records"
    assert "proxy log and an engine trace" in reasons["retry_timing"]
    assert "vllm:prompt_tokens_total" in reasons["counters"]
    assert "littles_law" in reasons
    assert r.delivery is not None
    # no phases and no deadline given: both come from the data (issue 13): the overload is
    # detected, and the 5 attempts the client left (c2, c3, c4, c5, c7) all lasted 30 s
    assert r.context.phases_source == "detected"
    assert r.context.deadline_s == 30.0
    assert (r.context.deadline_source or "").startswith("from the data: 5 of 5 attempts")
    assert r.delivery.windows[0].on_time_share is not None


def test_engine_only_workspace_marks_finished_tokens_delivery_unknown() -> None:
    con = memory_workspace()
    insert_events(con, EVENTS)
    insert_steps(con, STEPS)
    r = analyze(con, AnalyzeOptions(only=["wasted_prefill", "delivery"]))
    run = r.wasted_prefill.windows[0]  # type: ignore[union-attr]
    assert run.tokens_by_fate["finished"] == 1120 + 250
    assert run.tokens_by_fate["delivered"] == 0
    assert "delivery unknown" in run.null_reasons["tokens_by_fate.delivered"]
    assert [s.analysis for s in r.skipped] == ["delivery"]


def test_littles_law_from_metrics_and_proxy_without_engine_trace() -> None:
    """L from the waiting gauge (0.75 over the run), λ from the proxy's 13 executions."""
    con = memory_workspace()
    insert_attempts(con, ATTEMPTS)
    insert_metrics(con, METRICS)
    insert_manifest(
        con,
        {
            "name": "m",
            "t0": T0,
            "deadline_s": 30,
            "phases": [{"name": "all", "start": 0, "end": 240}],
        },
    )
    e = analyze(con, AnalyzeOptions(only=["littles_law"])).littles_law
    assert e is not None
    assert e.source == "metrics + proxy log"
    run = e.windows[0]
    assert run.waiting_l == pytest.approx(0.75)
    assert run.lambda_per_s == pytest.approx(13 / 240)
    assert run.consistency is None
    assert "engine trace" in run.null_reasons["consistency"]
    assert run.deadline_saturation == pytest.approx(0.75 / (13 / 240 * 30))


def test_old_gpu_prefix_cache_name_is_used_and_flagged_as_blocks() -> None:
    con = memory_workspace()
    rows = [
        (t, "vllm:gpu_prefix_cache_queries_total" if n.startswith("vllm:prefix") else n, r, v)
        for t, n, r, v in METRICS
    ]
    insert_metrics(con, rows)
    c = analyze(con, AnalyzeOptions(only=["counters"])).counters
    assert c is not None
    assert c.query_metric == "vllm:gpu_prefix_cache_queries_total"
    assert c.query_counts_blocks
    assert "blocks" in c.finding


def test_replica_label_override() -> None:
    """With --replica-label instance, the pod label is ignored: no per-replica rows."""
    con = memory_workspace()
    insert_metrics(con, METRICS)
    c = analyze(con, AnalyzeOptions(only=["counters"], replica_label="instance")).counters
    assert c is not None
    assert {w.replica for w in c.windows} == {None}
    c = analyze(con, AnalyzeOptions(only=["counters"])).counters
    assert c is not None
    assert {w.replica for w in c.windows} == {None, "r0", "r1"}


# --- B. recovery verdicts -------------------------------------------------------------------


def _recovery(**kw: object):  # type: ignore[no-untyped-def]
    con = memory_workspace()
    recovery_run(con, **kw)  # type: ignore[arg-type]
    r = analyze(con, AnalyzeOptions(only=["delivery"]))
    assert r.delivery is not None
    assert r.delivery.recovery is not None
    return r.delivery.recovery


def test_recovered_when_every_later_bin_is_on_time() -> None:
    """Calls every 2 s (15 per 30 s bin); planned before 150 late, from 150 on time.
    Bins from the end of the pulse (60): 60, 90, 120 late; 150 on -> recovered after 90 s."""
    rec = _recovery(calls_per_s=0.5, late_until=150, accepted_per_s=0.5)
    assert rec.verdict == "recovered"
    assert rec.recovery_s == pytest.approx(90)
    assert rec.last_failing_bin_s == pytest.approx(120)


def test_metastable_when_load_is_under_capacity_but_accepted_executions_are_above() -> None:
    """After 60: calls 0.5/s (all late), accepted 1.5/s over [60, 300) (about 360) over the
    258 s to T = 318 (the last call, planned at 298, ends at 318) -> 1.40 Ĉ; calls 120/258."""
    rec = _recovery(calls_per_s=0.5, late_until=None, accepted_per_s=1.5)
    assert rec.verdict == "metastable"
    assert rec.accepted_x_capacity_after == pytest.approx(360 / 258, abs=0.01)
    assert rec.calls_x_capacity_after == pytest.approx(120 / 258)
    assert "1.40 × Ĉ" in rec.because


def test_draining_when_accepted_executions_stay_under_capacity() -> None:
    """Calls planned from 280 on are on time: the last bin [270, 300) is 10 of 15 on time
    (>= half, < 90 %): not recovered, not late to the end, executions within Ĉ."""
    rec = _recovery(calls_per_s=0.5, late_until=280, accepted_per_s=0.8)
    assert rec.verdict == "draining"


def test_late_until_the_end_with_executions_under_capacity_is_not_draining() -> None:
    """Every call late to the end of the data (issue 24: the delivery analysis said
    "draining" on the lab's retries-no-cancel under a metastable verdict)."""
    rec = _recovery(calls_per_s=0.5, late_until=None, accepted_per_s=0.8)
    assert rec.verdict == "metastable"
    assert "not draining" in rec.because


def test_overloaded_when_calls_keep_arriving_above_capacity() -> None:
    rec = _recovery(calls_per_s=1.5, late_until=None, accepted_per_s=1.5)
    assert rec.verdict == "overloaded"


def test_insufficient_data_with_fewer_than_five_calls_per_bin() -> None:
    rec = _recovery(calls_per_s=0.5, late_until=None, accepted_per_s=1.5, calls_per_bin_cap=4)
    assert rec.verdict == "insufficient data"
    assert rec.bins_with_enough_calls == 0


# --- G. capacity calibration ----------------------------------------------------------------


def test_capacity_is_the_last_stage_before_the_queue_grows() -> None:
    """FIFO server of 1 call/s; stages of 100 s at 0.5, 0.8, 1.5, 2.0 calls/s. Stage 3
    gains 0.5 waiting per second (50 waiting by its end) -> grows; Ĉ = 0.8."""
    con = memory_workspace()
    staged_ramp(con, [0.5, 0.8, 1.5, 2.0])
    g = analyze(con, AnalyzeOptions(only=["capacity"])).capacity
    assert g is not None
    assert [s.grows for s in g.stages] == [False, False, True, True]
    assert g.capacity_calls_per_s == pytest.approx(0.8)
    assert g.bound == "within"
    assert g.stages[2].waiting_slope_per_s == pytest.approx(0.5, abs=0.05)
    assert g.saturated_completed_per_s == pytest.approx(1.0, abs=0.02)
    assert [s.offered_per_s for s in g.stages] == pytest.approx([0.5, 0.8, 1.5, 2.0])


def test_capacity_below_first_and_above_last_stage_are_said() -> None:
    con = memory_workspace()
    staged_ramp(con, [1.5, 2.0])
    g = analyze(con, AnalyzeOptions(only=["capacity"])).capacity
    assert g is not None
    assert g.bound == "below_first_stage"
    assert g.capacity_calls_per_s is None
    assert "below the first stage" in g.finding
    con = memory_workspace()
    staged_ramp(con, [0.3, 0.6])
    g = analyze(con, AnalyzeOptions(only=["capacity"])).capacity
    assert g is not None
    assert g.bound == "at_or_above_last_stage"
    assert g.capacity_calls_per_s == pytest.approx(0.6)


# --- zero denominators and empty phases -----------------------------------------------------


def test_empty_phase_gives_nulls_with_reasons_not_errors() -> None:
    con = memory_workspace()
    insert_attempts(con, ATTEMPTS)
    insert_events(con, EVENTS)
    insert_steps(con, STEPS)
    r = analyze(con, AnalyzeOptions(phases=parse_phases("main=0:240,early=240:300"), deadline=30))
    amp = {w.window: w for w in r.amplification.windows}  # type: ignore[union-attr]
    assert amp["early"].calls == 0
    assert amp["early"].attempts_per_call is None
    assert amp["early"].null_reasons["attempts_per_call"] == "no calls planned in this window"
    c = {w.window: w for w in r.wasted_prefill.windows}  # type: ignore[union-attr]
    assert c["early"].computed_tokens == 0
    assert c["early"].aborted_share is None
    e = {w.window: w for w in r.littles_law.windows}  # type: ignore[union-attr]
    assert e["early"].wq_s is None
    assert e["early"].waiting_l == 0
    d = {w.window: w for w in r.delivery.windows}  # type: ignore[union-attr]
    assert d["early"].delivered_share is None


def test_wasted_prefill_segments_handle_overlapping_phases_and_the_closing_instant() -> None:
    """C scans the steps once, cut into disjoint segments; overlapping phases and a step
    ending exactly at T (in the run, in no half-open phase) must still add up as a direct
    sum over the steps says."""
    con = memory_workspace()
    insert_events(con, EVENTS)
    insert_steps(con, [*STEPS, (230, 240, "e13", 7, 0, 0, "r0")])
    opts = AnalyzeOptions(
        phases=parse_phases("p1=0:100,p2=50:150,p3=200:240"), only=["wasted_prefill"]
    )
    r = analyze(con, opts)
    got = {w.window: w.computed_tokens for w in r.wasted_prefill.windows if w.replica is None}  # type: ignore[union-attr]

    def direct(a: float, b: float, closed: bool = False) -> int:
        op = "<=" if closed else "<"
        q = "select coalesce(sum(prompt_computed), 0) from steps"
        q += f" where t_done >= ? and t_done {op} ?"
        return int(con.execute(q, [T0 + a, T0 + b]).fetchone()[0])  # type: ignore[index]

    assert got == {
        "run": direct(0, 240, closed=True),
        "p1": direct(0, 100),
        "p2": direct(50, 150),
        "p3": direct(200, 240),
    }
    assert got["run"] == got["p3"] + 7 + direct(0, 200)


def test_unmatched_attempts_and_executions_without_arrival_are_counted() -> None:
    """Attempt a names execution zz the engine never saw; execution y has a `scheduled` but
    no `arrived` (E leaves it out: its wait has no start)."""
    con = memory_workspace()
    insert_attempts(con, [("a", 0, 0, 0, 5, "delivered", "zz", False, None, None, 1)])
    insert_events(con, [(1, "y", "scheduled", None, "r0"), (2, "y", "finished", None, "r0")])
    r = analyze(con, AnalyzeOptions(only=["littles_law"]))
    assert r.data_checks.attempts_unmatched == 1
    assert r.data_checks.executions_no_arrived == 1
    assert r.data_checks.executions_no_terminal == 0
    assert r.littles_law is not None
    assert r.littles_law.windows[0].arrivals == 0


@pytest.mark.parametrize(
    ("span", "width"), [(240, 30), (6000, 30), (6001, 60), (10_400, 60), (86_400, 600)]
)
def test_default_series_bin_widens_past_200_bins(span: float, width: float) -> None:
    from relplan.analyses.bounds import auto_bin

    assert auto_bin(span) == width


def test_explicit_bin_is_kept() -> None:
    con = memory_workspace()
    insert_attempts(con, ATTEMPTS)
    assert resolve_context(con, AnalyzeOptions(bin=10)).bin_s == 10
    assert resolve_context(con, AnalyzeOptions()).bin_s == 30
