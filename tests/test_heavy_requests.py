"""The requests that hurt (relplan/analyses/heavy_requests.py), checked on paper.

A built incident, times in seconds from T0, two replicas, KV blocks of 16 tokens, top k = 5.

Proxy attempts (call, sent -> end, outcome, execution, model, prompt, max_tokens):
  h1  0 -> 20   delivered   x1 big    4000  256
  h2  1 -> 11   client_gone x2 small    50  128   (t_cancel 11)
  h3  2 -> 30   client_gone x3 small   100 4096   (t_cancel 30)
  h4  3 -> 33   client_gone x4 small   100  128   (t_cancel 33)
  h5  4 -> 14   client_gone -  small    60  -     (never reached the engine)
  h6  0 -> 12   delivered   x6 big    1000   64
  h7  5 -> 65   error 504   -  small    70  128   (the proxy's timeout)
  h8  6 -> 6.5  error 500   -  small    80  128   (not a timeout)
  h9..h12 at 40, 41, 42, 43, each 1 s, delivered, small, prompts 90 110 120 130,
          max_tokens 128 128 512 128

Engine, r0: x1 and x6 arrive at 0 (prompts 4000, 1000), x1 finishes at 20; x6 is preempted
  at 6, rescheduled, finished at 12.
  s1 (0,2)  x1 3000 computed, x6 1000   -> x1 2*3000/4000 = 1.5 s, x6 0.5 s of prefill
  s2 (2,4)  x1 1000 computed            -> x1 2.0 s (x1: 3.5 s, 4000 tokens)
  s3 (4,5)  x1 1 decode, x6 1 decode
  s4 (8,9)  x6 1001 computed (recomputed after the preemption) -> x6 1.0 s (x6: 1.5 s, 2001)
  KV: x1 ceil(3000/16)=188 blocks 2->4 (376) + 250 blocks 4->5 (250) + ceil(4001/16)=251
      blocks 5->20 (3765) = 4391 block-s; x6 63 blocks 2->5 (189) + 63 blocks 5->6, freed by
      the preemption (63) + 63 blocks 9->12 (189) = 441.
Engine, r1: x2 arrives at 1, never scheduled, aborted at 11.2; x3, x4 arrive at 2, 3.
  s10 (3,5) x3 100, x4 100 computed     -> 1.0 s each; first_token of both at 5
  s11 (5,6), s12 (6,7): one decode token each for x3 and x4; then x4 alone at t_done
  10, 15, 20, 25, 30 (one token each); x3 aborted at 30.5, x4 at 33.5.
  KV: x3 7 blocks 5->6, 6->7, 7->30.5 = 7 + 7 + 164.5 = 178.5; x4 7 blocks 5->6->7 (14),
      7->10 (21), 4 x 5 s (140), 30->33.5 (24.5) = 199.5.

Expected:
  by prefill: x1 3.5, x6 1.5, x3 1.0, x4 1.0 (tie: by execution id);
  by KV: x1 4391, x6 441, x4 199.5, x3 178.5;
  by duration (attempts): h7 60, h4 30, h3 28, h1 20, h6 12.
  limits, prompt_tokens, all: 12 values; top 5 4000 1000 130 120 110; the rest (7 values
    50..100) has nearest-rank p99 = the 7th smallest = 100: cuts the top 5, none of the rest.
    small: 10 values, top 130 120 110 100 100, rest 50 60 70 80 90 -> p99 = 90, cuts 5 and 0.
    big: 2 values, fewer than k: no rest, no limit.
  limits, max_tokens, all: 11 values (h5 has none); top 4096 512 256 128 128; rest six values
    64, 128 x 5 -> p99 = 128: cuts 3 of the top 5 (4096, 512, 256), none of the rest.
  cut attempts: h2 first_token (no token by 11; elapsed 10); h3 between_tokens (last token 7,
    silence 23 > the longest earlier gap 1; elapsed 28); h4 total (silence 3 < gap 5;
    elapsed 30); h5 unknown (no execution); h7 unknown, cut by the proxy (no execution);
    h8 is an error but no timeout: not listed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan import workspace
from relplan.analyses import AnalyzeOptions, analyze
from relplan.analyses.heavy_requests import HeavyRequests, classify
from tests.helpers.incident import T0, _insert, add_source, insert_events
from tests.helpers.report_samples import collected

ATTEMPTS = [
    # call, sent, end, outcome, status, execution, cancel, model, replica, prompt, max_tokens
    ("h1", 0, 20, "delivered", 200, "x1", None, "big", "r0", 4000, 256),
    ("h2", 1, 11, "client_gone", 0, "x2", 11, "small", "r1", 50, 128),
    ("h3", 2, 30, "client_gone", 0, "x3", 30, "small", "r1", 100, 4096),
    ("h4", 3, 33, "client_gone", 0, "x4", 33, "small", "r1", 100, 128),
    ("h5", 4, 14, "client_gone", 0, None, 14, "small", None, 60, None),
    ("h6", 0, 12, "delivered", 200, "x6", None, "big", "r0", 1000, 64),
    ("h7", 5, 65, "error", 504, None, None, "small", None, 70, 128),
    ("h8", 6, 6.5, "error", 500, None, None, "small", None, 80, 128),
    ("h9", 40, 41, "delivered", 200, "x9", None, "small", "r0", 90, 128),
    ("h10", 41, 42, "delivered", 200, "x10", None, "small", "r0", 110, 128),
    ("h11", 42, 43, "delivered", 200, "x11", None, "small", "r0", 120, 512),
    ("h12", 43, 44, "delivered", 200, "x12", None, "small", "r0", 130, 128),
]

EVENTS = [
    (0, "x1", "arrived", 4000, "r0"),
    (0, "x1", "scheduled", None, "r0"),
    (5, "x1", "first_token", None, "r0"),
    (20, "x1", "finished", None, "r0"),
    (0, "x6", "arrived", 1000, "r0"),
    (0, "x6", "scheduled", None, "r0"),
    (5, "x6", "first_token", None, "r0"),
    (6, "x6", "preempted", None, "r0"),
    (8, "x6", "scheduled", None, "r0"),
    (12, "x6", "finished", None, "r0"),
    (1, "x2", "arrived", 50, "r1"),
    (11.2, "x2", "aborted", None, "r1"),
    (2, "x3", "arrived", 100, "r1"),
    (3, "x3", "scheduled", None, "r1"),
    (5, "x3", "first_token", None, "r1"),
    (30.5, "x3", "aborted", None, "r1"),
    (3, "x4", "arrived", 100, "r1"),
    (3, "x4", "scheduled", None, "r1"),
    (5, "x4", "first_token", None, "r1"),
    (33.5, "x4", "aborted", None, "r1"),
]

# step, t_issue, t_done, execution, computed, cached, decode, replica
STEPS = [
    (1, 0, 2, "x1", 3000, 0, 0, "r0"),
    (1, 0, 2, "x6", 1000, 0, 0, "r0"),
    (2, 2, 4, "x1", 1000, 0, 0, "r0"),
    (3, 4, 5, "x1", 0, 0, 1, "r0"),
    (3, 4, 5, "x6", 0, 0, 1, "r0"),
    (4, 8, 9, "x6", 1001, 0, 0, "r0"),
    (10, 3, 5, "x3", 100, 0, 0, "r1"),
    (10, 3, 5, "x4", 100, 0, 0, "r1"),
    (11, 5, 6, "x3", 0, 0, 1, "r1"),
    (11, 5, 6, "x4", 0, 0, 1, "r1"),
    (12, 6, 7, "x3", 0, 0, 1, "r1"),
    (12, 6, 7, "x4", 0, 0, 1, "r1"),
    *[(13 + i, t - 1, t, "x4", 0, 0, 1, "r1") for i, t in enumerate((10, 15, 20, 25, 30))],
]


def _t(s: float | None) -> float | None:
    return None if s is None else T0 + s


def build(path: Path, *, engine: bool = True) -> Path:
    con = workspace.connect(path)
    try:
        sid = add_source(con, "proxy", "jsonl", "proxy.jsonl")
        cols = [
            "call_id",
            "attempt",
            "t_planned",
            "t_sent",
            "t_end",
            "outcome",
            "status",
            "execution_id",
            "attached",
            "t_cancel",
            "model",
            "replica",
            "prompt_tokens",
            "max_tokens",
            "source_id",
            "source_row",
        ]
        rows = [
            (c, 0, T0 + s, T0 + s, T0 + e, o, st, x, False, _t(k), m, r, p, mt, sid, i + 1)
            for i, (c, s, e, o, st, x, k, m, r, p, mt) in enumerate(ATTEMPTS)
        ]
        _insert(con, "attempts", cols, rows)
        if engine:
            insert_events(con, EVENTS)
            sid = add_source(con, "engine", "jsonl", "engine-steps.jsonl")
            _insert(
                con,
                "steps",
                [
                    "step",
                    "t_issue",
                    "t_done",
                    "execution_id",
                    "prompt_computed",
                    "prompt_cached",
                    "decode_tokens",
                    "replica",
                    "source_id",
                    "source_row",
                ],
                [
                    (n, T0 + a, T0 + b, x, c, k, d, r, sid, i + 1)
                    for i, (n, a, b, x, c, k, d, r) in enumerate(STEPS)
                ],
            )
    finally:
        con.close()
    return path


@pytest.fixture(scope="module")
def heavy(tmp_path_factory: pytest.TempPathFactory) -> HeavyRequests:
    path = build(tmp_path_factory.mktemp("heavy") / "ws.duckdb")
    con = workspace.connect(path, read_only=True)
    try:
        res = analyze(con, AnalyzeOptions(only=["heavy_requests"]))
    finally:
        con.close()
    h = res.get(HeavyRequests)
    assert h is not None
    return h


def test_prefill_ranking_is_each_requests_share_of_its_prefill_steps(heavy: HeavyRequests) -> None:
    got = [(r.execution_id, r.prefill_gpu_s, r.prefill_tokens) for r in heavy.by_prefill]
    assert got == [
        ("x1", pytest.approx(3.5), 4000),
        ("x6", pytest.approx(1.5), 2001),
        ("x3", pytest.approx(1.0), 100),
        ("x4", pytest.approx(1.0), 100),
    ]
    top = heavy.by_prefill[0]
    assert (top.call_id, top.model, top.prompt_tokens, top.max_tokens) == ("h1", "big", 4000, 256)
    assert top.replica == "r0"


def test_kv_block_seconds_free_the_blocks_at_a_preemption(heavy: HeavyRequests) -> None:
    got = [(r.execution_id, r.kv_block_s) for r in heavy.by_kv]
    assert got == [
        ("x1", pytest.approx(4391)),
        ("x6", pytest.approx(441)),
        ("x4", pytest.approx(199.5)),
        ("x3", pytest.approx(178.5)),
    ]


def test_longest_attempts_come_from_the_proxy_log(heavy: HeavyRequests) -> None:
    got = [(r.call_id, r.duration_s) for r in heavy.by_duration]
    assert got == [("h7", 60), ("h4", 30), ("h3", 28), ("h1", 20), ("h6", 12)]
    assert [r.rank for r in heavy.by_duration] == [1, 2, 3, 4, 5]


def test_limits_cut_the_top_five_and_keep_the_p99_of_the_rest(heavy: HeavyRequests) -> None:
    lim = {(x.measure, x.tier): x for x in heavy.limits}
    p = lim[("prompt_tokens", None)]
    assert (p.n, p.top_min, p.top_max, p.limit, p.cuts_top, p.cuts_rest) == (
        12,
        110,
        4000,
        100,
        5,
        0,
    )
    assert p.rest_kept_share == 1.0
    small = lim[("prompt_tokens", "small")]
    assert (small.n, small.limit, small.cuts_top, small.cuts_rest) == (10, 90, 5, 0)
    big = lim[("prompt_tokens", "big")]
    assert (big.n, big.limit, big.rest_kept_share) == (2, None, None)
    m = lim[("max_tokens", None)]
    assert (m.n, m.top_min, m.top_max, m.limit, m.cuts_top, m.cuts_rest) == (
        11,
        128,
        4096,
        128,
        3,
        0,
    )


def test_each_cut_attempt_is_put_on_the_timeout_that_cut_it(heavy: HeavyRequests) -> None:
    got = {c.call_id: (c.kind, c.cut_by, c.elapsed_s) for c in heavy.cut_attempts}
    assert got == {
        "h2": ("first_token", "client", 10),
        "h3": ("between_tokens", "client", 28),
        "h4": ("total", "client", 30),
        "h5": ("unknown", "client", 10),
        "h7": ("unknown", "proxy", 60),
    }
    assert heavy.cut_attempts_total == 5
    silence = {c.call_id: c.silence_s for c in heavy.cut_attempts}
    assert silence["h3"] == pytest.approx(23)
    assert silence["h4"] == pytest.approx(3)
    seen = {t.kind: (t.attempts, t.median_s) for t in heavy.timeouts}
    assert seen == {
        "first_token": (1, 10),
        "between_tokens": (1, pytest.approx(23)),
        "total": (1, 30),
        "unknown": (2, 35),
    }


def test_without_an_engine_trace_the_timeout_is_unknown_and_durations_stay(
    tmp_path: Path,
) -> None:
    path = build(tmp_path / "ws.duckdb", engine=False)
    con = workspace.connect(path, read_only=True)
    try:
        res = analyze(con, AnalyzeOptions(only=["heavy_requests"]))
    finally:
        con.close()
    h = res.get(HeavyRequests)
    assert h is not None
    assert h.by_prefill == []
    assert h.by_kv == []
    assert "engine trace" in h.null_reasons["by_prefill"]
    assert {c.kind for c in h.cut_attempts} == {"unknown"}
    assert h.by_duration[0].call_id == "h7"


def test_a_first_token_without_steps_cannot_tell_between_and_total() -> None:
    row = {
        "matched": True,
        "n_token_times": 1,
        "has_steps": False,
        "gap_at_cut_s": 20.0,
        "max_gap_s": None,
    }
    assert classify(row, has_engine=True)[0] == "unknown"
    assert classify(row | {"has_steps": True}, has_engine=True)[0] == "between_tokens"
    assert classify(row | {"has_steps": True, "gap_at_cut_s": 0.5}, has_engine=True)[0] == ("total")


def test_the_analysis_is_skipped_without_proxy_log_or_steps(tmp_path: Path) -> None:
    con = workspace.connect(tmp_path / "empty.duckdb")
    try:
        insert_events(con, EVENTS)
        res = analyze(con, AnalyzeOptions(only=["heavy_requests"]))
    finally:
        con.close()
    assert res.get(HeavyRequests) is None
    assert [s.analysis for s in res.skipped] == ["heavy_requests"]


def test_the_report_shows_the_section_with_the_top_requests_and_limits(tmp_path: Path) -> None:
    from relplan.report.pipeline import render_page

    con = workspace.connect(build(tmp_path / "ws.duckdb"), read_only=True)
    try:
        data = collected(con, "heavy")
    finally:
        con.close()
    sec = data.heavy_requests
    assert sec.available
    assert sec.title == "Requests that hurt"
    rows = {r[0]: r for r in sec.table.rows}
    assert rows["most prefill #1"][1:5] == ["h1/0 (x1)", "big", "r0", "3.50 s of prefill steps"]
    assert rows["longest #1"][1] == "h7/0"
    limits = [r for r in sec.table.rows if r[0] == "prompt_tokens limit"]
    assert [r[2] for r in limits] == ["all models", "big", "small"]
    assert limits[0][4] == "≤ 100"
    assert rows["timeout between tokens"][4] == "median 23.0 s"
    page = render_page(data)
    assert 'id="heavy_requests"' in page
    assert "timeout to first token" in page


def test_the_report_folds_the_section_away_without_its_inputs(tmp_path: Path) -> None:
    """Without a proxy log and steps (events only) the section is one row of "what the data
    could not show"."""

    con = workspace.connect(tmp_path / "events-only.duckdb")
    try:
        insert_events(con, EVENTS)
        data = collected(con, "x")
    finally:
        con.close()
    assert not data.heavy_requests.available
    assert any(m.section == "Requests that hurt" for m in data.missing.items)


