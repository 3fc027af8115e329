"""What each side argument names (relplan/compare/sides.py), and the text's small honesty
rules (relplan/compare/render.py): a relplan lab recording is one run, a folder of unlike
subfolders is refused, an empty workspace is named, no nonzero difference reads as zero."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from relplan.cli.root import app
from relplan.compare.model import Comparison, PhaseAlignment, SideInfo
from relplan.compare.render import fmt, phase_lines
from relplan.compare.sides import resolve
from relplan.errors import InputError

ROOT = Path(__file__).parent.parent
LAB = ROOT / "tests" / "data" / "lab"
SAMPLES = ROOT / "sample_data"


def test_a_lab_recording_is_one_run_of_the_operator_files_and_the_drill_plan() -> None:
    """tests/data/lab/README.md: operator/ (vLLM, nginx, Prometheus) and client/ (the drill's
    record and run.json) are two records of one run, not two seeds."""
    for folder in (LAB / "no-retries", LAB / "fresh" / "retry-budget"):
        (run,) = resolve(str(folder))
        assert (run.path, run.kind) == (folder, "lab recording")
    # a folder of recordings is a folder of runs, one per recording
    kinds = {r.kind for r in resolve(str(LAB / "fresh"))}
    assert kinds == {"lab recording"}
    # each record alone is still a run of its own
    assert [r.kind for r in resolve(str(LAB / "no-retries" / "operator"))] == ["input folder"]


def test_a_folder_of_unlike_runs_is_refused_with_what_each_holds(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed"
    shutil.copytree(SAMPLES / "pulse-retry-cancel", mixed / "sim")
    shutil.copytree(LAB / "no-retries" / "client", mixed / "drill")
    with pytest.raises(InputError) as e:
        resolve(str(mixed))
    assert str(e.value).startswith(f"{mixed}: its subfolders are not runs of one kind (")
    assert "drill/: attempts.jsonl, run.json" in str(e.value)
    assert "sim/: engine.parquet, metrics.om.txt, proxy.parquet, run.json" in str(e.value)
    res = CliRunner().invoke(app, ["compare", str(mixed), str(SAMPLES / "pulse-retry-cancel")])
    assert res.exit_code == 2
    assert res.stderr.startswith(f"relplan: error: {mixed}: its subfolders are not runs")
    assert len(res.stderr.strip().splitlines()) == 1


def test_an_empty_workspace_is_named(tmp_path: Path) -> None:
    from relplan.workspace import open_workspace

    empty = tmp_path / "empty.duckdb"
    with open_workspace(empty):
        pass
    res = CliRunner().invoke(
        app,
        ["compare", str(SAMPLES / "pulse-retry-cancel"), str(empty)],
        env={"RELPLAN_COMPARE_CACHE": "0"},
    )
    assert res.exit_code == 2
    assert res.stderr == (
        f"relplan: error: {empty}: the workspace holds no proxy log, engine trace or metrics;"
        " run `relplan ingest` first\n"
    )


def test_no_nonzero_difference_reads_as_zero() -> None:
    assert fmt(-0.023, "s", signed=True) == "-0.023 s"  # was "-0.0 s" beside "better"
    assert fmt(0.00012, "share", signed=True) == "+0.012pt"
    assert fmt(0.0, "share", signed=True) == "+0.0pt"
    assert fmt(-1.25, "s", signed=True) == "-1.2 s"
    assert fmt(0.861, "share") == "86.1 %"


def test_windows_aligned_under_other_names_are_spelled_out() -> None:
    c = Comparison(
        baseline="lab",
        sides=[SideInfo(label=x, spec=x, runs=[]) for x in ("lab", "sim")],
        alignment="by detected overload",
        phases=[
            PhaseAlignment(name="run", per_side=[["run"], ["run"]]),
            PhaseAlignment(name="overload", per_side=[["overload"], ["pulse"]]),
            PhaseAlignment(name="after", per_side=[["after"], ["hold", "after"]]),
            PhaseAlignment(name="base", per_side=[["base"], ["base"]]),
        ],
        figures=[],
        not_compared=[],
    )
    assert phase_lines(c) == [
        "overload = lab: overload; sim: pulse",
        "after = lab: after; sim: after, hold",
    ]


def test_the_documented_json_schema_is_the_model() -> None:
    from relplan.compare.model import schema_markdown

    doc = (ROOT / "docs" / "compare.md").read_text("utf-8")
    assert schema_markdown() + "\n" in doc
