"""`relplan simulate` and its subcommands through the CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from relplan.cli import app
from relplan.sim.profiles import load_capacities
from tests.helpers.fast_cli import CliRunner

SUMMARY_KEYS = {
    "capacity_calls_per_s",
    "phases",
    "recovered_after_pulse_s",
    "verdict",
    "retry_share_of_executions",
    "prefill",
    "littles_law",
    "counter_shortfall_hold",
}


def invoke(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, list(args))
    return res.exit_code, res.output


@pytest.mark.slow
def test_simulate_json_prints_the_documented_keys(tmp_path: Path) -> None:
    code, out = invoke("simulate", "pulse1.5-retry", "--out", str(tmp_path / "r"), "--json")
    assert code == 0, out
    data = json.loads(out)
    assert set(data) >= SUMMARY_KEYS
    assert set(data["phases"]) == {"base", "pulse", "hold"}
    for ph in data["phases"].values():
        assert {
            "calls",
            "delivered_share",
            "on_time_share",
            "accepted_rate_x_capacity",
            "completed_rate_x_capacity",
        } <= set(ph)
    assert {"aborted_share", "in_flight_share_of_aborted", "before_first_token_share"} <= set(
        data["prefill"]
    )
    assert "deadline_saturation" in data["littles_law"]
    assert data["verdict"] == "recovered"
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == [
        "engine.parquet",
        "metrics.om.txt",
        "proxy.parquet",
        "run.json",
    ]


@pytest.mark.slow
def test_simulate_human_summary_and_set_overrides(tmp_path: Path) -> None:
    code, out = invoke(
        "simulate",
        "pulse-retry",
        "--out",
        str(tmp_path / "r"),
        "--seed",
        "3",
        "--set",
        "workload.phases.1.rate_x=1.5",
        "--set",
        "client.max_retries=1",
    )
    assert code == 0, out
    assert "pulse-retry (seed 3)" in out
    assert "verdict: recovered" in out
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    assert run["meta"]["sets"] == ["workload.phases.1.rate_x=1.5", "client.max_retries=1"]
    assert run["meta"]["seed"] == 3


@pytest.mark.slow
def test_scenario_file_in_yaml(tmp_path: Path) -> None:
    f = tmp_path / "mine.yaml"
    f.write_text(
        "name: mine\ncapacity_calls_per_s: 2.0\nworkload:\n  phases:\n"
        "    - {name: base, seconds: 60, rate_x: 0.5}\n"
        "    - {name: pulse, seconds: 30, rate_x: 1.0}\n"
        "    - {name: hold, seconds: 60, rate_x: 0.5}\n"
        "proxy:\n  cancellation: immediate\n"
    )
    code, out = invoke("simulate", str(f), "--out", str(tmp_path / "r"), "--json")
    assert code == 0, out
    assert json.loads(out)["capacity_calls_per_s"] == 2.0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["simulate", "no-such", "--out", "x"], "unknown scenario 'no-such'"),
        (
            ["simulate", "pulse-retry", "--out", "x", "--set", "proxy.cancellation=sometimes"],
            "proxy.cancellation: Value error, expected off, immediate or deferred(SECONDS)",
        ),
        (
            ["simulate", "pulse-retry", "--out", "x", "--set", "client.nope=1"],
            "client.nope: Extra inputs are not permitted",
        ),
        (["simulate", "pulse-retry", "--out", "x", "--set", "noequals"], "expected key=value"),
        (
            [
                "simulate",
                "pulse-retry",
                "--out",
                "x",
                "--set",
                "engine.max_num_batched_tokens=1024",
            ],
            "no calibrated capacity for this configuration",
        ),
    ],
)
def test_bad_input_is_one_clear_error(args: list[str], message: str, tmp_path: Path) -> None:
    code, out = invoke(*args)
    assert code == 2
    assert out.startswith("relplan: error: ")
    assert message in out
    assert "Traceback" not in out
    assert not Path("x").exists()


def test_out_that_is_a_file_is_refused_before_running(tmp_path: Path) -> None:
    f = tmp_path / "afile"
    f.write_text("x")
    code, out = invoke("simulate", "pulse-retry", "--out", str(f))
    assert code == 2
    assert out == f"relplan: error: {f}: --out must be a directory, but this is a file\n"


def test_bad_scenario_file_names_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text('name = "bad"\n[proxy\ncoalesce = true\n')
    code, out = invoke("simulate", str(f), "--out", str(tmp_path / "r"))
    assert code == 2
    assert f"relplan: error: {f}:2: not valid TOML" in out


@pytest.mark.parametrize("sub", [[], ["run"], ["calibrate"], ["sweep"]])
def test_every_simulate_command_has_an_example(sub: list[str]) -> None:
    code, out = invoke("simulate", *sub, "--help")
    assert code == 0
    assert "Example: relplan simulate" in out


@pytest.mark.slow
def test_calibrate_writes_the_capacity_beside_a_profile_file(tmp_path: Path) -> None:
    """A short ramp from 2.6 calls/s, one seed: the ramp stops at the first growing stage a
    few stages in (near the shipped C^ of 2.80; one seed spreads by about +-0.2)."""
    prof = tmp_path / "mine.toml"
    shutil.copy(Path("relplan/sim/profiles/h100-7b.toml"), prof)
    code, out = invoke(
        "simulate", "calibrate", str(prof), "--seeds", "1", "--start", "2.6", "--write", "--json"
    )
    assert code == 0, out
    data = json.loads(out)
    cap = data["capacity_calls_per_s"]
    assert 2.6 <= cap <= 3.2
    stages = data["seeds"][0]["stages"]
    assert stages[-1]["grows"] is True
    assert not any(s["grows"] for s in stages[:-1])
    assert cap == pytest.approx(stages[-2]["rate_calls_per_s"])
    table = load_capacities(str(prof))
    assert [e.capacity_calls_per_s for e in table.entries] == [cap]
    # a scenario on that profile now finds its capacity without recalibrating
    code, out = invoke(
        "simulate",
        "pulse1.5-retry",
        "--out",
        str(tmp_path / "r"),
        "--json",
        "--set",
        f"engine.profile={json.dumps(str(prof))}",
    )
    assert code == 0, out
    assert json.loads(out)["capacity_calls_per_s"] == cap


def test_shipped_profile_calibration_is_in_the_published_range() -> None:
    table = load_capacities("h100-7b")
    ref = [e for e in table.entries if "8192 tokens/step" in e.label]
    assert len(ref) == 1
    assert 2.78 - 0.15 <= ref[0].capacity_calls_per_s <= 2.78 + 0.15
    assert ref[0].seeds == [1, 2, 3, 4, 5, 6, 7]
    assert any("2048 tokens/step" in e.label for e in table.entries)


@pytest.mark.slow
def test_sweep_writes_one_row_per_run(tmp_path: Path) -> None:
    code, out = invoke(
        "simulate",
        "sweep",
        "pulse1.5-retry",
        "--vary",
        "proxy.cancellation=off,immediate",
        "--seeds",
        "1",
        "--jobs",
        "2",
        "--out",
        str(tmp_path / "sw"),
    )
    assert code == 0, out
    df = pl.read_csv(tmp_path / "sw" / "sweep.csv")
    assert df.height == 2
    assert df["proxy.cancellation"].to_list() == ["off", "immediate"]
    assert {"verdict", "hold_on_time_share", "retry_share_of_executions"} <= set(df.columns)
    assert (tmp_path / "sw" / "sweep.parquet").is_file()
    # the table (relplan/text/sim.py's sweep): the varied key after run and seed, one line a
    # run in the frame's order, its retry share as the CSV holds it
    from relplan.values import pct

    head, rule, *lines = out.splitlines()[:4]
    assert head.split() == [
        *("run", "seed", "proxy.cancellation", "verdict", "recovered", "s"),
        *("hold", "on", "time", "retry", "share"),
    ]
    assert set(rule) == {"-", " "}
    for line, r in zip(lines, df.iter_rows(named=True), strict=True):
        cells = line.split()
        assert cells[:4] == [r["run"], str(r["seed"]), r["proxy.cancellation"], r["verdict"]]
        assert line.endswith(pct(r["retry_share_of_executions"]))


def test_sweep_refuses_a_bad_key_before_running(tmp_path: Path) -> None:
    code, out = invoke(
        "simulate", "sweep", "pulse-retry", "--vary", "proxy.nope=1,2", "--out", str(tmp_path)
    )
    assert code == 2
    assert "proxy.nope" in out
