"""Every analysis on the hand-built incident of tests/helpers/incident.py, checked on paper.

Read the fixture's docstring first: twelve calls, thirteen executions (one id repeated on a
second replica), eighteen steps, two counters with resets. Phases base [0, 60), pulse
[60, 120), hold [120, 240); Ĉ = 0.05 calls/s, D = 30 s, W = 100 s; T = 240 s (last phase end).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from relplan import workspace
from relplan.analyses import AnalyzeOptions, AnalyzeResult, analyze
from tests.helpers.incident import T0


@pytest.fixture(scope="module")
def con(incident_db: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    c = workspace.connect(incident_db, read_only=True)
    yield c
    c.close()


@pytest.fixture(scope="module")
def result(con: duckdb.DuckDBPyConnection) -> AnalyzeResult:
    return analyze(con, AnalyzeOptions())


def by_window(rows: list, replica: str | None = None) -> dict:  # type: ignore[type-arg]
    return {r.window: r for r in rows if getattr(r, "replica", None) == replica}


def test_context_takes_t0_phases_and_parameters_from_run_json(result: AnalyzeResult) -> None:
    """t0 from run.json; T = max(last phase end 240, last proxy/engine time 230.5) = 240."""
    ctx = result.context
    assert ctx.t0 == T0
    assert ctx.t_end == T0 + 240
    assert [p.name for p in ctx.phases] == ["base", "pulse", "hold"]
    assert ctx.overload_phase == "pulse"
    assert (ctx.capacity, ctx.deadline_s, ctx.delivery_window_s) == (0.05, 30, 100)
    assert ctx.notes == []


def test_edge_cases_are_counted(result: AnalyzeResult) -> None:
    """e7 has no terminal event; c3's shed retry and c12's error have no execution; the
    `ghost` step has no lifecycle event; id e1 lives on r0 and r1."""
    d = result.data_checks
    assert d.executions_no_terminal == 1
    assert d.attempts_no_execution == 2
    assert d.steps_unknown_execution == 1
    assert d.execution_ids_on_several_replicas == 1
    assert d.attempts_unmatched == 0
    assert d.executions_no_arrived == 0


def test_amplification_per_phase(result: AnalyzeResult) -> None:
    """A, by hand (Ĉ = 0.05):
    calls by t_planned: base c1 c2 = 2 (0.667 Ĉ); pulse c3..c8 = 6 (6/60/0.05 = 2.0 Ĉ);
      hold c9..c12 = 4; run 12 (12/240/0.05 = 1.0 Ĉ).
    attempts by t_sent: base 3 (1 retry: c2 a1); pulse 9 (retries c3 a1, c3 a2, c4 a1);
      hold 4; run 16, 4 retries.
    attempts/call: base 3/2; pulse (3+2+1+1+1+1)/6 = 1.5; run 16/12.
    executions/call (non-attached with an id): base 3/2; pulse 7/6; hold 3/4; run 13/12.
    accepted (engine arrived, not rejected): base e1 e2 e3 = 3; pulse e4 e5 e6 e7 e9 e10 = 6
      (e8 rejected); hold e1@r1 e12 e13 = 3; run 12 -> pulse 6/60/0.05 = 2.0 Ĉ.
    completed (first finished): base e1 = 1; pulse e3 (at 60: the boundary belongs to the
      later phase), e5, e6, e9 = 4, of which e9 for nobody; hold e10 e1@r1 e12 e13 = 4.
    retry share: base 1/3 (e3 of e1 e2 e3); pulse 1/7 (e5); hold 0/3; run 2/13.
    shed/attached retries in pulse: 1 of 3 each.
    abort propagation: e2 40 -> 40.5 (base), e4 90 -> 90.25 (pulse); run median 0.375, max 0.5.
    """
    w = by_window(result.amplification.windows)  # type: ignore[union-attr]
    assert [w[k].calls for k in ("run", "base", "pulse", "hold")] == [12, 2, 6, 4]
    assert w["pulse"].calls_x_capacity == pytest.approx(2.0)
    assert w["run"].calls_x_capacity == pytest.approx(1.0)
    assert [w[k].attempts for k in ("run", "base", "pulse", "hold")] == [16, 3, 9, 4]
    assert [w[k].retries for k in ("run", "base", "pulse", "hold")] == [4, 1, 3, 0]
    assert w["pulse"].attempts_per_call == pytest.approx(1.5)
    assert w["run"].attempts_per_call == pytest.approx(16 / 12)
    assert w["pulse"].executions_per_call == pytest.approx(7 / 6)
    assert w["hold"].executions_per_call == pytest.approx(0.75)
    assert [w[k].executions_accepted for k in ("run", "base", "pulse", "hold")] == [12, 3, 6, 3]
    assert w["pulse"].executions_rejected == 1
    assert w["pulse"].accepted_x_capacity == pytest.approx(2.0)
    assert w["run"].accepted_source == "engine trace"
    assert [w[k].executions_completed for k in ("run", "base", "pulse", "hold")] == [9, 1, 4, 4]
    assert (w["pulse"].completed_for_waiting, w["pulse"].completed_for_nobody) == (3, 1)
    assert w["pulse"].completed_for_waiting_x_capacity == pytest.approx(1.0)
    assert w["base"].retry_share == pytest.approx(1 / 3)
    assert w["pulse"].retry_share == pytest.approx(1 / 7)
    assert w["hold"].retry_share == 0
    assert w["run"].retry_share == pytest.approx(2 / 13)
    assert (w["pulse"].shed, w["pulse"].attached) == (1, 1)
    assert w["pulse"].retries_shed_share == pytest.approx(1 / 3)
    assert w["pulse"].retries_attached_share == pytest.approx(1 / 3)
    assert w["hold"].retries_shed_share is None
    assert "no retries" in w["hold"].null_reasons["retries_shed_share"]
    assert w["run"].abort_propagation_n == 2
    assert w["run"].abort_delay_median_s == pytest.approx(0.375)
    assert w["run"].abort_delay_max_s == pytest.approx(0.5)
    assert w["hold"].abort_delay_median_s is None


def test_amplification_series_bins_add_up_to_the_run(result: AnalyzeResult) -> None:
    """Eight 30 s bins over [0, 240): calls 12, accepted 12, completed 9 in total; calls
    per bin: c1 c2 | - | c3 c4 c5 c6 c7 | c8 | - | c9 c10 | c11 | c12."""
    s = result.amplification.series  # type: ignore[union-attr]
    assert [b.start_s for b in s] == [30.0 * i for i in range(8)]
    assert sum(b.calls for b in s) == 12
    assert sum(b.executions_accepted or 0 for b in s) == 12
    assert sum(b.executions_completed or 0 for b in s) == 9
    assert [b.calls for b in s] == [2, 0, 5, 1, 0, 2, 1, 1]


def test_delivery_per_phase(result: AnalyzeResult) -> None:
    """B, by hand: delivery times (earliest delivered t_end - t_planned, within W = 100):
    c1 20, c2 50, c3 55, c4 45, c8 22, c9 10, c10 10, c11 5; c5 c6 c7 c12 not delivered;
    on time (<= 30): c1 c8 c9 c10 c11.
    run: 8/12 delivered, 5/12 on time, median of (5,10,10,20,22,45,50,55) = 21, p99 at
      position 6.93 -> 50 + 0.93 * 5 = 54.65; c12 (planned 230, 230 + 100 > 240) open at end.
    base: 2/2 delivered, 1/2 on time, median 35, p99 20 + 0.99 * 30 = 49.7.
    pulse: 3/6 delivered (c3 c4 c8), 1/6 on time, median 45, p99 45 + 0.98 * 10 = 54.8.
    hold: 3/4, 3/4 on time, 1 open at end.
    Recovery: 30 s bins from 120 hold 0, 2, 1, 1 calls (c8 was planned at 118): none has 5
    -> insufficient data.
    """
    d = result.delivery
    assert d is not None
    w = by_window(d.windows)
    assert (w["run"].calls, w["run"].delivered, w["run"].on_time) == (12, 8, 5)
    assert w["run"].delivered_share == pytest.approx(8 / 12)
    assert w["run"].on_time_share == pytest.approx(5 / 12)
    assert w["run"].delivery_median_s == pytest.approx(21)
    assert w["run"].delivery_p99_s == pytest.approx(54.65)
    assert w["run"].window_open_at_end == 1
    assert w["base"].delivery_median_s == pytest.approx(35)
    assert w["base"].delivery_p99_s == pytest.approx(49.7)
    assert w["pulse"].delivered_share == pytest.approx(0.5)
    assert w["pulse"].on_time_share == pytest.approx(1 / 6)
    assert w["pulse"].delivery_median_s == pytest.approx(45)
    assert w["pulse"].delivery_p99_s == pytest.approx(54.8)
    assert (w["hold"].delivered, w["hold"].on_time, w["hold"].window_open_at_end) == (3, 3, 1)
    assert d.recovery is not None
    assert d.recovery.verdict == "insufficient data"
    assert [b.calls for b in d.recovery.bins] == [0, 2, 1, 1]
    assert d.recovery.calls_x_capacity_after == pytest.approx(4 / 120 / 0.05)


def test_wasted_prefill_by_fate(result: AnalyzeResult) -> None:
    """C, by hand. Fates: delivered e1 e3 e5 e6 e10 e1@r1 e12 e13; finished_for_nobody e9;
    aborted e2 e4; unfinished e7 (e8 was refused and computed nothing); unknown `ghost`.
    run tokens: delivered 100+200+300+(100+100)+120+90+60+50 = 1120, for nobody 250,
      aborted 150+300 = 450, unfinished 400, unknown 30; total 2250.
    aborted share 450/2250 = 0.2; in flight at the abort: e4's (85, 91] step, 150 prompt
      tokens -> 150/450 = 1/3, and e2's (39, 41] step's 1 decode token;
    before first output: e4 (no first_token) 300/2250; recomputed: e6's step issued at 84,
      after its preemption at 82: 100/2250.
    pulse (t_done in [60, 120)): 150+150+100+100+250+300+400 = 1450, aborted 300,
      in flight 150/300 = 0.5. base 480 (aborted e2 150, no in-flight prompt). hold 320.
    r1 alone: 90 tokens, all delivered.
    """
    c = result.wasted_prefill
    assert c is not None
    w = by_window(c.windows)
    run = w["run"]
    assert run.computed_tokens == 2250
    assert run.tokens_by_fate == {
        "delivered": 1120,
        "finished_for_nobody": 250,
        "finished": 0,
        "aborted": 450,
        "unfinished": 400,
        "unknown": 30,
    }
    assert run.aborted_share == pytest.approx(0.2)
    assert run.inflight_prompt_tokens == 150
    assert run.inflight_decode_tokens == 1
    assert run.inflight_share_of_aborted == pytest.approx(1 / 3)
    assert run.before_first_output_tokens == 300
    assert run.recomputed_tokens == 100
    assert run.cached_tokens == 130
    assert run.decode_tokens == 37
    assert [w[k].computed_tokens for k in ("base", "pulse", "hold")] == [480, 1450, 320]
    assert w["pulse"].inflight_share_of_aborted == pytest.approx(0.5)
    assert w["base"].inflight_share_of_aborted == 0
    assert w["hold"].inflight_share_of_aborted is None
    r1 = by_window(c.windows, "r1")
    assert r1["run"].computed_tokens == 90
    assert r1["run"].tokens_by_fate["delivered"] == 90
    assert "83 %" not in c.finding
    assert "20 % of computed prefill" in c.finding


def test_counters_rise_with_resets_per_replica(result: AnalyzeResult) -> None:
    """D, by hand. r0 prompt pairs: 300, 0, 200, reset->50, 100, 100, 0, 0 (sum 750);
    r0 query pairs: 300, 0, 600, 100, reset->100, 50, 50, 0 (sum 1200); r1: 90 and 90.
    run (all): prompt 840, queries 1290, shortfall 1 - 840/1290; 2 resets.
    pulse [60, 120]: pairs (60,90), (90,120): 250 vs 700 -> 1 - 250/700.
    hold: r0 200 vs 200 (pairs from 120 to 240) + r1 90 vs 90 -> 0.
    Truth from the trace (prompt of executions first scheduled / first token in the window):
    pulse scheduled e4 e6 e9 e5 e7 = 1350, first token e6 e9 e5 e7 = 1050 -> 1 - 1050/1350.
    Rolling 60 s every 15 s, from 60: shortfall > 0.2 with queries rising at 90, 105, 120,
    135, 150 (0.667, 0.667, 0.643, 0.5, 0.25) and at 225, 240 (queries +50, prompt +0) ->
    alarms 90-150 s and 225-240 s; at 75 no pair lies inside the window (no rise, no alarm).
    """
    c = result.counters
    assert c is not None
    assert (c.prompt_metric, c.query_metric) == (
        "vllm:prompt_tokens_total",
        "vllm:prefix_cache_queries",
    )
    w = by_window(c.windows)
    assert (w["run"].prompt_rise, w["run"].query_rise, w["run"].resets) == (840, 1290, 2)
    assert w["run"].shortfall == pytest.approx(1 - 840 / 1290)
    assert w["pulse"].shortfall == pytest.approx(1 - 250 / 700)
    assert w["hold"].shortfall == pytest.approx(0)
    assert w["pulse"].truth_shortfall == pytest.approx(1 - 1050 / 1350)
    assert w["run"].truth_shortfall == pytest.approx(1 - 1950 / 2250)
    r0 = by_window(c.windows, "r0")
    assert (r0["run"].prompt_rise, r0["run"].query_rise) == (750, 1200)
    r1 = by_window(c.windows, "r1")
    assert r1["base"].shortfall is None
    assert "did not rise" in r1["base"].null_reasons["shortfall"]
    total = [a for a in c.alarms if a.replica is None]
    assert [(a.start_s, a.end_s, a.evaluations) for a in total] == [(90, 150, 5), (225, 240, 2)]
    pts = {p.t_s: p for p in c.series if p.replica is None}
    assert pts[75].shortfall is None
    assert not pts[75].firing
    assert pts[90].shortfall == pytest.approx(1 - 200 / 600)


def test_littles_law_per_phase(result: AnalyzeResult) -> None:
    """E, by hand. Waits (arrived -> first scheduled/aborted/rejected): e1 2, e2 2, e3 3,
    e4 10, e6 10, e7 30, e8 0.1 (refused), e9 5, e5 1, e10 118 -> 131 = 13 (crosses into
    hold), e1@r1 1, e12 1, e13 1. Sum 79.1.
    run: L = 79.1/240, λ = 13/240, Wq = 79.1/13 -> consistency 1, saturation L/(λ·30).
    pulse: integral 56.1 + 2 (e10 until 120) = 58.1 -> L = 58.1/60; λ = 7/60; Wq = 69.1/7;
      consistency = 58.1/69.1; saturation = (58.1/60)/(7/60 · 30).
    hold: integral 3 + 11 (e10 from 120) = 14 -> L = 14/120, λ = 3/120, Wq = 1,
      consistency 14/3.
    Metrics (num_requests_waiting 0, 2, 1, 0 at 0, 60, 120, 180): run mean 180/240 = 0.75,
      pulse 2, hold 0.5.
    """
    e = result.littles_law
    assert e is not None
    assert e.source == "engine trace"
    w = by_window(e.windows)
    assert w["run"].waiting_l == pytest.approx(79.1 / 240)
    assert w["run"].consistency == pytest.approx(1.0)
    assert w["run"].deadline_saturation == pytest.approx((79.1 / 240) / (13 / 240 * 30))
    assert w["pulse"].waiting_l == pytest.approx(58.1 / 60)
    assert w["pulse"].arrivals == 7
    assert w["pulse"].wq_s == pytest.approx(69.1 / 7)
    assert w["pulse"].consistency == pytest.approx(58.1 / 69.1)
    assert w["pulse"].deadline_saturation == pytest.approx((58.1 / 60) / (7 / 60 * 30))
    assert w["hold"].consistency == pytest.approx(14 / 3)
    assert w["run"].waiting_l_metrics == pytest.approx(0.75)
    assert w["pulse"].waiting_l_metrics == pytest.approx(2.0)
    assert w["hold"].waiting_l_metrics == pytest.approx(0.5)
    assert w["run"].lambda_proxy_per_s == pytest.approx(13 / 240)
    assert sum((b.waiting_l or 0) * 30 for b in e.series) == pytest.approx(79.1)


def test_littles_law_per_replica(result: AnalyzeResult) -> None:
    """Per replica in hold: r1 has e1@r1 alone (wait 1 s): L = 1/120, λ = 1/120, Wq = 1,
    consistency 1; its gauge is absent (only pod r0 exports one), its proxy λ is c9's
    execution, 1/120. r0: e12 and e13 wait 1 s each and e10 waits 11 s into hold:
    L = 13/120, λ = 2/120, Wq = 1, consistency 6.5; its gauge mean is 0.5."""
    e = result.littles_law
    assert e is not None
    r1 = by_window(e.windows, "r1")["hold"]
    assert r1.waiting_l == pytest.approx(1 / 120)
    assert r1.arrivals == 1
    assert r1.consistency == pytest.approx(1.0)
    assert r1.waiting_l_metrics is None
    assert "no vllm:num_requests_waiting" in r1.null_reasons["waiting_l_metrics"]
    assert r1.lambda_proxy_per_s == pytest.approx(1 / 120)
    r0 = by_window(e.windows, "r0")["hold"]
    assert r0.waiting_l == pytest.approx(13 / 120)
    assert r0.consistency == pytest.approx(6.5)
    assert r0.waiting_l_metrics == pytest.approx(0.5)
    assert by_window(e.windows, "r1")["base"].wq_s is None


def test_retry_gap_and_slack(result: AnalyzeResult) -> None:
    """F, by hand. c2 a1 -> e3: predecessor e2 aborted 40.5, e3 scheduled 45 -> gap 4.5;
    slack 42 + 30 - 45 (first step) = 27. c3 a2 -> e5: the shed a1 has no execution, so the
    predecessor is a0's e4, aborted 90.25; gap 96 - 90.25 = 5.75; slack 95 + 30 - 96 = 29.
    c4's attached retry creates no execution. run: gap median 5.125, p10 4.625, p90 5.625;
    slack median 28, p10 27.2, p90 28.8.
    """
    f = result.retry_timing
    assert f is not None
    w = by_window(f.windows)
    run = w["run"]
    assert (run.retries_with_execution, run.retries_after_abort, run.never_scheduled) == (2, 2, 0)
    assert run.gap_median_s == pytest.approx(5.125)
    assert run.gap_p10_s == pytest.approx(4.625)
    assert run.gap_p90_s == pytest.approx(5.625)
    assert run.slack_median_s == pytest.approx(28)
    assert run.slack_p10_s == pytest.approx(27.2)
    assert run.slack_p90_s == pytest.approx(28.8)
    assert w["base"].gap_median_s == pytest.approx(4.5)
    assert w["pulse"].slack_median_s == pytest.approx(29)
    assert w["hold"].gap_median_s is None
    assert "no retry" in w["hold"].null_reasons["gap_median_s"]


def test_capacity_is_skipped_without_stages(result: AnalyzeResult) -> None:
    assert result.capacity is None
    assert [s.analysis for s in result.skipped] == ["capacity", "restarts"]
    assert "stage-1" in result.skipped[0].reason


def test_from_to_clips_phases_and_counters(con: duckdb.DuckDBPyConnection) -> None:
    """--from 60 --to 200: base drops out, hold becomes [120, 200) and the steady window
    (pulse end 120 + D 30 to the hold's end 240) [150, 200); the rolling series starts
    at 120 (first full window) and only 120-150 s still alarms."""
    r = analyze(con, AnalyzeOptions(t_from=60, t_to=200, only=["counters", "delivery"]))
    windows = [p.window for p in r.counters.windows if p.replica is None]  # type: ignore[union-attr]
    assert windows == ["run", "pulse", "hold", "steady"]
    hold = by_window(r.counters.windows)["hold"]  # type: ignore[union-attr]
    assert (hold.start_s, hold.end_s) == (120, 200)
    steady = by_window(r.counters.windows)["steady"]  # type: ignore[union-attr]
    assert (steady.start_s, steady.end_s) == (150, 200)
    assert [(a.start_s, a.end_s) for a in r.counters.alarms if a.replica is None] == [(120, 150)]  # type: ignore[union-attr]
    assert r.amplification is None
    assert r.skipped == []


def test_amplification_per_replica_adds_up(result: AnalyzeResult) -> None:
    """r1 ran one execution (e1@r1: arrived 150, finished 160, delivered to c9) and r0 the
    other twelve (e8 refused): per replica the counts add up to the whole-fleet rows."""
    a = result.amplification
    assert a is not None
    rows = {(r.window, r.replica): r for r in a.by_replica}
    r1 = rows[("hold", "r1")]
    assert (r1.executions_accepted, r1.executions_completed, r1.completed_for_waiting) == (1, 1, 1)
    assert r1.accepted_x_capacity == pytest.approx(1 / 120 / 0.05)
    assert rows[("pulse", "r0")].executions_rejected == 1
    for w in a.windows:
        parts = [r for r in a.by_replica if r.window == w.window]
        assert sum(r.executions_accepted for r in parts) == w.executions_accepted
        assert sum(r.executions_completed for r in parts) == w.executions_completed
        assert sum(r.completed_for_nobody or 0 for r in parts) == w.completed_for_nobody
