"""`relplan ingest` and `relplan report PATH` take the same input flags (relplan/cli/options.py
`@input_flags`), and pass each one through to the ingest."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer import _click as click
from typer.main import get_command

from relplan.cli import app
from relplan.cli.options import GENERAL_FLAGS, input_flag_names
from relplan.ingest import registry
from relplan.ingest.base import IngestOptions
from relplan.ingest.detect import FORMATS
from tests.helpers.fast_cli import CliRunner
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest, write_lines

runner = CliRunner()
PUB = Path(__file__).resolve().parent / "data" / "published"
T0 = 1764460800.0  # 2025-11-30T00:00:00Z
# A plain-nginx format with millisecond times and the caller's headers (hand-made, as in
# tests/test_ingest_gateway_nginx.py).
NGINX_FMT = (
    '$remote_addr [$msec] "$request" $status $request_time "$http_idempotency_key"'
    ' "$http_x_stainless_retry_count" $upstream_addr $upstream_status $upstream_response_time'
)
# The flags issue 12 asks both commands to take (the user-facing names).
ISSUE_FLAGS = {
    "--kind",
    "--format",
    "--on-error",
    "--year",
    "--at",
    "--map",
    "--call-key",
    "--attempt-field",
    "--log-format",
    "--nginx-format",  # issue 23: the same option, by the name nginx users look for
    "--bench-start",
    "--call-id-field",
}


def _command(name: str) -> click.Command:
    root = get_command(app)
    ctx = click.Context(root)
    cmd = root.get_command(ctx, name)  # type: ignore[attr-defined]
    assert cmd is not None
    return cmd  # type: ignore[no-any-return]


def _input_options(name: str) -> dict[str, tuple[str, ...]]:
    """The input flags of a command: parameter name -> its option strings."""
    cmd = _command(name)
    flags = input_flag_names()
    return {
        p.name: tuple(p.opts)
        for p in cmd.get_params(click.Context(cmd))
        if p.param_type_name == "option" and p.name in flags
    }


def test_ingest_and_report_take_exactly_the_same_input_flags() -> None:
    ingest, report = _input_options("ingest"), _input_options("report")
    assert ingest == report
    assert set(ingest) == set(input_flag_names())
    assert {o for opts in ingest.values() for o in opts} == ISSUE_FLAGS


def test_compare_takes_every_input_flag_but_the_input_format() -> None:
    """`relplan compare` ingests input folders as `relplan ingest` would; its own `--format`
    is its output's, so `--format` is the one input flag it lacks."""
    ingest, compare = _input_options("ingest"), _input_options("compare")
    assert compare.pop("fmt") == ("--format",)  # compare's own: text|json
    assert {k: v for k, v in ingest.items() if k != "fmt"} == compare
    out = runner.invoke(app, ["compare", "--help"], terminal_width=400).stdout
    assert "Force the format" not in out


def test_compare_hands_its_input_flags_to_the_ingest_of_its_sides(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import relplan.compare

    got: dict[str, Any] = {}

    def fake_compare(specs: list[str], **kw: Any) -> Any:
        got.update(kw)
        raise SystemExit(0)

    monkeypatch.setattr(relplan.compare, "compare", fake_compare)
    args = ["--call-key", "http_x_relplan_call", "--year", "2026", "--on-error", "skip"]
    res = runner.invoke(app, ["compare", str(tmp_path), str(tmp_path), *args])
    assert res.exit_code == 0, res.output
    assert got["inputs"] == IngestOptions(
        on_error="skip", call_key="http_x_relplan_call", year=2026
    )


def test_the_input_flags_are_the_general_ones_and_the_formats_declarations() -> None:
    """Each format's own flag is made from its declaration (relplan/ingest/adapter.InputOption):
    its names, its help and its default are the declared ones."""
    cmd = _command("ingest")
    params = {p.name: p for p in cmd.get_params(click.Context(cmd))}
    for name in GENERAL_FLAGS:
        assert name in params
    declared = registry.input_options()
    assert set(declared) == set(input_flag_names()) - set(GENERAL_FLAGS)
    for field, o in declared.items():
        p = params[field]
        assert tuple(p.opts) == o.names
        assert p.help == o.help  # type: ignore[attr-defined]
        assert p.default == o.default


def test_a_format_option_is_set_by_keyword_and_an_unknown_one_refused(tmp_path: Path) -> None:
    from relplan.ingest.vllm.log import YEAR

    assert YEAR.of(IngestOptions(year=2024)) == 2024
    assert YEAR.of(IngestOptions()) is None  # the declared default
    assert IngestOptions(year=2024).replace(on_error="skip") == IngestOptions(
        year=2024, on_error="skip"
    )
    with pytest.raises(TypeError, match="no input option yaer"):
        ingest(tmp_path / "w.duckdb", PUB / "vllm_metrics_v1_prodstack318.prom", yaer=2024)


def test_the_format_help_lists_every_format_detect_knows() -> None:
    for name in ("ingest", "report"):
        res = runner.invoke(app, [name, "--help"], terminal_width=400)
        assert res.exit_code == 0
        line = next(ln for ln in res.stdout.splitlines() if ln.strip().startswith("--format"))
        listed = line.split("Force the format:", 1)[1].strip().rstrip(".").split(", ")
        assert listed == list(FORMATS)


# flag arguments -> the IngestOptions they must give (every flag once, two forms of a time).
PASS_THROUGH: list[tuple[list[str], dict[str, Any]]] = [
    (["--kind", "proxy"], {"kind": "proxy"}),
    (["--format", "nginx"], {"fmt": "nginx"}),
    (["--on-error", "skip"], {"on_error": "skip"}),
    (["--year", "2024"], {"year": 2024}),
    (["--at", "2025-11-30T00:00:05Z"], {"at": T0 + 5}),
    (["--at", str(T0 + 5)], {"at": T0 + 5}),
    (["--call-key", "Idempotency-Key"], {"call_key": "Idempotency-Key"}),
    (["--attempt-field", "x-stainless-retry-count"], {"attempt_field": "x-stainless-retry-count"}),
    (["--log-format", NGINX_FMT], {"log_format": NGINX_FMT}),
    (["--bench-start", "2025-11-30T00:00:00Z"], {"bench_start": T0}),
    (["--call-id-field", "x-call"], {"call_id_field": "x-call"}),
]


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, IngestOptions]:
    """Stands in for the ingest behind both commands and keeps the options each was given."""
    import relplan.ingest
    from relplan.report import pipeline

    got: dict[str, IngestOptions] = {}

    def fake_ingest(db: Path, paths: list[Path], opts: IngestOptions, progress: Any) -> Any:
        got["ingest"] = opts
        raise SystemExit(0)

    def fake_report(path: Path | None, **kw: Any) -> Any:
        got["report"] = kw["inputs"]
        raise SystemExit(0)

    monkeypatch.setattr(relplan.ingest, "ingest_paths", fake_ingest)
    monkeypatch.setattr(pipeline, "make_report", fake_report)
    monkeypatch.setenv("RELPLAN_DB", str(tmp_path / "w.duckdb"))
    return got


