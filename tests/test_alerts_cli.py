"""`relplan alerts export | slo | eval`: output, files, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from relplan.cli import app
from tests.helpers.alerts_scenarios import T0, fill_workspace, storm_store
from tests.helpers.fast_cli import CliRunner

runner = CliRunner()


def _error_line(res: object) -> str:
    lines = res.stderr.strip().splitlines()  # type: ignore[attr-defined]
    assert len(lines) == 1, lines
    assert res.stdout == ""  # type: ignore[attr-defined]
    assert res.exit_code == 2  # type: ignore[attr-defined]
    assert "Traceback" not in lines[0]
    return lines[0]


def test_export_prints_a_rule_file_with_every_signal() -> None:
    res = runner.invoke(app, ["alerts", "export", "--replica-label", "pod"])
    assert res.exit_code == 0, res.stderr
    doc = yaml.safe_load(res.stdout)
    names = [r["alert"] for g in doc["groups"] for r in g["rules"]]
    assert names == [
        "RelplanPreemptionStorm",
        "RelplanCacheFullWhileQueueing",
        "RelplanQueueGrowing",
        "RelplanStuckReplica",
        "RelplanCounterDivergence",
        "RelplanRetryAmplification",
    ]
    for g in doc["groups"]:
        for r in g["rules"]:
            assert set(r["annotations"]) == {"summary", "description", "runbook"}
            assert "relplan " in r["annotations"]["runbook"]
    first = doc["groups"][0]["rules"][0]
    assert first["expr"] == "sum by (pod) (rate(vllm:num_preemptions_total[5m])) > 0.5"
    assert first["for"] == "1m"


def test_export_thresholds_and_for_durations_are_configurable() -> None:
    res = runner.invoke(
        app,
        [
            "alerts",
            "export",
            "--thresholds",
            "preemption_rate=2,shortfall=0.3",
            "--threshold",
            "for_stuck_replica=5m",
            "--no-proxy",
        ],
    )
    assert res.exit_code == 0, res.stderr
    rules = {r["alert"]: r for g in yaml.safe_load(res.stdout)["groups"] for r in g["rules"]}
    assert rules["RelplanPreemptionStorm"]["expr"].endswith("> 2")
    assert "> 0.3 and on (instance)" in rules["RelplanCounterDivergence"]["expr"]
    assert rules["RelplanStuckReplica"]["for"] == "5m"
    assert "RelplanRetryAmplification" not in rules


def test_export_to_a_file_says_where(tmp_path: Path) -> None:
    out = tmp_path / "rules.yml"
    res = runner.invoke(app, ["alerts", "export", "--out", str(out)])
    assert res.exit_code == 0, res.stderr
    assert (
        res.stdout.strip()
        == f"wrote {out}: 6 alerting rules; check with: promtool check rules {out}"
    )
    assert yaml.safe_load(out.read_text())["groups"][0]["name"] == "relplan-vllm-health"


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (["--threshold", "nope=1"], "relplan: error: --threshold: expected key=value"),
        (["--threshold", "shortfall=abc"], "relplan: error: --threshold: shortfall: not a number"),
        (["--threshold", "shortfall=1.5"], "relplan: error: --threshold:"),
        (["--replica-label", "my-pod"], "relplan: error: --replica-label: not a Prometheus label"),
        (["--out", "/nonexistent/dir/rules.yml"], "relplan: error: --out: directory"),
    ],
)
def test_export_bad_flags_are_one_line_errors(args: list[str], start: str) -> None:
    line = _error_line(runner.invoke(app, ["alerts", "export", *args]))
    assert line.startswith(start), line


def test_slo_writes_recording_rules_and_two_alerts() -> None:
    res = runner.invoke(
        app,
        [
            "alerts",
            "slo",
            "--slo",
            "99.9",
            "--window",
            "30d",
            "--errors",
            'sum(rate(http_requests_total{code=~"5.."}[$window]))',
            "--total",
            "http_requests_total",
        ],
    )
    assert res.exit_code == 0, res.stderr
    (group,) = yaml.safe_load(res.stdout)["groups"]
    records = [r["record"] for r in group["rules"] if "record" in r]
    assert records == [
        f"slo:sli_error:ratio_rate{w}" for w in ("5m", "30m", "1h", "2h", "6h", "1d", "3d")
    ]
    alerts = {r["alert"]: r for r in group["rules"] if "alert" in r}
    assert set(alerts) == {"SLOErrorBudgetBurnPage", "SLOErrorBudgetBurnTicket"}
    page = alerts["SLOErrorBudgetBurnPage"]["expr"]
    assert 'slo:sli_error:ratio_rate1h{slo="relplan"} / 0.001 > 14.4' in page
    assert 'slo:sli_error:ratio_rate30m{slo="relplan"} / 0.001 > 6' in page
    assert "sum(rate(http_requests_total[1h]))" in group["rules"][2]["expr"]


def test_slo_burn_rates_scale_with_the_window() -> None:
    """7 days: 2 % x 168 h / 1 h = 3.36, 5 % x 168/6 = 1.4, 10 % x 168/24 = 0.7,
    10 % x 168/72 = 0.233333 (6 significant digits)."""
    res = runner.invoke(
        app,
        [
            "alerts",
            "slo",
            "--slo",
            "0.99",
            "--window",
            "7d",
            "--errors",
            "e",
            "--total",
            "t",
            "--json",
        ],
    )
    assert res.exit_code == 0, res.stderr
    data = json.loads(res.stdout)
    assert [t["burn_rate"] for t in data["tiers"]] == [3.36, 1.4, 0.7, 0.233333]
    assert data["error_budget"] == 0.01


def test_slo_to_a_file_prints_the_tiers(tmp_path: Path) -> None:
    out = tmp_path / "slo.yml"
    res = runner.invoke(
        app,
        ["alerts", "slo", "--window", "2d", "--errors", "e", "--total", "t", "--out", str(out)],
    )
    assert res.exit_code == 0, res.stderr
    assert "Left out: ticket tier 10% in 3d: longer than the 2d SLO window." in res.stdout
    assert out.read_text().startswith("# SLO burn-rate rules")


@pytest.mark.parametrize(
    ("args", "start"),
    [
        (
            ["--errors", "rate(x[5m])", "--total", "t"],
            "relplan: error: --errors: expected a PromQL",
        ),
        (
            ["--errors", "e", "--total", "sum(rate(t[$window])"],
            "relplan: error: --total: unbalanced",
        ),
        (
            ["--errors", "e", "--total", "t", "--window", "30m"],
            "relplan: error: --window: 30m is shorter",
        ),
        (["--errors", "e", "--total", "t", "--slo", "100"], "relplan: error: --slo"),
        (["--errors", "e", "--total", "t", "--name", "a b"], "relplan: error: --name"),
    ],
)
def test_slo_bad_flags_are_one_line_errors(args: list[str], start: str) -> None:
    line = _error_line(runner.invoke(app, ["alerts", "slo", *args]))
    assert line.startswith(start), line


def test_eval_prints_the_firing_table(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    fill_workspace(db, storm_store())
    res = runner.invoke(
        app, ["alerts", "eval", "--db", str(db), "--threshold", "preemption_rate=0.1"]
    )
    assert res.exit_code == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0].startswith("Engine health: 61 evaluations every 15s")
    # times are wall-clock now (issue 13): the interval 420..615 s after the start lasts 195 s
    row = next(ln for ln in lines if ln.startswith("stuck_replica"))
    assert row.split()[1] == "c"
    assert row.count(" UTC") == 2
    assert row.rstrip().endswith("195 s firing")
    js = runner.invoke(
        app, ["alerts", "eval", "--db", str(db), "--json", "--from", str(T0 / 1000 + 600)]
    )
    assert json.loads(js.stdout)["evaluations"] == 21


def test_eval_without_a_workspace_or_metrics_is_a_one_line_error(tmp_path: Path) -> None:
    line = _error_line(
        runner.invoke(app, ["alerts", "eval", "--db", str(tmp_path / "none.duckdb")])
    )
    assert "no workspace here" in line
    from relplan import workspace

    workspace.connect(tmp_path / "empty.duckdb").close()
    line = _error_line(
        runner.invoke(app, ["alerts", "eval", "--db", str(tmp_path / "empty.duckdb")])
    )
    assert "needs vLLM metrics" in line
    line = _error_line(
        runner.invoke(
            app, ["alerts", "eval", "--db", str(tmp_path / "empty.duckdb"), "--step", "0s"]
        )
    )
    assert line.startswith("relplan: error: --step")


def test_eval_with_slo_flags_prints_the_burn_rates_and_the_burn_alerts(tmp_path: Path) -> None:
    from relplan.alerts.promql_series import make_labels

    store = storm_store()
    times = [T0 + 15_000 * i for i in range(60)]
    for reason, per_step in (("stop", 50.0), ("error", 10.0)):
        lab = make_labels("vllm:request_success_total", {"pod": "a", "finished_reason": reason})
        store.add(lab, times, [per_step * i for i in range(60)])
    db = tmp_path / "w.duckdb"
    fill_workspace(db, store)
    flags = [
        "--slo-errors",
        'sum(rate(vllm:request_success_total{finished_reason="error"}[$window]))',
        "--slo-total",
        "sum(rate(vllm:request_success_total[$window]))",
        "--slo",
        "99",
    ]
    res = runner.invoke(app, ["alerts", "eval", "--db", str(db), *flags])
    assert res.exit_code == 0, res.output
    # errors are 10 of 60 per step: an error ratio of 1/6, a burn rate of 16.7 on a 1 % budget
    assert "SLO relplan: peak burn rate per window: 5m 16.7x, 30m 16.7x, 1h 16.7x" in res.stdout
    assert "slo_burn_page" in res.stdout
    res = runner.invoke(app, ["alerts", "eval", "--db", str(db), "--slo-errors", "x"])
    assert res.exit_code == 2
    assert "--slo-total" in res.stderr
