"""`relplan budget --from-db`: K and d measured from the proxy log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relplan import workspace
from relplan.cli import app
from tests.helpers.fast_cli import CliRunner

ATTEMPT_COLUMNS = (
    "call_id, attempt, t_planned, t_sent, t_end, outcome, execution_id, attached, replica,"
    " source_id, source_row"
)


def _workspace(tmp_path: Path) -> Path:
    """Three streams and one shed attempt on two replicas.

    r1: c1 [0, 10] delivered, c2 [5, 25] client_gone, c2 retry shed at [26, 26.1];
    r2: c3 [0, 30] delivered.
    Streams (not shed) = 3; d = (10 + 20 + 30) / 3 = 20 s; stream-seconds = 60;
    span = 30 - 0 = 30 s; replicas = 2; K = 60 / (30 * 2) = 1.0.
    """
    db = tmp_path / "w.duckdb"
    rows = [
        ("c1", 0, 0.0, 0.0, 10.0, "delivered", "e1", False, "r1", 1, 2),
        ("c2", 0, 5.0, 5.0, 25.0, "client_gone", "e2", False, "r1", 1, 3),
        ("c2", 1, 5.0, 26.0, 26.1, "shed", None, False, "r1", 1, 4),
        ("c3", 0, 0.0, 0.0, 30.0, "delivered", "e3", False, "r2", 1, 5),
    ]
    with workspace.open_workspace(db) as con:
        con.executemany(
            f"insert into attempts ({ATTEMPT_COLUMNS}) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    return db


def test_from_db_measures_concurrency_and_duration(tmp_path: Path) -> None:
    db = _workspace(tmp_path)
    res = CliRunner().invoke(
        app, ["budget", "--crashes", "10", "--from-db", "--db", str(db), "--json"]
    )
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["measured"]["streams"] == 3
    assert data["measured"]["mean_stream_seconds"] == 20.0
    assert data["measured"]["mean_concurrency_per_replica"] == 1.0
    assert data["inputs"]["concurrency"] == 1.0
    assert data["inputs"]["stream_seconds"] == [20.0]


def test_flags_override_what_is_measured(tmp_path: Path) -> None:
    db = _workspace(tmp_path)
    res = CliRunner().invoke(
        app,
        [
            "budget",
            "--crashes",
            "10",
            "--from-db",
            "--db",
            str(db),
            "--concurrency",
            "40",
            "--stream-seconds",
            "60",
            "--json",
        ],
    )
    data = json.loads(res.stdout)
    assert data["inputs"]["concurrency"] == 40
    assert data["inputs"]["stream_seconds"] == [60]


def test_from_db_on_a_workspace_without_proxy_log_says_so(tmp_path: Path) -> None:
    db = tmp_path / "empty.duckdb"
    workspace.connect(db).close()
    res = CliRunner().invoke(app, ["budget", "--crashes", "10", "--from-db", "--db", str(db)])
    assert res.exit_code == 2
    assert "needs a proxy log" in res.stderr


def test_without_concurrency_or_from_db_is_a_usage_error() -> None:
    res = CliRunner().invoke(app, ["budget", "--crashes", "10"])
    assert res.exit_code == 2
    assert res.stderr.startswith("relplan: error: --concurrency")


# --- crashes, planned restarts, restart minutes and streams per crash, measured -----------
# On tests/helpers/restarts_incident.py (its docstring has the arithmetic): 4 crashes and 2
# planned restarts on 4 pods in 1200 s; 30 d = 2,592,000 s, so C = 4 / 4 * 2592000 / 1200 =
# 2160 and P = 1080 per replica per window; r = (80 + 60 + 60) / 3 s = 10/9 min; 1.25
# streams killed per crash; a rollout stop cut a stream, so planned restarts did not drain.


def _incident(tmp_path: Path) -> Path:
    from tests.helpers import restarts_incident

    return restarts_incident.build(tmp_path / "incident.duckdb")


def _budget(*args: str) -> dict[str, object]:
    res = CliRunner().invoke(app, ["budget", *args, "--json"])
    assert res.exit_code == 0, res.stderr
    data: dict[str, object] = json.loads(res.stdout)
    return data


def test_from_db_measures_crashes_restarts_and_streams_per_crash(tmp_path: Path) -> None:
    data = _budget("--from-db", "--db", str(_incident(tmp_path)))
    inputs = data["inputs"]
    assert isinstance(inputs, dict)
    assert inputs["crashes"] == 2160.0
    assert inputs["planned_restarts"] == 1080.0
    assert inputs["restart_minutes"] == pytest.approx(10 / 9)
    assert inputs["streams_per_crash"] == 1.25
    assert inputs["drain"] is False
    assert data["input_sources"] == {
        "C": "measured",
        "K": "measured",
        "d": "measured",
        "r": "measured",
        "P": "measured",
        "drain": "measured",
        "per crash": "measured",
    }
    assert data["as_measured"] is None  # nothing typed: the baseline is the measurement
    m = data["measured"]
    assert isinstance(m, dict)
    n, k, d = 4, m["mean_concurrency_per_replica"], m["mean_stream_seconds"]
    killed = (2160 + 1080) * n * 1.25
    requests = n * k / d * 2_592_000
    row = data["baseline"]["rows"][0]  # type: ignore[index]
    assert row["streams_killed"] == pytest.approx(killed)
    assert row["burn"] == pytest.approx(killed / (0.001 * requests))
    assert data["baseline"]["break_even_stream_seconds"] == pytest.approx(1.2)  # type: ignore[index]


def test_typed_flags_win_and_the_measurement_is_printed_beside_them(tmp_path: Path) -> None:
    db = str(_incident(tmp_path))
    data = _budget("--from-db", "--db", db, "--crashes", "10", "--drain")
    assert data["inputs"]["crashes"] == 10  # type: ignore[index]
    assert data["input_sources"]["C"] == "typed"  # type: ignore[index]
    assert data["input_sources"]["drain"] == "typed"  # type: ignore[index]
    assert data["baseline"]["break_even_stream_seconds"] == pytest.approx(259.2)  # type: ignore[index]
    am = data["as_measured"]
    assert isinstance(am, dict)
    assert (am["crashes"], am["planned_restarts"], am["drain"]) == (2160.0, 1080.0, False)
    assert am["break_even_stream_seconds"] == pytest.approx(1.2)
    res = CliRunner().invoke(app, ["budget", "--from-db", "--db", db, "--crashes", "10"])
    assert res.exit_code == 0, res.stderr
    assert (
        "Measured from the restart signals: 4 crash(es), 2 planned restart(s) on 4 pod(s)"
        in res.stdout
    )
    assert "As measured: break-even 1.2 s" in res.stdout
    assert "beside the typed inputs' break-even 259.2 s" in res.stdout
    assert "C typed" in res.stdout
    assert "P measured" in res.stdout


def test_from_db_without_restart_signals_asks_for_crashes(tmp_path: Path) -> None:
    db = _workspace(tmp_path)
    res = CliRunner().invoke(app, ["budget", "--from-db", "--db", str(db)])
    assert res.exit_code == 2
    assert "relplan: error: --crashes: no crash was measured" in res.stderr
