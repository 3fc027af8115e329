"""The CLI layer: exit codes, stdout vs stderr, help examples."""

from __future__ import annotations

import json

import pytest
from typer.main import get_command

from relplan.cli import app
from tests.helpers.fast_cli import CliRunner

runner = CliRunner()


def test_budget_as_typed_in_the_issue_prints_the_table_and_exits_zero() -> None:
    res = runner.invoke(app, ["budget", "--crashes", "10", "--concurrency", "40"])
    assert res.exit_code == 0, res.stderr
    assert res.stderr == ""
    assert "600 s" in res.stdout
    assert "blows the budget 2.3× on crashes alone" in res.stdout
    assert "Break-even stream duration: 259.2 s" in res.stdout
    assert "480 replica-minutes" in res.stdout


def test_budget_json_is_the_documented_model() -> None:
    res = runner.invoke(
        app,
        ["budget", "--crashes", "10", "--concurrency", "40", "--stream-seconds", "300", "--json"],
    )
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert set(data) == {
        "inputs",
        "measured",
        "restarts",
        "input_sources",
        "baseline",
        "what_if",
        "as_measured",
    }
    assert data["measured"] is None
    assert (data["restarts"], data["input_sources"], data["as_measured"]) == (None, {}, None)
    assert data["inputs"]["window_s"] == 2_592_000
    assert data["baseline"]["rows"][0]["burn"] == pytest.approx(1.15741, rel=1e-5)
    assert [c["name"] for c in data["what_if"]] == ["halve crashes", "drain planned restarts"]


@pytest.mark.parametrize(
    ("window", "seconds"), [("30d", 2_592_000), ("720h", 2_592_000), ("4w", 2_419_200)]
)
def test_budget_window_units(window: str, seconds: int) -> None:
    res = runner.invoke(
        app, ["budget", "--crashes", "1", "--concurrency", "1", "--window", window, "--json"]
    )
    assert json.loads(res.stdout)["inputs"]["window_s"] == seconds


def test_slo_as_fraction_equals_slo_as_percent() -> None:
    a = runner.invoke(
        app, ["budget", "--crashes", "3", "--concurrency", "5", "--slo", "0.999", "--json"]
    )
    b = runner.invoke(
        app, ["budget", "--crashes", "3", "--concurrency", "5", "--slo", "99.9", "--json"]
    )
    assert json.loads(a.stdout)["baseline"] == json.loads(b.stdout)["baseline"]


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["--slo", "100"], "--slo"),
        (["--slo", "0"], "--slo"),
        (["--slo", "-5"], "--slo"),
        (["--window", "30x"], "--window"),
        (["--window", "0d"], "--window"),
        (["--crashes", "-1"], "--crashes"),
        (["--crashes", "0"], "--crashes"),
        (["--concurrency", "0"], "--concurrency"),
        (["--stream-seconds", "-10"], "--stream-seconds"),
        (["--replicas", "0"], "--replicas"),
        (["--restart-minutes", "-1"], "--restart-minutes"),
    ],
)
def test_budget_bad_inputs_are_one_line_usage_errors_naming_the_flag(
    args: list[str], flag: str
) -> None:
    base = {"--crashes": "10", "--concurrency": "40"}
    for i in range(0, len(args), 2):
        base[args[i]] = args[i + 1]
    argv = ["budget", *[x for kv in base.items() for x in kv]]
    res = runner.invoke(app, argv)
    assert res.exit_code == 2
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"relplan: error: {flag}")
    assert "Traceback" not in res.stderr


def test_missing_required_flag_is_a_usage_error() -> None:
    res = runner.invoke(app, ["budget", "--crashes", "10"])
    assert res.exit_code == 2
    assert res.stderr.startswith("relplan: error: ")
    assert "--concurrency" in res.stderr


def test_pulse_example_from_the_issue() -> None:
    res = runner.invoke(
        app,
        [
            "pulse",
            "--capacity",
            "2.78",
            "--base",
            "0.6",
            "--pulse",
            "2.7",
            "--pulse-seconds",
            "107",
            "--deadline",
            "120",
            "--retries",
            "3",
        ],
    )
    assert res.exit_code == 0
    assert "Verdict: collapse risk" in res.stdout
    assert "181.9 s of engine time" in res.stdout
    assert "454.8 s" in res.stdout


