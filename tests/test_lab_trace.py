"""A traced lab run (tests/data/lab/traced-no-retries, README there): vLLM's iteration-detail
lines and the relplan plugin's trace, written by the same engine in the same run, give the
same steps; and the trace alone is enough for `ingest` and `analyze`.

Both come from the same call: vLLM's LoggingStatLogger prints the line and the plugin writes
its record from the same SchedulerStats.iteration_details (vllm/v1/metrics/loggers.py, 0.32),
so the counts must agree exactly; the tolerances below are only the log's rounding (KV cache
usage to 0.1 %, elapsed time to 0.01 ms, the time to the whole second).
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from relplan.cli import app
from relplan.ingest.vllm.stats import parse_iteration
from tests.helpers.fast_cli import CliRunner

RUN = Path(__file__).parent / "data" / "lab" / "traced-no-retries"
OP = RUN / "operator"
# `(APIServer pid=N) INFO 12-04 02:12:18 [loggers.py:199] Engine 000: Iteration(0): ...`
LINE = re.compile(r"^\(APIServer pid=\d+\) INFO (\d\d-\d\d \d\d:\d\d:\d\d) \[[^]]+\] (.*)$")
COUNTS = re.compile(r"(\d+) context tokens, \d+ generation requests, (\d+) generation tokens")
YEAR = 2026  # the run's year (README); vLLM's log lines carry none


def _lines(name: str) -> list[str]:
    return gzip.decompress((OP / name).read_bytes()).decode().splitlines()


def _trace() -> list[dict[str, Any]]:
    return [json.loads(x) for x in _lines("trace.jsonl.gz")]


def _log_iterations() -> dict[int, tuple[float, str]]:
    """Iteration(N) -> (the line's time, UTC epoch; its message), dummy iterations left out."""
    out: dict[int, tuple[float, str]] = {}
    for line in _lines("vllm.log.gz"):
        m = LINE.match(line)
        if m is None or "Iteration(" not in m.group(2):
            continue
        it = parse_iteration(m.group(2))
        assert it is not None, line
        if it.dummy:
            continue
        stamp = dt.datetime.strptime(f"{YEAR}-{m.group(1)}", "%Y-%m-%d %H:%M:%S")
        out[it.step] = (stamp.replace(tzinfo=dt.timezone.utc).timestamp(), m.group(2))
    return out


def test_iteration_lines_and_the_plugin_trace_give_the_same_steps() -> None:
    log = _log_iterations()
    stats = [r for r in _trace() if r["type"] == "stats"]
    by_iteration = {r["vllm_iteration"]: r for r in stats}
    # count: one stats record per iteration line, the same iterations
    assert len(log) > 500
    assert len(stats) == len(log)
    assert set(by_iteration) == set(log)
    assert [r["step"] for r in stats] == list(range(1, len(stats) + 1))
    gaps = []
    for n, (t_line, msg) in log.items():
        r = by_iteration[n]
        it = parse_iteration(msg)
        assert it is not None
        counts = COUNTS.search(msg)
        assert counts is not None, msg
        # tokens: exactly, split into prefill (context) and decode (generation)
        assert (r["prompt_computed"], r["decode_tokens"]) == (
            int(counts.group(1)),
            int(counts.group(2)),
        ), n
        assert r["num_batched_tokens"] == it.batched_tokens
        assert it.kv_usage is not None
        assert it.elapsed_s is not None
        assert r["kv_usage"] == pytest.approx(it.kv_usage, abs=0.0005)  # printed to 0.1 %
        assert r["elapsed_ms"] == pytest.approx(it.elapsed_s * 1000, abs=0.005)
        gaps.append(r["t_issue"] - t_line)
    # time: the line is printed in the same call, its time cut to the second
    assert min(gaps) >= 0.0
    assert max(gaps) < 1.0
    total = sum(r["prompt_computed"] + r["decode_tokens"] for r in stats)
    assert total == sum(it.batched_tokens or 0 for it in map(parse_iteration, _msgs(log)))


def _msgs(log: dict[int, tuple[float, str]]) -> list[str]:
    return [msg for _t, msg in log.values()]


def test_the_plugin_saw_every_request_the_client_sent() -> None:
    attempts = [json.loads(x) for x in gzip.decompress((RUN / "client" / "attempts.jsonl.gz").read_bytes()).splitlines()]  # fmt: skip
    events = [r for r in _trace() if r["type"] == "event"]
    arrived = {r["execution_id"] for r in events if r["event"] == "arrived"}
    finished = {r["execution_id"] for r in events if r["event"] == "finished"}
    # the drill's probe (X-Request-Id drill-probe) and every attempt; cancellation off at
    # nginx, so vLLM finished them all
    assert arrived == finished
    assert arrived == {"cmpl-drill-probe-0"} | {
        f"cmpl-{a['call_id']}-{a['attempt']}-0" for a in attempts
    }


def _cli(args: list[str]) -> Any:
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    return out


@pytest.mark.slow
def test_the_trace_carries_preemptions_and_prefix_cache_per_iteration() -> None:
    """Each `stats` record carries the iteration's preemptions and prefix-cache queries and
    hits (SchedulerStats.prefix_cache_stats, IterationStats.num_preempted_reqs), and they add
    up with the requests' own figures: the queries are the arrived prompts' tokens (64,001), the
    hits the finished requests' cached tokens (48,768, 76 %: the `<unk>` prompts, README), and
    queries less hits are the prefill tokens the iterations computed (15,233). Nothing was
    preempted (KV usage stayed under 5 %). `relplan ingest` stores them
    (test_ingest_keeps_every_steps_figures_and_each_requests_end; docs/vllm-plugin.md, What
    reaches the workspace)."""
    rows = _trace()
    stats = [r for r in rows if r["type"] == "stats"]
    events = [r for r in rows if r["type"] == "event"]
    queries = sum(r["prefix_queries"] for r in stats)
    hits = sum(r["prefix_hits"] for r in stats)
    assert queries == sum(r["prompt_tokens"] for r in events if r["event"] == "arrived") == 64_001
    ended = [r for r in events if r["event"] in ("finished", "aborted")]
    assert hits == sum(r["cached_tokens"] for r in ended) == 48_768
    assert queries - hits == sum(r["prompt_computed"] for r in stats)
    assert sum(r["num_preempted"] for r in stats) == sum(r["preemptions"] for r in ended) == 0
    assert max(r["kv_usage"] for r in stats) < 0.05


def test_ingest_and_analyze_use_the_trace_with_no_other_input(tmp_path: Path) -> None:
    trace = shutil.copy(OP / "trace.jsonl.gz", tmp_path / "trace.jsonl.gz")
    db = str(tmp_path / "ws.duckdb")
    _cli(["ingest", str(trace), "--db", db])
    result = json.loads(_cli(["analyze", "--db", db, "--json"]).stdout)
    events = [r for r in _trace() if r["type"] == "event"]
    n = sum(1 for r in events if r["event"] == "arrived")
    amp = next(w for w in result["amplification"]["windows"] if w["window"] == "run")
    assert (amp["executions_accepted"], amp["executions_completed"]) == (n, n)
    assert amp["accepted_source"] == "engine trace"
    little = next(w for w in result["littles_law"]["windows"] if w["window"] == "run")
    assert little["source"] == "engine trace"
    assert little["arrivals"] == n
    assert little["consistency"] == pytest.approx(1.0, abs=0.05)


@pytest.mark.slow
def test_the_trace_and_nginx_log_join_through_the_request_id(tmp_path: Path) -> None:
    files = [shutil.copy(OP / f, tmp_path / f) for f in ("trace.jsonl.gz", "access.json.gz")]
    db = str(tmp_path / "ws.duckdb")
    _cli(["ingest", *map(str, files), "--db", db,
          "--call-key", "http_x_relplan_call", "--attempt-field", "http_x_relplan_attempt"])  # fmt: skip
    import duckdb

    con = duckdb.connect(db, read_only=True)
    try:
        joined, total = con.execute(
            "select count(*) filter (where execution_id in"
            " (select execution_id from events where event = 'arrived')), count(*)"
            " from attempts"
        ).fetchone() or (0, 0)
    finally:
        con.close()
    attempts = gzip.decompress((RUN / "client" / "attempts.jsonl.gz").read_bytes()).splitlines()
    # every completion nginx logged (the drill's attempts and its probe) has its execution;
    # the one line left is the drill's GET /v1/models, which reaches no engine
    assert joined == len(attempts) + 1
    assert total == joined + 1


def _ingested(tmp_path: Path, name: str, *extra: str) -> str:
    path = shutil.copy(OP / name, tmp_path / name)
    db = str(tmp_path / f"{name.split('.')[0]}.duckdb")
    _cli(["ingest", str(path), "--db", db, *extra])
    return db


def _stored(db: str, query: str) -> list[tuple[Any, ...]]:
    import duckdb

    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


STEP_FIGURES = (
    "step",
    "t_issue",
    "num_running",
    "num_waiting",
    "num_batched_tokens",
    "kv_usage",
    "prompt_computed",
    "decode_tokens",
    "elapsed_ms",
    "num_preempted",
    "prefix_queries",
    "prefix_hits",
)
END_FIELDS = ("finish_reason", "output_tokens", "cached_tokens", "preemptions")


@pytest.mark.slow
def test_ingest_keeps_every_steps_figures_and_each_requests_end(tmp_path: Path) -> None:
    """The trace alone into a workspace: each of the 1,047 `stats` records is one engine_stats
    row with the record's own values (prefill/decode split, elapsed time, preemptions,
    prefix-cache queries and hits among them), each request's end keeps its finish fields,
    each arrival its max_tokens; only vllm_iteration is left out, and said so."""
    db = _ingested(tmp_path, "trace.jsonl.gz")
    trace = _trace()
    stats = [r for r in trace if r["type"] == "stats"]
    cols = ", ".join(STEP_FIGURES)
    stored = _stored(db, f"select {cols} from engine_stats order by step")
    assert len(stored) == len(stats) == 1047
    assert stored == [tuple(r[c] for c in STEP_FIGURES) for r in stats]
    totals = _stored(
        db,
        "select sum(prompt_computed), sum(decode_tokens), sum(num_preempted),"
        " sum(prefix_queries), sum(prefix_hits) from engine_stats",
    )
    assert totals == [(15_233, 3_968, 0, 64_001, 48_768)]
    ends = [r for r in trace if r.get("event") in ("finished", "aborted")]
    got = _stored(
        db,
        f"select execution_id, {', '.join(END_FIELDS)} from events"
        " where event in ('finished', 'aborted') order by execution_id",
    )
    want = sorted((r["execution_id"], *(r[c] for c in END_FIELDS)) for r in ends)
    assert got == want
    assert len(got) == 129
    max_tokens = _stored(
        db, "select execution_id, max_tokens from events where event = 'arrived' order by 1"
    )
    assert max_tokens == sorted(
        (r["execution_id"], r["max_tokens"]) for r in trace if r.get("event") == "arrived"
    )
    ignored = _stored(db, "select unknown_columns from sources")
    assert ignored == [(["vllm_iteration"],)]


@pytest.mark.slow
def test_the_engine_fit_from_the_trace_alone_is_the_fit_from_the_iteration_lines(
    tmp_path: Path,
) -> None:
    """`relplan simulate fit-engine` (and whatif's fit, relplan/sim/costfit.py) on the trace
    alone fits the iterations' own elapsed times and prefill/decode split, as from vLLM's
    iteration lines of the same run: the same 1,047 steps, coefficients within the log's
    0.01 ms rounding, the same error per step (median 24.2 %, p90 57.1 %). Without elapsed_ms
    (a trace as ingest kept it before schema version 3) the fit fell back to the gaps between
    stats records: median error 45.0 %, p90 83.8 %."""
    import duckdb

    from relplan.sim.costfit import fit_engine

    trace_db = _ingested(tmp_path, "trace.jsonl.gz")
    log_db = _ingested(tmp_path, "vllm.log.gz", "--year", str(YEAR))
    fits = {}
    for name, db in (("trace", trace_db), ("log", log_db)):
        con = duckdb.connect(db, read_only=True)
        try:
            fits[name] = fit_engine(con)
        finally:
            con.close()
    trace, log = fits["trace"], fits["log"]
    assert (trace.source, log.source) == ("engine trace", "iteration lines")
    assert trace.steps_used == log.steps_used == 1047
    for ct, cl in zip(trace.coefficients, log.coefficients, strict=True):
        assert ct.name == cl.name
        assert ct.constrained
        assert cl.constrained
        assert ct.value_ms == pytest.approx(cl.value_ms, rel=1e-3)
    assert trace.median_abs_error_pct == pytest.approx(log.median_abs_error_pct, abs=0.1)
    assert trace.p90_abs_error_pct == pytest.approx(log.p90_abs_error_pct, abs=0.1)
    assert trace.median_abs_error_pct == pytest.approx(24.2, abs=0.05)
    assert (trace.max_batch_seen, trace.max_tokens_seen) == (35, 718)
    con = duckdb.connect(trace_db)
    try:
        con.execute("update engine_stats set elapsed_ms = null")
        gaps = fit_engine(con)
    finally:
        con.close()
    assert gaps.source == "engine_stats"
    assert gaps.median_abs_error_pct is not None
    assert trace.median_abs_error_pct is not None
    assert gaps.median_abs_error_pct == pytest.approx(45.0, abs=0.05)
    assert trace.median_abs_error_pct < gaps.median_abs_error_pct


@pytest.mark.slow
def test_whatif_fits_lengths_prefix_and_engine_from_the_trace_alone(tmp_path: Path) -> None:
    """`relplan whatif fit` on the trace alone: every call's output length is its finished
    event's output_tokens (the drill's 32, the probe's 1; no draw from an assumed lognormal
    of median 300), the shared prefix is the 384 tokens cached for 127 of 129 requests
    (cached_tokens), and the step costs are fitted from the trace's own elapsed times."""
    db = _ingested(tmp_path, "trace.jsonl.gz")
    out = tmp_path / "fit" / "scenario.toml"
    fit = json.loads(_cli(["whatif", "fit", "--db", db, "--out", str(out), "--json"]).stdout)
    by = {(p["part"], p["value"].split(" ")[0]): p for p in fit["fit"]}
    assert by[("lengths", "129")]["value"] == "129 prompt lengths; 129 output lengths"
    assert by[("lengths", "shared")]["value"] == "shared prefix 384 tokens"
    assert "127 of 129" in by[("lengths", "shared")]["source"]
    step_costs = by[("engine", "step")]
    assert step_costs["source"].startswith("fitted to 1047 steps of the engine trace")
    assert "median 24 %" in step_costs["source"]
    calls = [json.loads(x) for x in Path(fit["calls"]).read_text().splitlines()]
    ends = {r["execution_id"]: r["output_tokens"] for r in _trace() if r.get("event") == "finished"}
    assert sorted(c["output_length"] for c in calls) == sorted(ends.values())
    assert sorted(ends.values()) == [1] + [32] * 128
