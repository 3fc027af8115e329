"""Work is bounded by the data's real span and size, not by its timestamps (issue 11):
one record with an outlier timestamp cannot make an analysis or the alert evaluation build
millions of bins or evaluations."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from relplan.alerts import health
from relplan.analyses import bounds
from relplan.cli import app
from relplan.errors import UsageError
from tests.helpers.fast_cli import CliRunner
from tests.helpers.ingest import INCIDENT, ingest

YEAR_2090 = 3_786_912_000.0


def _outlier_proxy(tmp_path: Path) -> Path:
    rec = {
        "call_id": "late",
        "attempt": 0,
        "t_sent": YEAR_2090,
        "t_end": YEAR_2090 + 1,
        "outcome": "delivered",
        "status": 200,
        "model": "llama-8b",
        "replica": "r0",
        "prompt_tokens": 10,
        "max_tokens": 5,
    }
    out = tmp_path / "late.jsonl"
    out.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    return out


def _outlier_metrics(tmp_path: Path) -> Path:
    text = (INCIDENT / "metrics.om.txt").read_text(encoding="utf-8").replace("# EOF\n", "")
    text += f'vllm:num_requests_waiting{{engine="0",model_name="llama-8b"}} 0 {YEAR_2090:.3f}\n'
    out = tmp_path / "late.om.txt"
    out.write_text(text + "# EOF\n", encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def outlier_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The incident with a proxy attempt in 2090, ingested once per module (the tests only
    read it: `relplan analyze` opens a workspace read-only)."""
    folder = tmp_path_factory.mktemp("outlier")
    db = folder / "w.duckdb"
    ingest(db, INCIDENT, _outlier_proxy(folder))
    return db


def _analyze(db: Path, *flags: str) -> dict[str, object]:
    res = CliRunner().invoke(app, ["analyze", "--json", "--db", str(db), *flags])
    assert res.exit_code == 0, res.stderr
    doc: dict[str, object] = json.loads(res.stdout)
    return doc


def test_auto_bins_stay_few_over_any_span() -> None:
    for span in (60.0, 3600.0, 86400.0 * 30, YEAR_2090 - 1_764_460_800.0):
        width = bounds.auto_bin(span)
        assert span / width <= bounds.MAX_BINS
    assert bounds.auto_bin(600.0) == 30.0  # unchanged for a normal run


def test_a_given_bin_too_fine_for_the_window_is_widened_with_a_note() -> None:
    notes: list[str] = []
    assert bounds.bounded_bin(5.0, 600.0, notes) == 5.0
    assert notes == []
    wide = bounds.bounded_bin(1.0, 1e9, notes)
    assert 1e9 / wide <= bounds.MAX_BINS
    assert "--bin 1 s would make 1,000,000,000 bins" in notes[0]


def test_a_rolling_step_too_fine_for_the_span_is_widened_with_a_note() -> None:
    notes: list[str] = []
    assert bounds.bounded_step(15.0, 3600.0, notes) == 15.0
    wide = bounds.bounded_step(15.0, 1e9, notes)
    assert wide % 15.0 == 0
    assert 1e9 / wide <= bounds.MAX_ROLLING_EVALUATIONS
    assert "evaluated every" in notes[0]


def test_an_outlier_proxy_timestamp_keeps_the_series_bounded(outlier_db: Path) -> None:
    doc = _analyze(outlier_db)
    ctx = doc["context"]
    assert isinstance(ctx, dict)
    span = ctx["window_end"] - ctx["window_start"]
    assert span > 2e9  # the outlier is data: T reaches it
    assert span / ctx["bin_s"] <= bounds.MAX_BINS
    assert "health" in doc  # evaluated, on the metrics' own span
    health_doc = doc["health"]
    assert isinstance(health_doc, dict)
    assert health_doc["evaluations"] < 10_000


def test_a_fine_bin_over_an_outlier_span_is_widened_and_said(outlier_db: Path) -> None:
    doc = _analyze(outlier_db, "--bin", "1")
    ctx = doc["context"]
    assert isinstance(ctx, dict)
    assert ctx["bin_s"] > 1
    assert any("--bin 1 s would make" in n for n in ctx["notes"])


def test_outlier_metric_and_proxy_times_widen_the_rolling_step_and_skip_health(
    tmp_path: Path,
) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, INCIDENT, _outlier_proxy(tmp_path), _outlier_metrics(tmp_path))
    doc = _analyze(db)
    ctx = doc["context"]
    assert isinstance(ctx, dict)
    assert ctx["rolling_step_s"] > 15.0
    assert any("rolling series would need" in n for n in ctx["notes"])
    skipped = json.dumps(doc["skipped"])
    assert "evaluations, over the limit" in skipped


def test_a_window_wholly_outside_the_data_is_refused(outlier_db: Path) -> None:
    res = CliRunner().invoke(
        app,
        [
            "analyze",
            "--db",
            str(outlier_db),
            "--from",
            "2000-01-01T00:00:00Z",
            "--to",
            "2000-01-02T00:00:00Z",
        ],
    )
    assert res.exit_code == 2
    assert "lies outside the data" in res.stderr
    assert res.stderr.count("\n") == 1


def test_a_window_reaching_far_beyond_the_data_is_clipped_with_a_note(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, INCIDENT)
    doc = _analyze(db, "--to", "1e7")
    ctx = doc["context"]
    assert isinstance(ctx, dict)
    assert ctx["window_end"] == ctx["t_end"]
    assert any("reaches far beyond the data" in n for n in ctx["notes"])


def test_health_window_bounds() -> None:
    lo, hi = 1000.0, 2000.0
    assert health.bounded_window(900.0, 2100.0, 15.0, lo, hi, 300.0) == (900.0, 2100.0)
    a, b = health.bounded_window(0.0, 1e9, 15.0, lo, hi, 300.0)
    assert (a, b) == (0.0, hi + health.CLIP_SLACK_S)
    with pytest.raises(UsageError, match="outside the metric samples"):
        health.bounded_window(1e8, 2e8, 15.0, lo, hi, 300.0)
    with pytest.raises(UsageError, match="over the limit"):
        health.bounded_window(lo, hi, 0.001, lo, hi, 300.0)


def test_alerts_eval_refuses_a_window_far_outside_the_data(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, INCIDENT / "metrics.om.txt")
    runner = CliRunner()
    res = runner.invoke(app, ["alerts", "eval", "--db", str(db), "--from", "3e9", "--to", "3.1e9"])
    assert res.exit_code == 2
    assert "outside the metric samples" in res.stderr
    # far beyond the samples: evaluated only up to an hour past the last one
    res = runner.invoke(
        app, ["alerts", "eval", "--json", "--db", str(db), "--step", "1s", "--to", "3e9"]
    )
    assert res.exit_code == 0, res.stderr
    got = json.loads(res.stdout)
    last_sample = 1_764_460_810.0
    assert got["end"] == last_sample + health.CLIP_SLACK_S
    assert got["evaluations"] == 3611


@pytest.mark.slow
def test_peak_rss_of_analyze_with_an_outlier_timestamp(outlier_db: Path) -> None:
    psutil = pytest.importorskip("psutil")
    proc = subprocess.Popen(
        [sys.executable, "-m", "relplan", "analyze", "--db", str(outlier_db)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    watched = psutil.Process(proc.pid)
    peak = 0
    while proc.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.NoSuchProcess:
            break
        time.sleep(0.01)
    _, err = proc.communicate()
    assert proc.returncode == 0, err
    print(f"peak RSS of analyze with a 2090 outlier: {peak / 2**20:.0f} MiB")
    assert peak < 1024 * 2**20