def test_pulse_json_hold_at_capacity_is_a_finding_not_an_error() -> None:
    res = runner.invoke(
        app,
        [
            "pulse",
            "--capacity",
            "3",
            "--pulse",
            "2",
            "--pulse-seconds",
            "60",
            "--hold",
            "1.2",
            "--json",
        ],
    )
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert data["verdict"] == "never drains"
    assert data["drain_seconds"] is None


@pytest.mark.parametrize("flag", ["--capacity", "--pulse", "--pulse-seconds", "--deadline"])
def test_pulse_rejects_non_positive_values(flag: str) -> None:
    args = {"--capacity": "2.78", "--pulse": "2.7", "--pulse-seconds": "107", "--deadline": "120"}
    args[flag] = "0"
    res = runner.invoke(app, ["pulse", *[x for kv in args.items() for x in kv]])
    assert res.exit_code == 2
    assert res.stderr.startswith(f"relplan: error: {flag}")


def _all_commands() -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []

    def walk(cmd: object, path: str) -> None:
        sub = getattr(cmd, "commands", None)
        if sub:
            for name, child in sub.items():
                walk(child, f"{path} {name}".strip())
        else:
            out.append((path, cmd))

    walk(get_command(app), "")
    return out


@pytest.mark.parametrize("path", [p for p, _ in _all_commands()])
def test_every_command_help_has_an_example(path: str) -> None:
    res = runner.invoke(app, [*path.split(), "--help"])
    assert res.exit_code == 0
    assert "Example: relplan " in res.stdout, f"`relplan {path} --help` has no Example:"


def test_bare_relplan_prints_help_and_exits_zero() -> None:
    res = runner.invoke(app, [])
    assert res.exit_code == 0
    assert res.stdout.startswith("Usage: relplan [OPTIONS] COMMAND")
    assert "budget" in res.stdout
    assert res.stderr == ""


@pytest.mark.parametrize("group", ["alerts", "simulate"])
def test_a_bare_command_group_prints_its_help_and_exits_zero(group: str) -> None:
    res = runner.invoke(app, [group])
    assert res.exit_code == 0
    assert res.stdout.startswith(f"Usage: relplan {group} [OPTIONS] COMMAND")


@pytest.mark.parametrize("path", ["", *(p for p, _ in _all_commands())])
def test_dash_h_is_help_everywhere(path: str) -> None:
    short = runner.invoke(app, [*path.split(), "-h"])
    long = runner.invoke(app, [*path.split(), "--help"])
    assert short.exit_code == 0, short.stderr
    assert short.stdout == long.stdout
    assert "-h, --help" in short.stdout


def test_json_means_one_json_object_on_stdout_in_every_command() -> None:
    with_json = []
    for path, cmd in _all_commands():
        for param in cmd.params:  # type: ignore[attr-defined]
            if "--json" in param.opts:
                assert param.is_flag, f"relplan {path}: --json takes no value"
                assert param.help == "Print one JSON object on stdout instead of tables."
                with_json.append(path)
    assert {"budget", "pulse", "analyze", "report", "alerts eval"} <= set(with_json)


def test_report_writes_its_data_file_with_data_json() -> None:
    res = runner.invoke(app, ["report", "--help"])
    assert "--data-json FILE" in res.stdout


def _interrupting(exc: BaseException) -> object:
    def plan(*_: object) -> object:
        raise exc

    return plan


@pytest.mark.parametrize(
    "exc",
    [KeyboardInterrupt(), RuntimeError("Query interrupted")],
    ids=["KeyboardInterrupt", "RuntimeError"],
)
def test_ctrl_c_is_one_line_and_exit_130(
    exc: BaseException, monkeypatch: pytest.MonkeyPatch
) -> None:
    from relplan.planning import budget

    monkeypatch.setattr(budget, "plan_budget", _interrupting(exc))
    res = runner.invoke(app, ["budget", "--crashes", "10", "--concurrency", "40"])
    assert res.exit_code == 130
    assert res.stdout == ""
    assert res.stderr.strip() == "relplan: interrupted; nothing stored"


def test_duckdb_interrupt_is_exit_130(monkeypatch: pytest.MonkeyPatch) -> None:
    import duckdb

    from relplan.planning import budget

    monkeypatch.setattr(budget, "plan_budget", _interrupting(duckdb.InterruptException("x")))
    res = runner.invoke(app, ["budget", "--crashes", "10", "--concurrency", "40"])
    assert res.exit_code == 130
    assert res.stderr.strip() == "relplan: interrupted; nothing stored"


