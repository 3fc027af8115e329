"""Workloads: synthetic defaults, and real traces (Azure CSV, Mooncake JSONL, proxy log)."""

from __future__ import annotations

import itertools
import json
import math
import random
import statistics
from pathlib import Path

import polars as pl
import pytest

from relplan.errors import InputError
from relplan.sim.run import simulate
from relplan.sim.scenario import Scenario, WorkloadSpec
from relplan.sim.workloads import draw_lengths, make_calls, read_trace
from tests.helpers.sim_runs import simulated


def test_synthetic_lengths_follow_the_documented_defaults() -> None:
    """Prompts Normal(12000, 1200) (at least prefix + 1); outputs lognormal, median 300,
    sigma 0.44 (mean ~330), capped at max_tokens."""
    prompts, outs = draw_lengths(WorkloadSpec(), 20000, random.Random(7))
    assert statistics.mean(prompts) == pytest.approx(12000, rel=0.01)
    assert statistics.stdev(prompts) == pytest.approx(1200, rel=0.05)
    assert min(prompts) >= 2001
    assert statistics.median(outs) == pytest.approx(300, rel=0.03)
    assert statistics.mean(outs) == pytest.approx(300 * math.exp(0.44**2 / 2), rel=0.03)
    assert max(outs) <= 2048


def test_same_seed_same_calls_across_conditions() -> None:
    """Arrivals and lengths come from their own streams: changing the proxy or client does
    not change the calls a seed produces."""
    a = Scenario(name="a")
    b = Scenario.model_validate(
        {"name": "b", "proxy": {"coalesce": True}, "client": {"max_retries": 0}}
    )
    assert make_calls(a, 2.8, 5) == make_calls(b, 2.8, 5)
    assert make_calls(a, 2.8, 5) != make_calls(a, 2.8, 6)


def test_azure_trace(tmp_path: Path) -> None:
    f = tmp_path / "azure.csv"
    f.write_text(
        "TIMESTAMP,ContextTokens,GeneratedTokens\n"
        "2023-11-16 18:15:46.6805900,4808,10\n"
        "2023-11-16 18:15:50.9951690,3180,8\n"
        "2023-11-16 18:15:51.0000000,110,27\n"
    )
    recs = read_trace(str(f))
    assert [(round(r[0] - recs[0][0], 3), r[1], r[2]) for r in recs] == [
        (0.0, 4808, 10),
        (4.315, 3180, 8),
        (4.319, 110, 27),
    ]


def test_burstgpt_trace(tmp_path: Path) -> None:
    f = tmp_path / "burst.csv"
    f.write_text(
        "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
        "5,ChatGPT,472,18,490,Conversation log\n"
        "45,GPT-4,1087,0,1087,API log\n"
    )
    assert read_trace(str(f)) == [(5.0, 472, 18, None), (45.0, 1087, 0, None)]


def test_mooncake_trace(tmp_path: Path) -> None:
    f = tmp_path / "mooncake.jsonl"
    f.write_text(
        '{"timestamp": 0, "input_length": 6755, "output_length": 500, "hash_ids": [0, 1]}\n'
        '{"timestamp": 27482, "input_length": 7319, "output_length": 490, "hash_ids": [2]}\n'
    )
    assert read_trace(str(f)) == [(0.0, 6755, 500, None), (27.482, 7319, 490, None)]