@pytest.mark.parametrize("command", ["ingest", "report"])
@pytest.mark.parametrize(("args", "expected"), PASS_THROUGH, ids=lambda v: str(v)[:30])
def test_each_input_flag_reaches_the_ingest_options(
    captured: dict[str, IngestOptions],
    tmp_path: Path,
    command: str,
    args: list[str],
    expected: dict[str, Any],
) -> None:
    res = runner.invoke(app, [command, str(tmp_path), *args])
    assert res.exit_code == 0, res.stderr
    assert captured[command] == IngestOptions(**expected)


@pytest.mark.parametrize("command", ["ingest", "report"])
def test_the_map_file_reaches_the_ingest_options_and_must_exist(
    captured: dict[str, IngestOptions], tmp_path: Path, command: str
) -> None:
    mapping = tmp_path / "gw.toml"
    mapping.write_text("")
    res = runner.invoke(app, [command, str(tmp_path), "--map", str(mapping)])
    assert res.exit_code == 0, res.stderr
    assert captured[command] == IngestOptions(map_file=mapping)
    res = runner.invoke(app, [command, str(tmp_path), "--map", str(tmp_path / "none.toml")])
    assert res.exit_code == 2
    assert "--map" in res.stderr
    assert "does not exist" in res.stderr


@pytest.mark.parametrize("command", ["ingest", "report"])
@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--on-error", "ignore"], "--on-error"),
        (["--at", "yesterday"], "--at"),
        (["--bench-start", "120"], "--bench-start"),
    ],
)
def test_a_bad_input_flag_is_the_same_usage_error_on_both_commands(
    captured: dict[str, IngestOptions], tmp_path: Path, command: str, args: list[str], flag: str
) -> None:
    res = runner.invoke(app, [command, str(tmp_path), *args])
    assert res.exit_code == 2
    assert res.stderr.startswith(f"relplan: error: {flag}: ")
    assert command not in captured


def _nginx_log(path: Path) -> Path:
    def line(ms: float, status: int, rt: float, key: str, retry: str, ups: str) -> str:
        return (
            f'10.0.0.1 [{ms:.3f}] "POST /v1/chat/completions HTTP/1.1" {status} {rt:.3f}'
            f' "{key}" "{retry}" {ups}'
        )

    return write_lines(
        path,
        [
            line(T0 + 30, 499, 30.0, "k1", "0", "10.0.0.7:80 - 30.000"),
            line(T0 + 33, 200, 2.0, "k1", "1", "10.0.0.8:80 200 2.000"),
            line(T0 + 40, 200, 2.5, "k2", "0", "10.0.0.7:80, 10.0.0.8:80 502, 200 0.500, 2.000"),
        ],
    )


ATTEMPTS = "select call_id, attempt, outcome, status from attempts order by call_id, attempt"
NGINX_ATTEMPTS = [
    ("k1", 0, "client_gone", None),
    ("k1", 1, "delivered", 200),
    ("k2", 0, "error", 502),
    ("k2", 1, "delivered", 200),
]


