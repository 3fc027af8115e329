"""`relplan compare` on real material: the sample incidents (sample_data/, simulated by
`relplan simulate`), seeds of one scenario, a run against itself, retries against none; the
CLI, its gate and JSON; the comparison page in headless Chromium.

The sample workspaces are ingested once per session (`templates`) and copied where a test
needs a file of its own.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from relplan.cli.root import app
from relplan.compare import compare
from relplan.compare.model import Comparison
from tests.helpers.browser import Browser
from tests.helpers.fast_cli import CliRunner

SAMPLES = Path(__file__).parent.parent / "sample_data"
runner = CliRunner()


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Workspaces of the two sample incidents, ingested once (read-only: copy to change)."""
    from relplan.ingest import IngestOptions, ingest_paths

    out = {}
    root = tmp_path_factory.mktemp("compare-templates")
    for name in ("pulse-retry-cancel", "pulse-retry-coalesce"):
        db = root / f"{name.split('-')[-1]}.duckdb"
        ingest_paths(db, [SAMPLES / name], IngestOptions())
        out[name.split("-")[-1]] = db
    return out


@pytest.fixture(scope="session")
def cancel_vs_coalesce(templates: dict[str, Path]) -> Comparison:
    return compare([str(templates["cancel"]), str(templates["coalesce"])])


def _row(c: Comparison, name: str) -> tuple[float | None, str, bool | None]:
    r = next(r for r in c.figures if r.name == name)
    d = r.differences[0]
    return d.diff, d.direction, d.beyond_noise


