"""Issue 23's forms no one had published, recorded on the lab (tests/data/lab/issue23-forms,
its README gives versions, flags, commands and date): real nginx 1.22.1 writing formats with
adjacent variables, Ingress NGINX's upstreaminfo and a JSON log with `a, b : c` upstream
groups (retries to two dead upstreams, then vLLM), and a real vLLM 0.32 log at DEBUG with both
queue caps refusing requests. Every count below was read off the recorded files."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

pytestmark = pytest.mark.slow  # 1-3 s each on the shared machine (an ingest apiece)

LAB = Path(__file__).resolve().parent / "data" / "lab" / "issue23-forms"
FORMATS = {
    line.split()[1]: line[line.index("'") + 1 : line.rindex("'")]
    for line in (LAB / "nginx.conf").read_text().splitlines()
    if line.strip().startswith("log_format")
}


def _text(name: str) -> str:
    with gzip.open(LAB / name, "rt") as f:
        return f.read()


BY_STATUS = "select status, outcome, count(*) from attempts group by 1, 2 order by 1"
# 34 requests (8 long, 16 short through the dead group then vLLM, 6 long-prompt, 3 to the dead
# group only, 1 curl to /health): 21 answered 200 by vLLM, 9 refused 503 by its queue caps,
# 3 a 502 of nginx's own after both dead upstreams, the curl a 404. 83 upstream tries.
TRIES = [(200, "delivered", 21), (404, "error", 1), (502, "error", 52), (503, "error", 9)]


@pytest.mark.parametrize(
    ("name", "fmt", "kind"),
    [
        ("upstreaminfo.log.gz", None, "nginx"),
        ("ingress_nginx.json.gz", None, "nginx_json"),
        ("adjacent_status.log.gz", "adjacent_status", "nginx"),
    ],
)
def test_recorded_upstream_lists_are_one_attempt_per_try(
    tmp_path: Path, name: str, fmt: str | None, kind: str
) -> None:
    """The same 34 requests in three formats: 83 attempts, one per upstream try, whether the
    list is one group (`a, b, c`), two groups (`a, b : c`, an error_page redirect to a second
    upstream block) or written right after `$status$body_bytes_sent` (`502157`)."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, LAB / name, log_format=FORMATS[fmt] if fmt else None)
    assert (rep.sources[0].format, rep.sources[0].rows, rep.sources[0].rejected) == (kind, 83, 0)
    assert rows(db, BY_STATUS) == TRIES
    # vLLM answered every try that reached it; nginx's tries to the dead ports are its 502s.
    assert rows(db, "select replica, count(*) from attempts group by 1 order by 1") == [
        ("127.0.0.1:8000", 30),
        ("127.0.0.1:8097", 26),
        ("127.0.0.1:8098", 26),
        (None, 1),
    ]


def test_a_recorded_colon_group_is_three_tries_in_order(tmp_path: Path) -> None:
    """upstreaminfo line 10, as nginx wrote it: `127.0.0.1:8098, 127.0.0.1:8097 :
    127.0.0.1:8000 ... 0.000, 0.000 : 0.060 502, 502 : 503`: three attempts, the last
    vLLM's 503 (its request-count cap), placed back to back from end - $request_time."""
    line = _text("upstreaminfo.log.gz").splitlines()[9]
    assert "127.0.0.1:8098, 127.0.0.1:8097 : 127.0.0.1:8000" in line
    assert "502, 502 : 503 cc46ac6f7be929927bb4f9d0e230dfa2" in line
    db = tmp_path / "w.duckdb"
    ingest(db, LAB / "upstreaminfo.log.gz")
    got = rows(
        db,
        "select attempt, replica, status, outcome, t_sent, t_end from attempts"
        " where call_id = 'cc46ac6f7be929927bb4f9d0e230dfa2' order by attempt",
    )
    assert [g[:4] for g in got] == [
        (0, "127.0.0.1:8098", 502, "error"),
        (1, "127.0.0.1:8097", 502, "error"),
        (2, "127.0.0.1:8000", 503, "error"),
    ]
    end = 1796602545.0  # [07/Dec/2026:00:15:45 +0000]; $request_time 0.062
    assert got[0][4] == pytest.approx(end - 0.062)
    assert got[2][5] - got[2][4] == pytest.approx(0.060)


