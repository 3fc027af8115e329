"""Older and damaged workspaces on every command that opens one (issue 25).

A workspace whose schema was damaged (a table dropped or replaced by a view, a column dropped,
renamed or of another type), whose schema version is older than any this relplan migrates,
a truncated file and a file that is no DuckDB database: each command that opens a workspace
(ingest, analyze, inspect, report, whatif, compare, alerts eval, budget --from-db) ends with
one `relplan: error: FILE: ...` line naming what is wrong and how to rebuild, exit 2, no
traceback, and the file as it was. A version-1 workspace (no relplan_meta, no kube_events)
is read as it is and migrated by an ingest.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest

from relplan import workspace
from relplan.cli import app
from tests.helpers.fast_cli import CliRunner
from tests.helpers.fast_read import whole_state
from tests.helpers.ingest import ADAPTERS, INCIDENT

# How each case damages a good workspace, and what the error says.
DAMAGE: dict[str, tuple[str, str]] = {
    "table_dropped": ("drop table attempts", "damaged workspace: the table attempts is missing"),
    "v2_table_dropped": (
        "drop table kube_events",
        "damaged workspace: the table kube_events is missing",
    ),
    "table_is_a_view": (
        "drop table steps; create view steps as select 1 as step",
        "damaged workspace: the table steps is missing",
    ),
    "column_dropped": (
        "alter table attempts drop column t_sent",
        "damaged workspace: the column attempts.t_sent is missing",
    ),
    "column_renamed": (
        "alter table steps rename column t_done to t_finished",
        "damaged workspace: the column steps.t_done is missing",
    ),
    "column_type": (
        "alter table events alter t type varchar",
        "damaged workspace: the column events.t is VARCHAR; expected DOUBLE",
    ),
    "older_version": (
        "update relplan_meta set value = '0'",
        "the workspace has schema version 0, made by an older relplan",
    ),
}
FILE_DAMAGE = {
    "truncated": "cannot",
    "not_duckdb": "not a relplan workspace (a JSON file)",
}


def _commands(db: Path, out: Path) -> dict[str, list[str]]:
    return {
        "ingest": ["ingest", "--db", str(db), str(ADAPTERS / "scrape.log")],
        "analyze": ["analyze", "--db", str(db)],
        "inspect": ["inspect", "--db", str(db)],
        "report": ["report", "--db", str(db), "--out", str(out / "r.html")],
        "whatif": ["whatif", "--db", str(db), "--seeds", "1"],
        "compare": ["compare", str(db), str(db)],
        "alerts": ["alerts", "eval", "--db", str(db)],
        "budget": ["budget", "--from-db", "--db", str(db)],
    }


COMMANDS = list(_commands(Path("w"), Path(".")))
FAST = {"ingest"}  # the rest run in the slow loop


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("good") / "good.duckdb"
    files = [INCIDENT / f for f in ("proxy.jsonl", "engine.jsonl", "metrics.om.txt", "run.json")]
    done = CliRunner().invoke(app, ["ingest", "--db", str(db), *map(str, files)])
    assert done.exit_code == 0, done.output
    return db


def _damaged(good: Path, tmp: Path, case: str) -> Path:
    db = tmp / "w.duckdb"
    if case == "truncated":
        db.write_bytes(good.read_bytes()[:5000])
    elif case == "not_duckdb":
        db.write_bytes((INCIDENT / "proxy.jsonl").read_bytes())
    else:
        shutil.copy(good, db)
        con = duckdb.connect(str(db))
        con.execute(DAMAGE[case][0])
        con.close()
    return db


@pytest.fixture(scope="module")
def damaged(
    good: Path, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str], tuple[Path, Any]]:
    """Each case's damaged workspace, made once per module, and what it holds (its whole
    state where DuckDB reads it, else its bytes): a test runs its command on a byte copy and
    compares the copy's state after with this one."""
    kept: dict[str, tuple[Path, Any]] = {}

    def get(case: str) -> tuple[Path, Any]:
        if case not in kept:
            db = _damaged(good, tmp_path_factory.mktemp(case), case)
            kept[case] = (db, whole_state(db) if case in DAMAGE else db.read_bytes())
        return kept[case]

    return get


def _matrix() -> list[object]:
    out: list[object] = []
    for case in [*DAMAGE, *FILE_DAMAGE]:
        for command in COMMANDS:
            fast = command == "analyze" or (case == "column_type" and command == "ingest")
            out.append(
                pytest.param(
                    case, command, id=f"{case}-{command}", marks=() if fast else pytest.mark.slow
                )
            )
    return out


@pytest.mark.parametrize(("case", "command"), _matrix())
def test_a_damaged_workspace_is_one_clean_error_on_every_command(
    tmp_path: Path, damaged: Callable[[str], tuple[Path, Any]], case: str, command: str
) -> None:
    template, before = damaged(case)
    db = Path(shutil.copy(template, tmp_path / "w.duckdb"))
    said = DAMAGE[case][1] if case in DAMAGE else FILE_DAMAGE[case]
    readable = case in DAMAGE
    done = CliRunner().invoke(app, _commands(db, tmp_path)[command])
    err = done.stderr
    assert done.exit_code == 2, (err, done.stdout)
    assert err.startswith(f"relplan: error: {db}: "), err
    assert said in err, err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert (whole_state(db) if readable else db.read_bytes()) == before
    if case in DAMAGE and case != "older_version":
        assert "rebuild it from its inputs: relplan ingest --db NEW.duckdb" in err
    assert not (tmp_path / "r.html").exists()


def _version_1(good: Path, tmp: Path) -> Path:
    """A workspace as a relplan before schema versions made it: no relplan_meta, no
    kube_events."""
    db = tmp / "v1.duckdb"
    shutil.copy(good, db)
    con = duckdb.connect(str(db))
    con.execute("drop table relplan_meta; drop table kube_events")
    con.close()
    return db


@pytest.mark.parametrize(
    "command", [pytest.param(c, marks=() if c in FAST else pytest.mark.slow) for c in COMMANDS]
)
def test_a_version_1_workspace_is_read_as_it_is_and_ingest_migrates_it(
    tmp_path: Path, good: Path, command: str
) -> None:
    db = _version_1(good, tmp_path)
    before = whole_state(db)
    done = CliRunner().invoke(app, _commands(db, tmp_path)[command])
    assert "Traceback" not in done.stderr
    assert "damaged" not in done.stderr, done.stderr
    if command in ("analyze", "inspect", "report", "compare", "alerts", "ingest"):
        assert done.exit_code == 0, done.output
    after = whole_state(db)
    assert after is not None
    assert before is not None
    if command == "ingest":  # migrated: the version row and kube_events, the rest as it was
        assert after["relplan_meta"][1] == 1
        assert "kube_events" in after
        # schema version 3's columns of events and engine_stats (workspace.ADDED_IN_3)
        added = ("sources", "metric_samples", "metric_meta", "events", "engine_stats")
        assert [after[t][1] for t in ("events", "engine_stats")] == [
            before[t][1] for t in ("events", "engine_stats")
        ]
        assert {t: after[t] for t in before if t not in added} == {
            t: v for t, v in before.items() if t not in added
        }
    else:
        assert after == before
    con = duckdb.connect(str(db), read_only=True)
    try:
        version = con.execute(
            "select count(*) from duckdb_tables() where table_name = 'relplan_meta'"
        ).fetchone()
    finally:
        con.close()
    assert version == ((1,) if command == "ingest" else (0,))
    assert workspace.SCHEMA_VERSION == 3