def test_ingest_reads_an_nginx_log_with_log_format_and_call_key(tmp_path: Path) -> None:
    log = _nginx_log(tmp_path / "access.log")
    db = tmp_path / "w.duckdb"
    args = ["--log-format", NGINX_FMT, "--call-key", "$http_idempotency_key"]
    res = runner.invoke(app, ["ingest", str(log), "--db", str(db), *args])
    assert res.exit_code == 0, res.stderr
    assert rows(db, ATTEMPTS) == NGINX_ATTEMPTS


@pytest.mark.slow
def test_report_reads_an_nginx_log_with_log_format_and_call_key(tmp_path: Path) -> None:
    log = _nginx_log(tmp_path / "access.log")
    db = tmp_path / "w.duckdb"
    args = ["--log-format", NGINX_FMT, "--call-key", "$http_idempotency_key"]
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", str(log), "--db", str(db), "--out", str(out), *args])
    assert res.exit_code == 0, res.stderr
    assert out.is_file()
    assert rows(db, ATTEMPTS) == NGINX_ATTEMPTS


def _two_scrapes(folder: Path) -> Path:
    """A scrape with no time in its name (it needs --at) and one named a minute later."""
    folder.mkdir()
    src = PUB / "vllm_metrics_v1_prodstack318.prom"
    shutil.copy(src, folder / "scrape.prom")
    later = folder / f"metrics-{int(T0) + 60}.prom"
    later.write_text(src.read_text(encoding="utf-8") + "# the next scrape\n", encoding="utf-8")
    return folder


SCRAPE_TIMES = "select distinct t from metric_samples order by t"


def test_ingest_times_an_unnamed_scrape_with_at(tmp_path: Path) -> None:
    folder = _two_scrapes(tmp_path / "scrapes")
    db = tmp_path / "w.duckdb"
    res = runner.invoke(app, ["ingest", str(folder), "--db", str(db), "--at", str(T0)])
    assert res.exit_code == 0, res.stderr
    assert rows(db, SCRAPE_TIMES) == [(T0,), (T0 + 60,)]


@pytest.mark.slow
def test_report_times_an_unnamed_scrape_with_at(tmp_path: Path) -> None:
    folder = _two_scrapes(tmp_path / "scrapes")
    db = tmp_path / "w.duckdb"
    out = tmp_path / "r.html"
    args = ["--at", "2025-11-30T00:00:00Z", "--db", str(db), "--out", str(out)]
    res = runner.invoke(app, ["report", str(folder), *args])
    assert res.exit_code == 0, res.stderr
    assert rows(db, SCRAPE_TIMES) == [(T0,), (T0 + 60,)]
    without = runner.invoke(app, ["report", str(folder), "--out", str(out)])
    assert without.exit_code == 2
    assert "--at TIME" in without.stderr


def test_the_live_pull_timeout_is_a_duration_flag_of_ingest() -> None:
    """`--timeout` takes the duration syntax and names itself in its error; `report` pulls
    nothing live and has no such flag."""
    res = runner.invoke(
        app,
        [
            "ingest",
            "--prometheus-url",
            "http://127.0.0.1:9",
            "--start",
            "2025-11-30T00:00:00Z",
            "--end",
            "2025-11-30T00:01:00Z",
            "--timeout",
            "soon",
        ],
    )
    assert res.exit_code == 2
    assert "--timeout" in res.stderr
    assert "--timeout" not in runner.invoke(app, ["report", "--help"], terminal_width=400).stdout


READERS_PROBE = """
import sys
from relplan.cli import main
sys.argv = ["relplan", *sys.argv[1:]]
try:
    main()
except SystemExit:
    pass
print("PROBE", any(m.startswith("relplan.ingest.gateways.") for m in sys.modules), file=sys.stderr)
"""


@pytest.mark.slow  # two workspaces and a compare in a new process: 2.5-3 s each, quiet
@pytest.mark.parametrize(
    ("extra", "loaded"),
    [([], False), (["--format", "json"], False), (["--year", "2026"], True), (["--help"], True)],
    ids=["own flags only", "own --format", "a format's flag", "help"],
)
def test_the_readers_load_only_for_a_command_line_naming_a_formats_flag(
    tmp_path: Path, extra: list[str], loaded: bool
) -> None:
    """InputsCommand discovers the formats (importing every reader) only when the command line
    names a flag the command does not declare itself, or asks for help; the formats' flags
    still parse and show (relplan/cli/options.py)."""
    import subprocess
    import sys

    from tests.helpers import restarts_incident

    a = restarts_incident.build(tmp_path / "a.duckdb")
    b = restarts_incident.build(tmp_path / "b.duckdb", with_gateway=False)
    done = subprocess.run(
        [sys.executable, "-c", READERS_PROBE, "compare", str(a), str(b), *extra],
        cwd=Path(__file__).resolve().parent.parent,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "RELPLAN_COMPARE_CACHE": "0"},
    )
    assert done.stderr.strip().splitlines()[-1] == f"PROBE {loaded}", done.stderr
    if extra == ["--help"]:
        assert "--call-key" in done.stdout
    else:  # compared: the text's or the JSON's baseline line
        assert "baseline: a" in done.stdout or '"baseline": "a"' in done.stdout, done.stderr
