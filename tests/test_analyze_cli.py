"""`relplan analyze` through the CLI: output, JSON snapshot, errors and exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from relplan.cli import app
from tests.helpers.fast_cli import CliRunner

ROOT = Path(__file__).resolve().parent.parent

runner = CliRunner()


@pytest.fixture(scope="module")
def db(incident_db: Path) -> Path:
    """The workspace the CLI reads: the shared hand-built incident (conftest.py)."""
    return incident_db


@pytest.fixture
def snapshot_json(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    return snapshot.use_extension(JSONSnapshotExtension)


def test_json_output_of_the_fixture_workspace(db: Path, snapshot_json: SnapshotAssertion) -> None:
    res = runner.invoke(app, ["analyze", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert set(data) == {
        "context",
        "data_checks",
        "verdict",
        "amplification",
        "delivery",
        "wasted_prefill",
        "counters",
        "littles_law",
        "retry_timing",
        "capacity",
        "restarts",
        "health",
        "heavy_requests",
        "stuck",
        "skipped",
    }
    assert data == snapshot_json


def test_human_output_has_a_table_and_a_finding_per_analysis(db: Path) -> None:
    res = runner.invoke(app, ["analyze", "--db", str(db)])
    assert res.exit_code == 0, res.output
    out = res.stdout
    heads = [
        "Load and retry amplification",
        "Delivery and recovery",
        "Wasted prefill",
        "Counters",
        "Little's law",
        "Retry timing",
        "Skipped",
    ]
    seen = [h for line in out.splitlines() for h in heads if line.startswith(h)]
    assert list(dict.fromkeys(seen)) == heads  # each analysis once, in registry order
    assert not [line for line in out.splitlines() if re.match(r"[A-J]\. ", line)]
    assert "20 % of computed prefill went to executions that were later aborted" in out
    assert "capacity calibration needs a staged ramp" in out


def test_only_and_flags_override_run_json(db: Path) -> None:
    res = runner.invoke(
        app,
        [
            "analyze",
            "--db",
            str(db),
            "--json",
            "--only",
            "amplification",
            "--capacity",
            "0.1",
            "--deadline",
            "1m",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["delivery"] is None
    assert data["skipped"] == []
    assert data["context"]["capacity"] == 0.1
    assert data["context"]["deadline_s"] == 60
    run = data["amplification"]["windows"][0]
    assert run["calls_x_capacity"] == pytest.approx(0.5)


def test_from_to_accept_rfc3339(db: Path) -> None:
    res = runner.invoke(
        app,
        [
            "analyze",
            "--db",
            str(db),
            "--json",
            "--only",
            "delivery",
            "--from",
            "2025-11-30T00:01:00Z",
            "--to",
            "2025-11-30T00:03:20+00:00",
        ],
    )
    assert res.exit_code == 0, res.output
    ctx = json.loads(res.stdout)["context"]
    assert ctx["window_start"] - ctx["t0"] == 60
    assert ctx["window_end"] - ctx["t0"] == 200


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--only", "nope"], "relplan: error: --only: unknown analysis nope"),
        (["--phases", "base"], "relplan: error: --phases: expected NAME=START:END"),
        (["--capacity", "0"], "relplan: error: --capacity: must be greater than zero"),
        (["--deadline", "soon"], "relplan: error: --deadline: expected a duration"),
        (["--from", "yesterday"], "relplan: error: --from: expected seconds from t0"),
        (
            ["--from", "100", "--to", "50"],
            "relplan: error: --to: the window must end after it starts",
        ),
    ],
)
def test_bad_flags_are_one_line_errors_with_exit_2(db: Path, args: list[str], message: str) -> None:
    res = runner.invoke(app, ["analyze", "--db", str(db), *args])
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.startswith(message)
    assert len(res.stderr.strip().splitlines()) == 1


def test_missing_workspace_is_a_clear_error(tmp_path: Path) -> None:
    res = runner.invoke(app, ["analyze", "--db", str(tmp_path / "none.duckdb")])
    assert res.exit_code == 2
    assert "no workspace here; run `relplan ingest` first" in res.stderr


def test_help_has_an_example() -> None:
    res = runner.invoke(app, ["analyze", "--help"])
    assert res.exit_code == 0
    assert "Example: relplan analyze" in res.stdout


@pytest.mark.slow
def test_fail_on_turns_a_finding_into_exit_code_one(tmp_path: Path) -> None:
    """The sample incident is metastable and fires health signals: --fail-on not-recovered
    exits 1 with one `relplan: finding:` line, after printing the analysis as usual; a
    finding that is not there (recovered) leaves exit 0; an unknown name is a usage error."""
    from relplan.ingest import IngestOptions, ingest_paths

    db = tmp_path / "s.duckdb"
    ingest_paths(db, [ROOT / "sample_data" / "pulse-retry-cancel"], IngestOptions())
    hit = CliRunner().invoke(
        app, ["analyze", "--db", str(db), "--only", "delivery", "--fail-on", "not-recovered"]
    )
    assert hit.exit_code == 1
    assert "Delivery and recovery" in hit.stdout
    (line,) = hit.stderr.strip().splitlines()
    assert line.startswith("relplan: finding: not recovered (verdict metastable)")
    miss = CliRunner().invoke(
        app, ["analyze", "--db", str(db), "--only", "delivery", "--fail-on", "draining"]
    )
    assert miss.exit_code == 0
    assert miss.stderr == ""
    bad = CliRunner().invoke(app, ["analyze", "--db", str(db), "--fail-on", "bogus"])
    assert bad.exit_code == 2
    assert bad.stderr.startswith("relplan: error: --fail-on: unknown finding bogus")


def test_analyze_and_report_share_the_run_context_flags() -> None:
    """One declaration (@run_flags): both commands have the four flags, with the same option
    strings and help, and a bad value is refused the same way by each."""
    from typer import _click as click
    from typer.main import get_command

    from relplan.cli.options import RUN_FLAGS

    root = get_command(app)
    ctx = click.Context(root)

    def flags(name: str) -> dict[str, tuple[tuple[str, ...], str | None]]:
        cmd = root.get_command(ctx, name)  # type: ignore[attr-defined]
        return {
            p.name: (tuple(p.opts), getattr(p, "help", None))
            for p in cmd.params
            if p.name in RUN_FLAGS
        }

    assert (
        set(flags("analyze"))
        == set(RUN_FLAGS)
        == {
            "phases",
            "capacity",
            "deadline",
            "delivery_window",
        }
    )
    assert flags("analyze") == flags("report")
    for cmd in ("analyze", "report"):
        res = runner.invoke(app, [cmd, "--db", "nowhere.duckdb", "--delivery-window", "0"])
        assert res.exit_code == 2
        assert res.stderr.startswith("relplan: error: --delivery-window: must be longer than zero")