def test_recorded_request_time_written_right_before_the_request_body(tmp_path: Path) -> None:
    """`$request_time$request_body`: nginx writes the body's `"` as `\\x22` and keeps its
    spaces (`6.767{\\x22model\\x22: \\x22tiny-llama\\x22, ...}`); one attempt a line (no
    $upstream_* in this format), each lasting its $request_time."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, LAB / "adjacent_body.log.gz", log_format=FORMATS["adjacent_body"])
    assert (rep.sources[0].rows, rep.sources[0].rejected) == (34, 0)
    assert rows(db, BY_STATUS) == [
        (200, "delivered", 21),
        (404, "error", 1),
        (502, "error", 3),
        (503, "error", 9),
    ]
    # lines 2-4: [07/Dec/2026:00:15:30 +0000] ... 200 2188 ... 6.767{, 6.836{ and 6.838{
    end = 1796602530.0
    got = rows(db, "select t_end - t_sent from attempts where t_end = ? order by 1", [end])
    assert got == [(pytest.approx(6.767),), (pytest.approx(6.836),), (pytest.approx(6.838),)]


def test_recorded_queue_cap_rejections_at_debug(tmp_path: Path) -> None:
    """vLLM 0.32 with --max-num-queued-reqs 10 --max-num-queued-tokens 1500 at DEBUG: 6
    `Request queue full - rejecting request cmpl-qr-N-0-<hex> (current=10, n=1, max=10).`
    (each followed by the INFO `failed (bad request)` line, counted once) and 3 `Max queued
    tokens reached - rejecting request None (current_tokens=2100, max=1500).`: the token cap
    is checked before the request has an id, and no INFO line follows. 9 rejected events, as
    vLLM's own counter says (vllm:admission_rejections_total 6 and 3) and the client saw (9
    503s)."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, LAB / "vllm.log.gz", year=2026)
    notes = rep.sources[0].notes
    assert any(
        "max_num_queued_reqs 6x, max_num_queued_tokens 3x; 3 logged as `rejecting request None`"
        in n
        for n in notes
    ), notes
    got = rows(db, "select execution_id from events where event = 'rejected' order by 1")
    assert len(got) == 9
    named = sorted(g[0] for g in got if g[0].startswith("cmpl-"))
    assert [n.rsplit("-", 1)[0] for n in named] == [
        f"cmpl-qr-{i}-0" for i in (11, 12, 13, 14, 15, 8)
    ]
    assert sum(1 for g in got if g[0].startswith("rejected-unnamed@line")) == 3
    # Every one arrived before it was refused; the 27 requests vLLM admitted all arrived.
    assert rows(db, "select count(*) from events where event = 'arrived'") == [(30,)]
    scrape = ingest(tmp_path / "m.duckdb", LAB / "metrics-1796602550.prom.gz")
    assert scrape.sources[0].rejected == 0
    assert rows(
        tmp_path / "m.duckdb",
        "select labels['reason'], value from metric_samples"
        " where name = 'vllm:admission_rejections_total' order by 1",
    ) == [("max_num_queued_reqs", 6.0), ("max_num_queued_tokens", 3.0)]


def test_recorded_stats_lines_with_a_forced_preemption(tmp_path: Path) -> None:
    """12 KV blocks of 128 tokens for 8 requests of 200 + 300 tokens: vLLM preempted 5 times
    (vllm:num_preemptions_total 5 in the scrape; Running 8 -> 5, Waiting 0 -> 3 in the stats
    lines) yet printed no `Preemptions:` field: 0.32's LoggingStatLogger.log() zeroes the
    interval's counts (`_reset`) before it tests `num_preemptions > 0`. With
    VLLM_COMPUTE_NANS_IN_LOGITS=1 every line ends with `Corrupted: 0 reqs` (zeroed the same
    way): kept out with a note. 13 stats lines at INFO (VLLM_LOG_STATS_INTERVAL=2), 4 idle ones
    at DEBUG (vLLM logs an idle interval's line at DEBUG): 17 rows of samples."""
    text = _text("vllm.log.gz")
    assert "Preemptions" not in text
    db = tmp_path / "w.duckdb"
    rep = ingest(db, LAB / "vllm.log.gz", year=2026)
    notes = rep.sources[0].notes
    assert "stats fields not stored: Corrupted (17x)" in notes, notes
    got = rows(
        db,
        "select t, value from metric_samples where name = 'vllm:num_requests_waiting' order by t",
    )
    assert len(got) == 17
    assert max(v for _, v in got) == 5.0
    scrape = tmp_path / "m.duckdb"
    ingest(scrape, LAB / "metrics-1796602550.prom.gz")
    assert rows(
        scrape,
        "select name, value from metric_samples where name in"
        " ('vllm:num_preemptions_total', 'vllm:request_num_preemptions_sum') order by 1",
    ) == [("vllm:num_preemptions_total", 5.0), ("vllm:request_num_preemptions_sum", 5.0)]