@pytest.mark.slow
def test_a_run_compared_with_itself_shows_nothing_beyond_noise(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    copy = shutil.copy(templates["cancel"], tmp_path / "again.duckdb")
    c = compare([str(templates["cancel"]), str(copy)])
    assert c.figures, "no figure compared"
    for r in c.figures:
        d = r.differences[0]
        assert d.diff == 0, r.name
        assert d.direction == "same", r.name
        assert d.beyond_noise is not True, r.name
    assert [s.runs[0].verdict for s in c.sides] == ["metastable", "metastable"]


@pytest.mark.slow
def test_coalescing_retries_against_the_incident_goes_the_expected_way(
    cancel_vs_coalesce: Comparison,
) -> None:
    c = cancel_vs_coalesce
    assert [s.runs[0].verdict for s in c.sides] == ["metastable", "recovered"]
    assert c.alignment == "by name"
    assert [p.name for p in c.phases] == ["run", "steady", "base", "pulse", "hold"]
    for name in ("on_time.hold", "delivered.hold", "delivered.run"):
        diff, direction, beyond = _row(c, name)
        assert (diff is not None and diff > 0.3, direction, beyond) == (True, "better", True), name
    for name in ("executions_per_call.hold", "retry_share.hold", "queue_wait.steady"):
        diff, direction, beyond = _row(c, name)
        assert (diff is not None and diff < 0, direction, beyond) == (True, "better", True), name
    # before the pulse nothing differs: the same arrivals, no retries yet
    assert _row(c, "on_time.base") == (0.0, "same", False)
    # figures one side lacks are listed with the reason, never compared
    missing = {n.name: n for n in c.not_compared}
    assert "did not recover" in missing["recovery_s"].reason
    assert missing["recovery_s"].supported_by == ["coalesce"]
    # the simulator writes no latency histograms and no restart signals
    assert missing["ttft_p90.hold"].reason == (
        "cancel, coalesce: no vllm:time_to_first_token_seconds histogram"
    )
    assert missing["crashes_per_30d"].reason.startswith("cancel, coalesce: restarts did not run: ")
    assert missing["error_budget_burn"].supported_by == []
    # drained after is compared: both runs drained once the load stopped
    diff, direction, beyond = _row(c, "drain_s")
    assert (diff is not None and diff < -300, direction, beyond) == (True, "better", None)
    # bands name their method
    row = next(r for r in c.figures if r.name == "on_time.hold")
    assert row.values[0].method.startswith("bootstrap over calls (1,234)")
    # the text gives one line per side and method, and per reason for the figures left out
    from relplan.compare.figures import FAMILIES
    from relplan.text.compare import band_methods, not_compared_lines

    assert "cancel: bootstrap over calls (199, 804, 1,029, 1,234, 2,237), 400 resamples" in (
        band_methods(c)
    )
    assert (
        "(ttft_p50, ttft_p90, ttft_p99).{run, steady, base, pulse, hold}",
        "cancel, coalesce: no vllm:time_to_first_token_seconds histogram",
    ) in not_compared_lines(c, FAMILIES)


@pytest.mark.slow
def test_the_gate_fails_a_real_regression_and_passes_a_rerun(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    gate = ["--fail-if", "on_time.hold < -5pt", "--fail-if", "executions_per_call.hold > +10%"]
    res = runner.invoke(
        app, ["compare", str(templates["coalesce"]), str(templates["cancel"]), *gate]
    )
    assert res.exit_code == 1, res.output
    assert re.search(r"on_time\.hold < -5pt \(cancel: -\d+\.\dpt\)", res.stderr)
    assert re.search(r"executions_per_call\.hold > \+10% \(cancel: \+\d+\.\d%\)", res.stderr)
    assert "FAIL on_time.hold < -5pt" in res.stdout
    rerun = shutil.copy(templates["coalesce"], tmp_path / "rerun.duckdb")
    res = runner.invoke(app, ["compare", str(templates["coalesce"]), str(rerun), *gate])
    assert res.exit_code == 0, res.output
    assert "ok   on_time.hold < -5pt" in res.stdout


@pytest.mark.slow
def test_json_output_is_the_documented_model(templates: dict[str, Path]) -> None:
    res = runner.invoke(
        app,
        ["compare", str(templates["cancel"]), str(templates["coalesce"]), "--format", "json"],
    )
    assert res.exit_code == 0, res.output
    c = Comparison.model_validate(json.loads(res.stdout))
    assert c.schema_version == 1
    assert c.baseline == "cancel"
    assert {p.measure for p in c.series} == {"delivered_per_s", "waiting", "executions_per_call"}
    listed = runner.invoke(
        app, ["compare", str(templates["cancel"]), str(templates["coalesce"]), "--list-figures"]
    )
    assert listed.stdout.split() == [r.name for r in c.figures]


def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path) -> None:
    res = runner.invoke(app, ["compare", "a", "b", "--fail-if", "on_time.hold < -5x"])
    assert res.exit_code == 2
    assert res.stderr.strip() == (
        "relplan: error: --fail-if: 'on_time.hold < -5x': position 18:"
        " expected a unit (pt or %), `vs SIDE` or the end"
    )
    res = runner.invoke(app, ["compare", str(tmp_path / "nothing"), str(tmp_path)])
    assert res.exit_code == 2
    assert re.fullmatch(r"relplan: error: .*nothing: no such file or folder\n", res.stderr)
    res = runner.invoke(app, ["compare", str(tmp_path)])
    assert res.exit_code == 2
    assert "at least two sides" in res.stderr
    res = runner.invoke(app, ["compare", "--list-figures"])
    assert res.exit_code == 0
    assert "on_time.WINDOW" in res.stdout


@pytest.mark.slow
def test_an_unknown_figure_in_the_gate_is_a_usage_error(templates: dict[str, Path]) -> None:
    a, b = str(templates["cancel"]), str(templates["coalesce"])
    res = runner.invoke(app, ["compare", a, b, "--fail-if", "recovery_s > 10"])
    assert res.exit_code == 2
    assert "'recovery_s' is not a figure both sides have" in res.stderr
    res = runner.invoke(app, ["compare", a, b, "--fail-if", "queue_wait.hold > 5pt"])
    assert res.exit_code == 2
    assert "pt applies to shares" in res.stderr


@pytest.mark.slow
def test_input_folders_and_drill_outputs_are_sides_like_workspaces(
    templates: dict[str, Path], tmp_path: Path
) -> None:
    drill = tmp_path / "drill-out"
    drill.mkdir()
    shutil.copy(templates["cancel"], drill / "drill.duckdb")
    c = compare([str(SAMPLES / "pulse-retry-cancel"), str(drill)])
    assert [r.kind for s in c.sides for r in s.runs] == ["input folder", "drill output"]
    assert all(r.differences[0].diff == 0 for r in c.figures)


@pytest.mark.slow
def test_seeds_of_one_scenario_stay_inside_their_bands(
    simulated_run: Callable[[str, int], Path], tmp_path: Path
) -> None:
    """Seeds 2 and 3 grouped (their spread) against seed 1 (sample_data): no figure moves
    beyond noise; and a folder of seeds is one side of two runs."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    for s in (2, 3):
        shutil.copytree(simulated_run("pulse-retry-coalesce", s), seeds / f"seed{s}")
    c = compare([str(SAMPLES / "pulse-retry-coalesce"), str(seeds)])
    assert len(c.sides[1].runs) == 2
    assert c.figures
    beyond = [r.name for r in c.figures if r.differences[0].beyond_noise]
    assert beyond == []
    grouped = compare(
        [str(SAMPLES / "pulse-retry-coalesce"), f"{seeds / 'seed2'},{seeds / 'seed3'}"]
    )
    assert len(grouped.sides[1].runs) == 2
    assert grouped.sides[1].label == "seed2+"  # a group is marked
    assert [(r.name, r.values) for r in grouped.figures] == [(r.name, r.values) for r in c.figures]


@pytest.mark.slow
def test_retries_against_no_retries_give_the_expected_directions(
    simulated_run: Callable[[str, int], Path], templates: dict[str, Path]
) -> None:
    c = compare([str(simulated_run("pulse-noretry", 1)), str(templates["cancel"])])
    for name in ("executions_per_call.hold", "retry_share.hold"):
        diff, direction, beyond = _row(c, name)
        assert (diff is not None and diff > 0, direction, beyond) == (True, "worse", True), name


def test_the_page_is_self_contained_and_renders_in_chromium(
    cancel_vs_coalesce: Comparison, tmp_path: Path, browser: Browser
) -> None:
    from relplan.compare.page import write_page

    page = write_page(cancel_vs_coalesce, tmp_path / "compare.html")
    html = page.read_text("utf-8")
    assert not re.search(r"""(src|href)=["']?https?:""", html)  # nothing fetched
    run = browser(page, "--dump-dom")
    assert run.console == [], run.console
    body = re.search(r"<body[^>]*>", run.stdout)
    assert body is not None
    assert 'data-charts-done="3"' in body.group(0)
    assert "data-chart-error" not in body.group(0)
    for name in ("delivered_per_s", "waiting", "executions_per_call"):
        block = run.stdout.split(f'id="chart-{name}"', 1)[1]
        assert block.startswith(' data-rendered="yes"') or 'data-rendered="yes"' in block[:200]
        assert "<svg" in block.split('<div class="chart"', 1)[0]
    assert "on_time.hold" in run.stdout
    assert "beyond noise" in run.stdout
    assert "metastable" in run.stdout
    assert "recovered" in run.stdout