def test_a_trace_read_again_is_the_files_current_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """read_trace keeps what it parsed by the file's bytes (the what-if replays one trace once
    per control and seed): the same bytes are not parsed again, changed bytes are, and a
    caller's changes to the list it got do not reach the next caller."""
    from relplan.sim import workloads

    f = tmp_path / "mooncake.jsonl"
    f.write_text('{"timestamp": 0, "input_length": 10, "output_length": 5}\n')
    first = read_trace(str(f))
    first.append(workloads.TraceRecord(9.0, 1, 1, None))
    parsed: list[str] = []
    real = workloads._read_trace

    def counting(path: str, fmt: str) -> list[workloads.TraceRecord]:
        parsed.append(path)
        return real(path, fmt)

    monkeypatch.setattr(workloads, "_read_trace", counting)
    assert read_trace(str(f)) == [(0.0, 10, 5, None)]
    assert parsed == []  # the same bytes: not parsed again
    f.write_text('{"timestamp": 0, "input_length": 11, "output_length": 5}\n')
    assert read_trace(str(f)) == [(0.0, 11, 5, None)]
    assert parsed == [str(f)]
    monkeypatch.setenv("RELPLAN_TRACE_CACHE", "0")
    assert read_trace(str(f)) == [(0.0, 11, 5, None)]
    assert parsed == [str(f), str(f)]  # the cache off: parsed each time


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "a.csv",
            "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,12,3\nyesterday,1,1\n",
            "a.csv:3: TIMESTAMP 'yesterday' is not a date-time",
        ),
        (
            "b.csv",
            "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,-4,3\n",
            "b.csv:2: ContextTokens must be a whole number of tokens >= 0",
        ),
        ("c.csv", "TIMESTAMP,Tokens\n", "cannot tell the trace format"),
        (
            "d.jsonl",
            '{"timestamp": 0, "input_length": 5}\n',
            "d.jsonl:1: missing field 'output_length'",
        ),
        (
            "e.jsonl",
            '{"timestamp": 0, "input_length": 5, "output_length": 1}\n{oops\n',
            "e.jsonl:2: not valid JSON",
        ),
    ],
)
def test_bad_trace_records_name_file_and_line(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(InputError) as err:
        read_trace(str(f))
    assert message in str(err.value)


def test_trace_arrivals_drive_a_run(tmp_path: Path) -> None:
    """A Mooncake trace's arrivals (time-scaled) and lengths replace the Poisson workload."""
    f = tmp_path / "trace.jsonl"
    lines = [
        json.dumps({"timestamp": i * 2000, "input_length": 3000 + i, "output_length": 50})
        for i in range(30)
    ]
    f.write_text("\n".join(lines) + "\n")
    sc = tmp_path / "trace.toml"
    sc.write_text(
        'name = "trace"\ncapacity_calls_per_s = 2.8\n'
        "[workload]\n"
        'phases = [{ name = "base", seconds = 20, rate_x = 0.5 },\n'
        '  { name = "hold", seconds = 20, rate_x = 0.5 }]\n'
        f'trace = {{ path = "{f}", time_scale = 2.0 }}\n'
    )
    simulate(str(sc), tmp_path / "out")
    proxy = pl.read_parquet(tmp_path / "out" / "proxy.parquet").filter(pl.col("attempt") == 0)
    # 30 records 2 s apart, replayed twice as fast: one call a second, 40 s of phases
    assert proxy.height == 30
    assert proxy["prompt_tokens"].to_list() == [3000 + i for i in range(30)]
    t = proxy["t_planned"].to_list()
    assert [round(b - a, 6) for a, b in itertools.pairwise(t)] == [1.0] * 29


@pytest.mark.slow
def test_proxy_log_as_a_workload() -> None:
    """A proxy log's first attempts give arrivals and prompts (outputs are drawn)."""
    # simulate("pulse1.5-retry", FOLDER, seed=2), once per test run (tests/test_sim_scenarios.py
    # reads the same run), read-only
    log = simulated("pulse1.5-retry", 2)[0] / "proxy.parquet"
    recs = read_trace(str(log))
    src = pl.read_parquet(log).filter(pl.col("attempt") == 0).sort("t_planned")
    assert len(recs) == src.height
    assert [r[1] for r in recs] == src["prompt_tokens"].to_list()
    assert all(r[2] is None and r[3] == 2048 for r in recs)


def _mooncake(tmp_path: Path, n: int = 30, gap_ms: int = 1000) -> Path:
    f = tmp_path / "trace.jsonl"
    lines = [
        json.dumps({"timestamp": i * gap_ms, "input_length": 3000, "output_length": 20})
        for i in range(n)
    ]
    f.write_text("\n".join(lines) + "\n")
    return f


def test_a_trace_workload_has_no_shared_prefix_unless_the_scenario_gives_one(
    tmp_path: Path,
) -> None:
    trace = {"path": str(_mooncake(tmp_path))}
    assert WorkloadSpec.model_validate({"trace": trace}).prefix_tokens == 0
    assert WorkloadSpec.model_validate({"trace": trace, "prefix_tokens": 512}).prefix_tokens == 512
    assert WorkloadSpec().prefix_tokens == 2000  # the synthetic reference workload keeps it


def test_a_trace_run_without_a_capacity_is_refused_naming_calibrate(tmp_path: Path) -> None:
    sc = tmp_path / "t.toml"
    sc.write_text(
        'name = "t"\n[workload]\nphases = [{ name = "all", seconds = 20, rate_per_s = 0 }]\n'
        f'trace = {{ path = "{_mooncake(tmp_path)}" }}\n'
    )
    with pytest.raises(InputError, match=r"this trace's length mix.*relplan simulate calibrate"):
        simulate(str(sc), tmp_path / "out")


def test_calibrating_a_trace_scenario_draws_the_trace_lengths_on_the_ramp(tmp_path: Path) -> None:
    from relplan.sim.calibrate import ramp_scenario

    scn = Scenario.model_validate(
        {"name": "t", "workload": {"trace": {"path": str(_mooncake(tmp_path))}}}
    )
    ramp = ramp_scenario(scn, 1.0, 0.5, 10.0, 3)
    assert ramp.workload.trace is not None
    assert ramp.workload.trace.use == "lengths"
    assert [p.rate_per_s for p in ramp.workload.phases] == [1.0, 1.5, 2.0]


def test_a_trace_below_capacity_gets_no_verdict_from_its_phase_names(tmp_path: Path) -> None:
    """Phases named base, pulse, hold, but the trace arrives at 1 call/s against C^ = 2.8:
    there is no overload, so no recovery verdict, and run.json names no overload phase."""
    sc = tmp_path / "t.toml"
    sc.write_text(
        'name = "t"\ncapacity_calls_per_s = 2.8\n[workload]\n'
        'phases = [{ name = "base", seconds = 10, rate_x = 0.5 },\n'
        '  { name = "pulse", seconds = 10, rate_x = 2.7 },\n'
        '  { name = "hold", seconds = 10, rate_x = 0.5 }]\n'
        f'trace = {{ path = "{_mooncake(tmp_path)}" }}\n'
    )
    s = simulate(str(sc), tmp_path / "out")
    assert s.verdict == "no overload"
    assert s.recovered_after_pulse_s is None
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert run["overload_phase"] is None
    assert run["meta"]["trace_overload"] is False


def test_calibration_says_what_start_to_try_when_no_stage_grows() -> None:
    from relplan.sim.calibrate import calibrate_seed
    from tests.test_sim_proxy import PROFILE

    scn = Scenario.model_validate({"name": "c", "workload": {"prefix_tokens": 0}})
    r = calibrate_seed(scn, PROFILE, 1, 0.01, 0.01, 20.0, 2)
    assert r.capacity_calls_per_s is None
    assert r.note == "no stage grew up to 0.02 calls/s; try --start 0.03"