def test_recorded_aggregated_line_of_two_data_parallel_engines(tmp_path: Path) -> None:
    """vLLM 0.32 with `--data-parallel-size 2 --aggregate-engine-logging` on the lab
    (run_vllm_dp2.sh; up after about 6 min on the shared machine), 6 requests: 3 lines `2 Engines
    Aggregated: ...` (Running: 6 reqs, then 0), stored without an engine label, 6 samples each,
    noted as sums of 2 engines."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, LAB / "vllm_dp2_aggregated.log.gz", year=2026)
    assert (
        "3 stats lines sum 2 engines ('2 Engines Aggregated:'): stored without an engine label"
        in (rep.sources[0].notes)
    )
    assert rows(db, "select distinct labels from metric_samples") == [({},)]
    assert rows(
        db,
        "select t, value from metric_samples where name = 'vllm:num_requests_running' order by t",
    ) == [(1796602922.0, 6.0), (1796602924.0, 0.0), (1796602926.0, 0.0)]
    assert rows(db, "select count(*) from events where event = 'arrived'") == [(6,)]


def test_recorded_json_formatter_log_gives_the_year_and_milliseconds(tmp_path: Path) -> None:
    """vLLM 0.32's `--logging-config.formatter json` (run_vllm_json.sh): one JSON record a
    line, `"asctime": "2026-12-07 00:25:36,532"` the only form of vLLM's own log found with
    a year. Recognised as a vLLM log without --kind, read as the text lines are, the year
    taken from the file (no --year, no modification time), times to the millisecond."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, LAB / "vllm_json_formatter.log.gz")
    assert (rep.sources[0].format, rep.sources[0].rejected) == ("vllm_log", 0)
    assert (
        "vLLM's MM-DD timestamps read in 2026 from the file (2026-12-07); pass --year to set it"
        in (rep.sources[0].notes)
    )
    t0 = 1796603136.0  # 2026-12-07T00:25:36Z
    assert rows(db, "select execution_id, event, t - ? from events order by t", [t0]) == [
        ("cmpl-js-0-0-aad980cf", "arrived", pytest.approx(0.532)),
        ("cmpl-js-1-0-bb5ec6fd", "arrived", pytest.approx(0.540)),
        ("cmpl-js-2-0-ba5544d0", "arrived", pytest.approx(0.541)),
    ]
    assert rows(
        db,
        "select t - ?, value from metric_samples"
        " where name = 'vllm:avg_generation_throughput_toks_per_s' order by t",
        [t0],
    ) == [(pytest.approx(2.358), 90.0), (pytest.approx(4.359), 0.0)]


def test_recorded_upstream_tries_join_the_vllm_execution_they_reached(tmp_path: Path) -> None:
    """nginx passes one X-Request-Id to every try of a request; only the try to vLLM's port
    (127.0.0.1:8000, the last of each line: nginx moves on from a refused connection) reached
    vLLM. The 27 executions vLLM logged (21 answered, 6 refused by the request-count cap; the 3
    token-cap refusals have no id) join those tries, none of the 52 tries to the dead ports
    (before the fix, the dead first try of each line took the execution: 24 of 27)."""
    db = tmp_path / "w.duckdb"
    ingest(db, LAB / "ingress_nginx.json.gz", LAB / "vllm.log.gz", year=2026)
    assert rows(
        db,
        "select replica, status, count(*) from attempts"
        " where execution_id in (select execution_id from events) group by 1, 2 order by 1, 2",
    ) == [("127.0.0.1:8000", 200, 21), ("127.0.0.1:8000", 503, 6)]
