"""`relplan drill` as a user runs it, in a subprocess against the loopback fake engine:
the plan and the verdict printed, the folder `relplan analyze --db` reads, the one-line
refusals, Ctrl-C keeping what was recorded, the capacity ramp and the sweep."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from relplan.drill.capacity import measure
from relplan.drill.client import Endpoint
from relplan.drill.prompts import Lengths
from relplan.text import drill as drill_text
from tests.helpers.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parent.parent
FAST = [
    "--capacity", "10", "--phases", "base=0.5s@1,pulse=0.5s@3,hold=0.5s@1,drain=1s",
    "--deadline", "1s", "--prompt-tokens", "20", "--prefix-tokens", "4",
    "--output-tokens", "4", "--scrape-every", "0.2s",
]  # fmt: skip


def relplan(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "relplan", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def test_a_non_loopback_url_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = relplan("drill", "http://192.0.2.1:8000", "--out", str(tmp_path / "d"))
    assert done.returncode == 2
    assert done.stderr.startswith("relplan: error: URL: http://192.0.2.1:8000 is not a loopback")
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "d").exists()


def test_a_bad_flag_value_is_one_line(tmp_path: Path) -> None:
    done = relplan("drill", "http://127.0.0.1:1", "--retry", "often", "--out", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.startswith("relplan: error: --retry: 'often': expected none, openai")


@pytest.mark.slow
def test_the_drill_prints_plan_and_verdict_and_analyze_reads_its_folder(tmp_path: Path) -> None:
    out = tmp_path / "d"
    with FakeOpenAI(slots=2, token_s=0.02) as srv:
        done = relplan("drill", srv.url, *FAST, "--retry", "openai", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "expected peak in flight" in done.stdout
    assert "Verdict: " in done.stdout
    assert sorted(p.name for p in out.iterdir()) == [
        "attempts.jsonl", "drill.duckdb", "metrics.scrape.txt", "run.json",
    ]  # fmt: skip
    analyzed = relplan("analyze", "--db", str(out / "drill.duckdb"), "--json")
    assert analyzed.returncode == 0, analyzed.stderr
    res = json.loads(analyzed.stdout)
    run = next(w for w in res["delivery"]["windows"] if w["window"] == "run")
    lines = (out / "attempts.jsonl").read_text().splitlines()
    delivered_calls = {json.loads(x)["call_id"] for x in lines if '"delivered"' in x}
    assert run["delivered"] == len(delivered_calls)
    assert res["context"]["capacity"] == 10.0
    # run.json records the flags as given, nothing else (it once held module reprs)
    flags = json.loads((out / "run.json").read_text())["meta"]["flags"]
    assert {"run_mod", "text"}.isdisjoint(flags)
    assert flags["retry"] == "openai"
    assert flags["deadline"] == "1s"


@pytest.mark.slow
def test_ctrl_c_stops_sending_and_keeps_what_was_recorded(tmp_path: Path) -> None:
    out = tmp_path / "d"
    args = [
        "drill", "--capacity", "10", "--phases", "base=30s@1,drain=5s", "--deadline", "2s",
        "--prompt-tokens", "10", "--prefix-tokens", "2", "--output-tokens", "4",
        "--progress", "--out", str(out),
    ]  # fmt: skip
    with FakeOpenAI(slots=2, token_s=0.02) as srv:
        proc = subprocess.Popen(
            [sys.executable, "-m", "relplan", args[0], srv.url, *args[1:]],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stderr is not None
        for line in proc.stderr:  # wait until the drill is inside the work
            if line.startswith("drill:") and " sent 0 " not in line and "sent" in line:
                break
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "interrupted;" in stderr
    assert "Interrupted: sending stopped early" in stdout
    lines = (out / "attempts.jsonl").read_text().splitlines()
    assert 0 < len(lines) < 300  # far fewer than the 30 s plan's
    man = json.loads((out / "run.json").read_text())
    assert man["meta"]["interrupted"] is True
    assert relplan("inspect", "--db", str(out / "drill.duckdb")).returncode == 0


@pytest.mark.slow
def test_the_ramp_finds_the_concurrency_where_throughput_stops_rising(tmp_path: Path) -> None:
    """Two slots of 0.1 s per call: at most 20 calls/s however many clients; the ramp
    doubles the clients while throughput rises by 5 % or more and stops after the first
    level that does not."""
    with FakeOpenAI(slots=2, token_s=0.025) as srv:
        ramp = measure(
            Endpoint(srv.url, "fake-model", stream=True),
            level_seconds=1.0, prefix=[], prompts=Lengths("fixed", 5),
            outputs=Lengths("fixed", 4), seed=1, sink=lambda r: None,
        )  # fmt: skip
    levels = ramp.levels
    assert [lv.concurrency for lv in levels] == [2**i for i in range(len(levels))]
    assert 3 <= len(levels) <= 6
    assert ramp.capacity == max(lv.calls_per_s for lv in levels)
    assert ramp.capacity <= 20 * 1.05  # the engine's limit
    assert levels[1].calls_per_s > 1.5 * levels[0].calls_per_s  # a second slot doubles it
    assert levels[-1].calls_per_s <= ramp.capacity * 1.05
    assert ramp.best_concurrency is not None
    assert ramp.best_concurrency >= 2
    assert ramp.stopped is not None
    assert "less than 5%" in drill_text.stopped_because(ramp.stopped)


@pytest.mark.slow
def test_the_sweep_reports_the_smallest_pulse_that_left_it_down(tmp_path: Path) -> None:
    with FakeOpenAI(slots=1, token_s=0.02) as srv:
        done = relplan(
            "drill", srv.url, "--capacity", "8",
            "--phases", "base=0.25s@0.5,pulse=0.25s@1,hold=0.5s@0.5,drain=0.5s",
            "--deadline", "0.3s", "--retry", "fixed:2:0", "--no-cancel",
            "--prompt-tokens", "5", "--prefix-tokens", "1", "--output-tokens", "4",
            "--metrics-url", "none", "--sweep", "0.5,6", "--sweep-seeds", "2",
            "--out", str(tmp_path / "s"),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Smallest pulse that left it down" in done.stdout or "No pulse" in done.stdout
    data = json.loads((tmp_path / "s" / "sweep.json").read_text())
    assert len(data["runs"]) == 4
    assert {(r["value"], r["seed"]) for r in data["runs"]} == {(0.5, 1), (0.5, 2), (6, 1), (6, 2)}
    assert all(Path(r["out"], "drill.duckdb").is_file() for r in data["runs"])


def test_drill_help_has_an_example() -> None:
    done = relplan("drill", "--help")
    assert "Example: relplan drill" in done.stdout
    assert os.linesep in done.stdout


def test_drill_help_loads_no_http_client_and_no_workspace_library() -> None:
    code = (
        "import runpy, sys\n"
        "sys.argv = ['relplan', 'drill', '--help']\n"
        "try:\n    runpy.run_module('relplan', run_name='__main__', alter_sys=True)\n"
        "except SystemExit:\n    pass\n"
        "print('LOADED', sorted(m for m in ('httpx', 'duckdb', 'polars') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.splitlines()[-1] == "LOADED []"
