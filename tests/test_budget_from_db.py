"""`relplan budget --from-db`: K and d measured from the proxy log."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from relplan import workspace
from relplan.cli import app

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