def test_an_unexpected_runtime_error_keeps_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    from relplan.planning import budget

    monkeypatch.setattr(budget, "plan_budget", _interrupting(RuntimeError("a bug")))
    res = runner.invoke(app, ["budget", "--crashes", "10", "--concurrency", "40"])
    assert res.exit_code == 1
    assert isinstance(res.exception, RuntimeError)


PULSE = ["pulse", "--capacity", "2.78", "--pulse", "2.7", "--pulse-seconds", "107", "--json"]


def test_pulse_deadline_takes_a_duration() -> None:
    minutes = runner.invoke(app, [*PULSE, "--deadline", "2m"])
    seconds = runner.invoke(app, [*PULSE, "--deadline", "120"])
    assert minutes.exit_code == 0, minutes.stderr
    assert json.loads(minutes.stdout) == json.loads(seconds.stdout)
    assert json.loads(minutes.stdout)["inputs"]["deadline_s"] == 120
    bad = runner.invoke(app, [*PULSE, "--deadline", "soon"])
    assert bad.exit_code == 2
    assert bad.stderr.startswith("relplan: error: --deadline: expected a duration like 90")


def test_budget_window_bare_number_is_seconds_like_every_duration() -> None:
    res = runner.invoke(
        app, ["budget", "--crashes", "1", "--concurrency", "1", "--window", "86400", "--json"]
    )
    assert json.loads(res.stdout)["inputs"]["window_s"] == 86400


def test_live_pull_refuses_a_relative_start_naming_the_flag() -> None:
    res = runner.invoke(
        app,
        ["ingest", "--prometheus-url", "http://127.0.0.1:9", "--start", "120", "--end", "240"],
    )
    assert res.exit_code == 2
    assert res.stderr.startswith("relplan: error: --start: expected epoch seconds or an RFC 3339")


def test_alerts_eval_from_is_seconds_from_t0_not_1970(tmp_path: object) -> None:
    """`--from 600` is t0 + 600 s (t0: the first metric sample here), the same window as the
    epoch form; before, 600 was read as 1970 and the grid from then ran out of memory."""
    from pathlib import Path

    from tests.helpers.alerts_scenarios import T0, fill_workspace, storm_store

    db = Path(str(tmp_path)) / "w.duckdb"
    fill_workspace(db, storm_store())
    base = ["alerts", "eval", "--db", str(db), "--json"]
    relative = runner.invoke(app, [*base, "--from", "600", "--to", "15m"])
    absolute = runner.invoke(
        app, [*base, "--from", str(T0 / 1000 + 600), "--to", str(T0 / 1000 + 900)]
    )
    assert relative.exit_code == 0, relative.stderr
    assert json.loads(relative.stdout) == json.loads(absolute.stdout)
    assert json.loads(relative.stdout)["evaluations"] == 21


@pytest.mark.slow
def test_analyze_from_to_take_every_time_form_alike(tmp_path: object) -> None:
    """--from 60 / 1m / t0+60 epoch / RFC 3339 give one window; --bin and --step durations."""
    from pathlib import Path

    from tests.helpers.incident import build_incident

    db = build_incident(Path(str(tmp_path)) / "incident.duckdb")
    base = ["analyze", "--db", str(db), "--json", "--only", "delivery"]
    first = runner.invoke(app, base)
    t0 = json.loads(first.stdout)["context"]["t0"]
    forms = [
        ["--from", "60", "--to", "200"],
        ["--from", "1m", "--to", "200s"],
        ["--from", f"{t0 + 60}", "--to", f"{t0 + 200}"],
        ["--from", "2025-11-30T00:01:00Z", "--to", "2025-11-30T00:03:20+00:00"],
    ]
    contexts = []
    for form in forms:
        res = runner.invoke(app, [*base, *form, "--bin", "0.5m", "--step", "15"])
        assert res.exit_code == 0, res.stderr
        contexts.append(json.loads(res.stdout)["context"])
    assert all(c == contexts[0] for c in contexts)
    assert contexts[0]["window_start"] - t0 == 60
    assert contexts[0]["window_end"] - t0 == 200
    assert contexts[0]["bin_s"] == 30