def test_one_limit_per_measure_when_the_log_names_no_model(incident_db: Path) -> None:
    """tests/helpers/incident.py: 16 attempts without a model or max_tokens; the 15 not
    attached (c4's retry is) have prompts 500 400 300 300 300 (c3's three attempts) | 250
    200 200 200 100 100 90 70 60 50: the rest's nearest-rank p99 (the ceil(0.99 * 10) = 10th
    smallest) is its largest, 250."""
    con = workspace.connect(incident_db, read_only=True)
    try:
        res = analyze(con, AnalyzeOptions(only=["heavy_requests"]))
    finally:
        con.close()
    h = res.get(HeavyRequests)
    assert h is not None
    [only] = h.limits
    assert (only.measure, only.tier, only.n, only.limit) == ("prompt_tokens", None, 15, 250)
    assert (only.cuts_top, only.cuts_rest) == (5, 0)


def test_the_text_output_lists_the_top_requests_limits_and_timeouts(
    heavy: HeavyRequests,
) -> None:
    from relplan.text.heavy import render_heavy_requests

    text = render_heavy_requests(heavy)
    lines = text.splitlines()
    assert lines[0] == "The requests that hurt (top 5 per measure)"
    prefill = next(ln for ln in lines if ln.startswith("prefill #1"))
    assert prefill.split()[2:4] == ["h1/0", "x1"]
    assert any(ln.split()[:3] == ["prompt_tokens", "all", "models"] for ln in lines)
    assert any(ln.startswith("between tokens") for ln in lines)
    assert lines[-1] == heavy.finding


