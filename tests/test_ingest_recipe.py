"""The recipe of docs/development.md ("Adding an input format"), proven: the toy `ping` format
of tests/toy_format/ping.py, registered inside these tests only, is detected, named in the
`--format` help, the catch-all message and `relplan inspect --formats`, ingests, and passes
every check of the contract suite (tests/helpers/contract.py) with no test written for it; its
own input option (`--ping-unit`, declared in that module only) is a flag of every command that
reads inputs and reaches its reader."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from relplan.cli import app
from relplan.errors import InputError
from relplan.ingest import registry
from tests.helpers import contract
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest
from tests.toy_format.ping import ADAPTER

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "tests/data/ingest/toy/ping.log"


@pytest.fixture
def toy() -> Iterator[None]:
    with registry.registered(ADAPTER):
        yield


def test_the_toy_is_unknown_outside_its_test() -> None:
    assert "ping" not in registry.adapters()


@pytest.mark.usefixtures("toy")
def test_a_registered_format_is_detected_and_ingested(tmp_path: Path) -> None:
    rep = ingest(tmp_path / "w.duckdb", EXAMPLE)
    assert [(s.kind, s.format, s.rows) for s in rep.sources] == [("proxy", "ping", 3)]
    got = rows(
        tmp_path / "w.duckdb", "select call_id, attempt, outcome from attempts order by 1, 2"
    )
    assert got == [("c1", 0, "error"), ("c1", 1, "delivered"), ("c2", 0, "delivered")]


@pytest.mark.usefixtures("toy")
def test_a_registered_format_appears_in_the_help_and_inspect() -> None:
    runner = CliRunner()
    help_text = runner.invoke(app, ["ingest", "--help"], terminal_width=400).output
    assert "ping" in " ".join(help_text.split())
    listed = runner.invoke(app, ["inspect", "--formats"], terminal_width=400)
    assert listed.exit_code == 0, listed.output
    assert any(line.split()[:2] == ["ping", "proxy"] for line in listed.output.splitlines())


@pytest.mark.usefixtures("toy")
@pytest.mark.parametrize("command", ["ingest", "report"])
def test_a_formats_own_option_is_a_flag_of_every_command_reading_inputs(command: str) -> None:
    out = CliRunner().invoke(app, [command, "--help"], terminal_width=400).output
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("--ping-unit"))
    assert "s|ms" in line
    assert "the unit of the duration field" in line


def test_a_formats_own_option_is_no_flag_while_it_is_not_registered(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["ingest", "--help"], terminal_width=400).output
    assert "--ping-unit" not in out
    with pytest.raises(TypeError, match="no input option ping_unit"):
        ingest(tmp_path / "w.duckdb", EXAMPLE, ping_unit=0.001)


@pytest.mark.usefixtures("toy")
def test_a_formats_own_option_reaches_its_reader(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    res = CliRunner().invoke(app, ["ingest", str(EXAMPLE), "--db", str(db), "--ping-unit", "ms"])
    assert res.exit_code == 0, res.output
    got = rows(db, "select call_id, attempt, round(t_end - t_sent, 4) from attempts order by 1, 2")
    assert got == [("c1", 0, 0.0005), ("c1", 1, 0.002), ("c2", 0, 0.0015)]
    bad = CliRunner().invoke(app, ["ingest", str(EXAMPLE), "--db", str(db), "--ping-unit", "h"])
    assert bad.exit_code == 2
    assert "relplan: error: --ping-unit: expected s or ms, got 'h'" in bad.stderr


@pytest.mark.usefixtures("toy")
def test_a_registered_format_is_among_the_closest_in_the_catch_all(tmp_path: Path) -> None:
    f = tmp_path / "odd.log"
    f.write_text("PONG 1 2 3\n")
    with pytest.raises(InputError, match=r"closest formats: .*\bping\b") as caught:
        ingest(tmp_path / "w.duckdb", f)
    assert "text whose lines start with 'PONG 1 2 3'" in str(caught.value)


@pytest.mark.usefixtures("toy")
def test_the_toy_passes_the_contract_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    contract.detects_its_own_examples("ping")
    for sub in ("bad", "twice", "batches"):
        (tmp_path / sub).mkdir()
    assert contract.a_bad_record_is_named_by_file_and_line(tmp_path / "bad", "ping") == "line"
    contract.ingesting_twice_adds_nothing(tmp_path / "twice", "ping")
    contract.streams_across_read_batches(tmp_path / "batches", monkeypatch, "ping")


@pytest.mark.parametrize("command", ["ingest", "report", "compare"])
def test_every_command_reading_inputs_offers_every_formats_own_flag(command: str) -> None:
    """The registry's flags (`--year`, `--map`, `--call-key`, ...) on each command with inputs."""
    out = " ".join(CliRunner().invoke(app, [command, "--help"], terminal_width=400).output.split())
    for option in registry.input_options().values():
        for flag in option.names:
            assert flag in out, f"{command} --help lacks {flag}"
