"""Seeded runs of the built-in scenarios: the published shape emerges, outputs are
deterministic and follow the canonical formats, and promtool accepts the metrics."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import duckdb
import polars as pl
import pytest

from relplan import sql
from relplan.ingest.columns import ENGINE_COLUMNS, PROXY_COLUMNS
from relplan.models import RunManifest
from relplan.sim.run import simulate
from relplan.sim.scenario import builtin_names
from relplan.sim.summary import SimSummary, load_run
from tests.helpers.sim_runs import simulated

EXPECTED_BUILTINS = {
    "pulse-noretry",
    "pulse-noretry-cancel",
    "pulse-retry",
    "pulse-retry-cancel",
    "pulse-retry-cancel-2048",
    "pulse-retry-budget",
    "pulse-retry-coalesce",
    "pulse-retry-coalesce-cancel",
    "pulse-retry-enginecap",
    "pulse-retry-proxycap-newest",
    "pulse1.5-retry",
    "ramp",
}


def run(name: str, seed: int, tmp: Path) -> SimSummary:
    """The summary of `simulate(name, FOLDER, seed=seed)`, simulated once per test run
    (tests/helpers/sim_runs.py: tests/test_sim_snapshots.py reads the same seed-1 runs)."""
    return simulated(name, seed)[1]


def test_builtin_scenarios_have_exactly_the_issues_names() -> None:
    assert set(builtin_names()) == EXPECTED_BUILTINS


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_retries_without_control_never_recover_after_the_pulse(tmp_path: Path, seed: int) -> None:
    s = run("pulse-retry", seed, tmp_path)
    assert s.verdict == "metastable"
    assert s.recovered_after_pulse_s is None
    assert s.phases["hold"].on_time_share is not None
    assert s.phases["hold"].on_time_share < 0.1
    # well under capacity offered, far above it accepted: retries keep the engine busy
    assert s.after_overload.arrival_rate_x_capacity is not None
    assert s.after_overload.arrival_rate_x_capacity < 0.7
    assert s.phases["hold"].accepted_rate_x_capacity is not None
    assert s.phases["hold"].accepted_rate_x_capacity > 1.5


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_cancellation_alone_does_not_fix_it(tmp_path: Path, seed: int) -> None:
    s = run("pulse-retry-cancel", seed, tmp_path)
    assert s.verdict == "metastable"
    assert s.littles_law.deadline_saturation is not None
    assert s.littles_law.deadline_saturation > 0.8  # the queue holds a deadline's worth
    assert s.prefill.aborted_share is not None
    assert s.prefill.aborted_share > 0.5
    assert s.counter_shortfall_hold is not None
    assert s.counter_shortfall_hold > 0.3


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_without_retries_it_recovers_once_the_backlog_drains(tmp_path: Path, seed: int) -> None:
    s = run("pulse-noretry", seed, tmp_path)
    assert s.verdict == "recovered"
    assert s.recovered_after_pulse_s is not None
    # the backlog (~1.7 x 107 s of engine work) takes minutes to drain at 0.4 C^ spare
    assert 120 <= s.recovered_after_pulse_s <= 600
    assert s.retry_share_of_executions == 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_coalescing_with_deferred_cancellation_recovers_and_delivers_every_pulse_call(
    tmp_path: Path, seed: int
) -> None:
    s = run("pulse-retry-coalesce", seed, tmp_path)
    assert s.verdict == "recovered"
    assert s.phases["pulse"].delivered_share == 1.0
    assert s.phases["hold"].delivered_share == 1.0
    assert s.retry_share_of_executions is not None
    assert s.retry_share_of_executions < 0.05


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_a_short_pulse_recovers_even_with_retries(tmp_path: Path, seed: int) -> None:
    s = run("pulse1.5-retry", seed, tmp_path)
    assert s.verdict == "recovered"
    assert s.recovered_after_pulse_s is not None
    assert s.recovered_after_pulse_s <= 60


@pytest.mark.slow
def test_coalescing_with_immediate_cancellation_does_not_help(tmp_path: Path) -> None:
    s = run("pulse-retry-coalesce-cancel", 1, tmp_path)
    assert s.verdict == "metastable"


@pytest.mark.slow
def test_every_builtin_pulse_scenario_runs_and_summarizes(tmp_path: Path) -> None:
    for name in sorted(EXPECTED_BUILTINS - {"ramp"}):
        s = run(name, 1, tmp_path)  # the seed-1 runs tests/test_sim_snapshots.py reads
        assert s.verdict in {"recovered", "metastable", "draining", "overloaded"}, name
        assert set(s.phases) == {"base", "pulse", "hold"}


@pytest.mark.slow
def test_same_seed_gives_byte_identical_files(tmp_path: Path) -> None:
    # b and c: the runs simulated once per test run (seeds 1 and 2, read by the tests above)
    a = simulate("pulse-retry-coalesce", tmp_path / "a", seed=1)
    b_dir, b = simulated("pulse-retry-coalesce", 1)
    for f in ("proxy.parquet", "engine.parquet", "metrics.om.txt", "run.json"):
        assert (tmp_path / "a" / f).read_bytes() == (b_dir / f).read_bytes(), f
    assert a == b
    c_dir, c = simulated("pulse-retry-coalesce", 2)
    assert (c_dir / "proxy.parquet").read_bytes() != (tmp_path / "a" / "proxy.parquet").read_bytes()
    assert c != a


@pytest.fixture
def reference_run(simulated_run: Callable[[str, int], Path]) -> Path:
    return simulated_run("pulse-retry-cancel", 1)


def test_outputs_follow_the_canonical_contract(reference_run: Path) -> None:
    proxy = pl.read_parquet(reference_run / "proxy.parquet")
    assert tuple(proxy.columns) == PROXY_COLUMNS
    assert proxy["t_sent"].dtype == pl.Float64
    assert (proxy["t_end"] >= proxy["t_sent"]).all()
    assert set(proxy["outcome"].unique()) <= {"delivered", "client_gone", "shed", "error"}
    assert proxy.filter(pl.col("outcome") == "shed")["execution_id"].null_count() == len(
        proxy.filter(pl.col("outcome") == "shed")
    )
    assert proxy.group_by("call_id").agg(pl.col("attempt").n_unique() == pl.len())["attempt"].all()

    eng = pl.read_parquet(reference_run / "engine.parquet")
    assert tuple(eng.columns) == ENGINE_COLUMNS
    assert set(eng["type"].unique()) == {"event", "step", "stats"}
    steps = eng.filter(pl.col("type") == "step")
    assert steps.select(pl.struct("step", "execution_id").is_unique().all()).item()
    assert (steps["t_done"] > steps["t_issue"]).all()
    events = eng.filter(pl.col("type") == "event")
    assert set(events["event"].unique()) <= {
        "arrived",
        "scheduled",
        "first_token",
        "preempted",
        "aborted",
        "finished",
        "rejected",
    }
    assert events.filter(pl.col("event") == "arrived")["prompt_tokens"].null_count() == 0
    # every execution the proxy created reached the engine
    created = set(proxy.filter(~pl.col("attached"))["execution_id"].drop_nulls())
    assert created == set(events.filter(pl.col("event") == "arrived")["execution_id"])
    # output tokens: a finished execution's decode tokens over its steps equal its output
    fin = events.filter(pl.col("event") == "finished")["execution_id"].head(20).to_list()
    toks = (
        steps.filter(pl.col("execution_id").is_in(fin))
        .group_by("execution_id")
        .agg(pl.col("decode_tokens").sum())
    )
    assert (toks["decode_tokens"] >= 1).all()

    man = RunManifest.model_validate_json((reference_run / "run.json").read_text())
    assert man.overload_phase == "pulse"
    assert [(p.name, p.start, p.end) for p in man.phases] == [
        ("base", 0, 120),
        ("pulse", 120, 227),
        ("hold", 227, 947),
    ]
    assert man.t0 == 1764460800.0
    assert man.meta["scenario"] == "pulse-retry-cancel"
    assert man.meta["seed"] == 1
    assert man.meta["profile"] == "h100-7b"
    # the C^ calibrated for the reference configuration (profiles/h100-7b.capacity.json)
    assert man.capacity_calls_per_s == pytest.approx(2.85)
    assert man.meta["capacity_source"].startswith("profile:")


def test_metrics_follow_vllms_counting_rules(reference_run: Path) -> None:
    """The prompt-token counter equals the prompt tokens of executions that produced a first
    token; the prefix-cache query counter those of executions first scheduled — so over the
    run the gap is exactly the prompts aborted before their first token."""
    eng = pl.read_parquet(reference_run / "engine.parquet")
    ev = eng.filter(pl.col("type") == "event")
    prompts = ev.filter(pl.col("event") == "arrived").select("execution_id", "prompt_tokens")
    first = (
        ev.filter(pl.col("event") == "first_token")
        .select("execution_id", "t")
        .join(prompts, on="execution_id")
    )
    sched = (
        ev.filter(pl.col("event") == "scheduled")
        .select("execution_id", "t")
        .join(prompts, on="execution_id")
    )
    con = duckdb.connect()
    con.execute(sql.load("schema").text)
    load_run(con, reference_run)
    m = con.sql(
        "select t, name, value, cast(labels as varchar) as series, labels['engine'] as engine,"
        " labels['model_name'] as model_name from metric_samples"
    ).pl()
    last = m.sort("t").group_by("name", "series").agg(pl.col("value").last(), pl.col("t").last())
    t_end = last["t"].max()
    final = {
        r["name"]: r["value"]
        for r in last.filter(pl.col("t") == t_end).iter_rows(named=True)
        if "finished_reason" not in r["series"]
    }
    t_last_scrape = t_end
    first_in = first.filter(pl.col("t") <= t_last_scrape)["prompt_tokens"].sum()
    sched_in = sched.filter(pl.col("t") <= t_last_scrape)["prompt_tokens"].sum()
    assert final["vllm:prompt_tokens_total"] == first_in
    assert final["vllm:prefix_cache_queries_total"] == sched_in
    assert final["vllm:prompt_tokens_total"] < final["vllm:prefix_cache_queries_total"]
    assert (
        final["vllm:num_preemptions_total"]
        == ev.filter((pl.col("event") == "preempted") & (pl.col("t") <= t_last_scrape)).height
    )
    assert m["engine"].unique().to_list() == ["0"]
    assert m["model_name"].null_count() == 0
    assert set(m["t"].unique().sort().diff().drop_nulls().round(6).to_list()) == {5.0}


def test_promtool_accepts_the_metrics(
    reference_run: Path, tmp_path: Path, promtool_bin: str
) -> None:
    res = subprocess.run(
        [
            promtool_bin,
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            str(reference_run / "metrics.om.txt"),
            str(tmp_path / "tsdb"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert "NUM SAMPLES" in res.stdout or any((tmp_path / "tsdb").iterdir())


def test_run_json_is_plain_json(reference_run: Path) -> None:
    data = json.loads((reference_run / "run.json").read_text())
    assert data["name"] == "pulse-retry-cancel"
    assert data["delivery_window_s"] == 840


@pytest.mark.slow
def test_same_seed_same_bytes_across_processes(tmp_path: Path) -> None:
    """Two separate processes with different hash seeds write the same bytes: `relplan
    simulate` in a new process against the run simulated once per test run in a pytest
    process (tests/helpers/sim_runs.py), whose hash seed differs from the child's."""
    import os
    import sys

    shared, _ = simulated("pulse1.5-retry", 1)
    root = Path(__file__).resolve().parent.parent
    ours = os.environ.get("PYTHONHASHSEED", "random")
    env = {**os.environ, "PYTHONHASHSEED": "2" if ours == "1" else "1"}
    res = subprocess.run(
        [
            *(sys.executable, "-m", "relplan", "simulate", "pulse1.5-retry"),
            *("--out", str(tmp_path / "p"), "--seed", "1"),
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    for f in ("proxy.parquet", "engine.parquet", "metrics.om.txt", "run.json"):
        assert (tmp_path / "p" / f).read_bytes() == (shared / f).read_bytes(), f


def test_stats_records_carry_each_steps_split_cost_and_counters(reference_run: Path) -> None:
    """The simulator's `stats` records fill schema version 3's columns as the vLLM plugin
    does: each step's prefill tokens are its step records' prompt_computed, its decode tokens
    its decoding executions (a prefill's first token is not one, as in vLLM's iteration
    details), its elapsed_ms the step's own cost; the per-step preemptions, prefix queries and
    hits add up to the metrics' counters and to the `preempted` events. `finished` events carry
    their output length (the step records' decode tokens) and finish reason."""
    eng = pl.read_parquet(reference_run / "engine.parquet")
    stats = eng.filter(pl.col("type") == "stats")
    steps = eng.filter(pl.col("type") == "step")
    events = eng.filter(pl.col("type") == "event")
    per_step = steps.group_by("step").agg(pl.col("prompt_computed").sum().alias("pc"))
    joined = stats.join(per_step, on="step", how="left")
    assert (joined["prompt_computed"] == joined["pc"].fill_null(0)).all()
    assert (stats["num_batched_tokens"] == stats["prompt_computed"] + stats["decode_tokens"]).all()
    assert (stats["elapsed_ms"] > 0).all()
    text = (reference_run / "metrics.om.txt").read_text()

    def last(name: str) -> int:
        lines = [x for x in text.splitlines() if x.startswith(name + "{")]
        return int(float(lines[-1].split()[-2]))

    assert stats["num_preempted"].sum() == last("vllm:num_preemptions_total")
    assert stats["num_preempted"].sum() == len(events.filter(pl.col("event") == "preempted"))
    assert stats["prefix_queries"].sum() == last("vllm:prefix_cache_queries_total")
    assert stats["prefix_hits"].sum() == last("vllm:prefix_cache_hits_total")
    finished = events.filter(pl.col("event") == "finished")
    made = steps.group_by("execution_id").agg(pl.col("decode_tokens").sum().alias("made"))
    both = finished.join(made, on="execution_id")
    assert len(both) == len(finished) > 0
    assert (both["output_tokens"] == both["made"]).all()
    assert set(finished["finish_reason"].unique()) <= {"stop", "length"}
    assert set(events.filter(pl.col("event") == "aborted")["finish_reason"].unique()) == {"abort"}
    assert events.filter(pl.col("event") == "arrived")["max_tokens"].null_count() == 0
