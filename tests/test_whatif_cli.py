"""`relplan whatif` and `relplan whatif fit` on the command line: output, flags, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relplan.cli import app
from tests.helpers.fast_cli import CliRunner
from tests.test_whatif_fit import _write_incident

runner = CliRunner()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_incident(tmp_path_factory.mktemp("whatif-cli") / "in")


def test_fit_writes_the_scenario_and_its_calls_and_prints_the_provenance(
    db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "scenario.toml"
    res = runner.invoke(app, ["whatif", "fit", "--db", str(db), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert out.is_file()
    assert (tmp_path / "scenario.calls.jsonl").is_file()
    assert "deadline 30 s" in res.stdout
    assert "backoff uniform 0.5-2 s" in res.stdout


def test_fit_json_names_the_files_and_every_part(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "s.toml"
    res = runner.invoke(app, ["whatif", "fit", "--db", str(db), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["scenario"] == str(out)
    assert {p["part"] for p in data["fit"]} == {
        "arrivals",
        "lengths",
        "client",
        "proxy",
        "engine",
        "capacity",
    }


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--backoff", "3:1"], "--backoff"),
        (["--backoff", "fast"], "--backoff"),
        (["--max-retries", "-1"], "--max-retries"),
        (["--out-is-yaml"], "--out"),
    ],
)
def test_bad_flags_are_one_line_errors(
    db: Path, tmp_path: Path, args: list[str], flag: str
) -> None:
    out = tmp_path / ("s.yaml" if args == ["--out-is-yaml"] else "s.toml")
    extra = [] if args == ["--out-is-yaml"] else args
    res = runner.invoke(app, ["whatif", "fit", "--db", str(db), "--out", str(out), *extra])
    assert res.exit_code == 2
    assert res.stderr.startswith(f"relplan: error: {flag}")


def test_an_unknown_control_is_refused_with_the_known_ones(db: Path) -> None:
    res = runner.invoke(app, ["whatif", "--db", str(db), "--control", "magic", "--jobs", "1"])
    assert res.exit_code == 2
    assert "unknown control magic" in res.stderr
    assert "no-retries" in res.stderr


@pytest.mark.slow
def test_whatif_json_has_the_check_the_controls_and_the_settings(db: Path) -> None:
    res = runner.invoke(
        app,
        [
            "whatif",
            "--db",
            str(db),
            "--control",
            "no-retries",
            "--seeds",
            "1",
            "--jobs",
            "1",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert set(data) >= {"fit", "check", "controls", "ranked", "settings"}
    assert [c["name"] for c in data["controls"]] == ["no-retries"]
    assert data["check"]["incident"]["windows"][-1]["window"] == "overload+later"