# y on r0: prompt 160, preempted at 3 and twice at 7 (a tie), finished at 10; four steps:
#   s30 (0,2)     160 computed -> 10 blocks 2->3 (the first preemption)      = 10
#   s31 (3,4)     160 computed -> 10 blocks 4->5 (issued at the preemption) = 10
#   s32 (4.5,5)   16 decode    -> 11 blocks 5->7 (the tied preemptions)    = 22
#   s33 (8,9)     32 computed  -> 2 blocks 9->10 (finished)                =  2
# KV 44 block-s over three residencies; prompt tokens computed 352 (each step once).
PREEMPTED_THRICE = [
    (0, "y", "arrived", 160, "r0"),
    (3, "y", "preempted", None, "r0"),
    (7, "y", "preempted", None, "r0"),
    (7, "y", "preempted", None, "r0"),
    (10, "y", "finished", None, "r0"),
]
Y_STEPS = [
    (30, 0, 2, "y", 160, 0, 0, "r0"),
    (31, 3, 4, "y", 160, 0, 0, "r0"),
    (32, 4.5, 5, "y", 0, 0, 16, "r0"),
    (33, 8, 9, "y", 32, 0, 0, "r0"),
]


def test_each_preemption_starts_a_new_residency_and_tied_ones_count_once(
    tmp_path: Path,
) -> None:
    path = build(tmp_path / "ws.duckdb")
    con = workspace.connect(path)
    try:
        insert_events(con, PREEMPTED_THRICE)
        sid = add_source(con, "engine", "jsonl", "engine-steps-y.jsonl")
        cols = ["step", "t_issue", "t_done", "execution_id", "prompt_computed"]
        cols += ["prompt_cached", "decode_tokens", "replica", "source_id", "source_row"]
        rows = [
            (n, T0 + a, T0 + b, x, c, k, d, r, sid, i + 1)
            for i, (n, a, b, x, c, k, d, r) in enumerate(Y_STEPS)
        ]
        _insert(con, "steps", cols, rows)
        res = analyze(con, AnalyzeOptions(only=["heavy_requests"]))
    finally:
        con.close()
    h = res.get(HeavyRequests)
    assert h is not None
    y = [r for r in h.by_kv if r.execution_id == "y"]
    assert [(r.kv_block_s, r.prefill_tokens) for r in y] == [(pytest.approx(44), 352)]
