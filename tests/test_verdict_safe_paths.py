"""Issue 13 item 5 in analyze and budget: records at one instant are analysed; a --from/--to
outside the data names the data's span; budget --from-db uses the replicas it saw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relplan import workspace
from relplan.analyses.bounds import INSTANT_S, window_in_data
from relplan.cli import app
from relplan.errors import UsageError
from tests.helpers.fast_cli import CliRunner
from tests.helpers.incident import T0, build_incident

runner = CliRunner()
ATTEMPT_COLUMNS = (
    "call_id, attempt, t_planned, t_sent, t_end, outcome, execution_id, attached, replica,"
    " source_id, source_row"
)


def _attempts(db: Path, rows: list[tuple[object, ...]]) -> Path:
    with workspace.open_workspace(db) as con:
        con.executemany(
            f"insert into attempts ({ATTEMPT_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    return db


def test_records_all_at_one_instant_are_analysed_without_a_window_error(tmp_path: Path) -> None:
    """Two attempts that start and end at T0: no --from/--to was given, so no --to error; the
    window is that instant and a note says so."""
    db = _attempts(
        tmp_path / "instant.duckdb",
        [
            ("c1", 0, T0, T0, T0, "error", None, False, "r0", 1, 1),
            ("c2", 0, T0, T0, T0, "error", None, False, "r0", 1, 2),
        ],
    )
    res = runner.invoke(app, ["analyze", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert any("one instant" in n for n in data["context"]["notes"])
    assert data["amplification"]["windows"][0]["calls"] == 2
    # two calls, both errors: no evidence of delivery is a failure, never "healthy" (issue 24)
    assert data["verdict"]["verdict"] == "failing"


def test_a_window_outside_the_data_is_a_usage_error_naming_the_span(tmp_path: Path) -> None:
    """The fixture's data spans 0..240 s after t0; --from 5000 lies past it."""
    db = build_incident(tmp_path / "i.duckdb")
    res = runner.invoke(app, ["analyze", "--db", str(db), "--from", "5000"])
    assert res.exit_code == 2
    assert "outside the data, which spans 0..240 s" in res.stderr


def test_budget_from_db_uses_the_replicas_it_saw_and_says_so(tmp_path: Path) -> None:
    """Two streams on r1 and r2 -> N = 2 without --replicas; --replicas 5 wins over it."""
    db = _attempts(
        tmp_path / "b.duckdb",
        [
            ("c1", 0, 0.0, 0.0, 10.0, "delivered", "e1", False, "r1", 1, 1),
            ("c2", 0, 0.0, 0.0, 10.0, "delivered", "e2", False, "r2", 1, 2),
        ],
    )
    base = ["budget", "--crashes", "1", "--from-db", "--db", str(db), "--json"]
    res = runner.invoke(app, base)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["inputs"]["replicas"] == 2
    assert "replicas: 2, as seen in the proxy log" in res.stderr
    res = runner.invoke(app, [*base, "--replicas", "5"])
    assert json.loads(res.stdout)["inputs"]["replicas"] == 5
    assert "replicas: 5, from --replicas" in res.stderr


def test_budget_without_the_workspace_keeps_eight_replicas() -> None:
    res = runner.invoke(app, ["budget", "--crashes", "1", "--concurrency", "4", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["inputs"]["replicas"] == 8


def test_one_window_check_refuses_outside_clips_far_and_takes_an_instant() -> None:
    """The data span 1,000..2,000 epoch s, t0 = 1,000: a window at 3,000..4,000 is refused
    naming that span (0..1000 s, wall clock 00:16:40–00:33:20 UTC of 1970-01-01); a window to
    1e6 is clipped to the data's end; an empty window with no flag given is the one instant."""
    notes: list[str] = []
    with pytest.raises(
        UsageError, match=r"spans 0\.\.1000 s after t0 \(1970-01-01 00:16:40–00:33:20"
    ):
        window_in_data(3000.0, 4000.0, (1000.0, 2000.0), 1000.0, notes, given=(True, False))
    assert window_in_data(1000.0, 1e6, (1000.0, 2000.0), 1000.0, notes) == (1000.0, 2000.0)
    assert "clipped" in notes[-1]
    got = window_in_data(1500.0, 1500.0, (1500.0, 1500.0), 1500.0, notes, given=(False, False))
    assert got == (1500.0, 1500.0 + INSTANT_S)
    with pytest.raises(UsageError, match="must end after it starts"):
        window_in_data(1500.0, 1500.0, (1500.0, 1500.0), 1500.0, notes, given=(True, False))


def test_capacity_and_deadline_from_flags_or_run_json_are_given_not_measured(
    tmp_path: Path,
) -> None:
    """run.json states Ĉ 0.05 calls/s and D 30 s: both are `given` (stated, not counted in the
    data), named after run.json; --capacity 0.08 is given by a command-line flag; the
    overload window from run.json's phases is given too. Nothing given is called measured."""
    db = build_incident(tmp_path / "i.duckdb")
    res = runner.invoke(app, ["analyze", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    figs = {f["key"]: f for f in json.loads(res.stdout)["verdict"]["figures"]}
    assert (figs["capacity"]["status"], figs["capacity"]["inputs"]) == ("given", ["run.json"])
    assert (figs["deadline"]["status"], figs["deadline"]["value"]) == ("given", 30.0)
    assert figs["overload_window"]["status"] == "given"
    res = runner.invoke(app, ["analyze", "--db", str(db), "--capacity", "0.08", "--json"])
    cap = next(f for f in json.loads(res.stdout)["verdict"]["figures"] if f["key"] == "capacity")
    assert (cap["status"], cap["value"], cap["inputs"]) == (
        "given",
        0.08,
        ["a command-line flag"],
    )
    text = runner.invoke(app, ["analyze", "--db", str(db), "--capacity", "0.08"]).stdout
    assert "Ĉ, calls per second: 0.08/s [given: a command-line flag]" in text
    assert "Ĉ 0.080 calls/s (given: a command-line flag)" in text
