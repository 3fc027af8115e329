"""What each side argument names (relplan/compare/sides.py), and the text's small honesty
rules (relplan/text/compare.py): a relplan lab recording is one run, a folder of unlike
subfolders is refused, an empty workspace is named, no nonzero difference reads as zero."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from relplan.cli.root import app
from relplan.compare.model import Comparison, PhaseAlignment, SideInfo
from relplan.compare.sides import resolve
from relplan.errors import InputError
from relplan.text.compare import fmt, phase_lines
from tests.helpers.fast_cli import CliRunner

ROOT = Path(__file__).parent.parent
LAB = ROOT / "tests" / "data" / "lab"
SAMPLES = ROOT / "sample_data"


def test_a_lab_recording_is_one_run_of_the_operator_files_and_the_drill_plan() -> None:
    """tests/data/lab/README.md: operator/ (vLLM, nginx, Prometheus) and client/ (the drill's
    record and run.json) are two records of one run, not two seeds."""
    for folder in (LAB / "no-retries", LAB / "fresh" / "retry-budget"):
        (run,) = resolve(str(folder))
        assert (run.path, run.kind) == (folder, "lab recording")
    # a folder of recordings of different policies is not one side's spread
    with pytest.raises(InputError, match="its runs were made differently"):
        resolve(str(LAB / "fresh"))
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


@pytest.mark.slow
def test_an_empty_workspace_is_named(tmp_path: Path) -> None:
    from relplan.workspace import open_workspace

    empty = tmp_path / "empty.duckdb"
    with open_workspace(empty):
        pass
    again = shutil.copy(empty, tmp_path / "again.duckdb")
    res = CliRunner().invoke(
        app, ["compare", str(empty), str(again)], env={"RELPLAN_COMPARE_CACHE": "0"}
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


@pytest.mark.slow
def test_the_gate_on_lab_recordings_fails_on_a_band_and_leaves_a_bare_difference_unjudged(
    tmp_path: Path,
) -> None:
    """no-retries against retry-budget (tests/data/lab, as recorded): 0 % retries in the hold
    against 3.5 %, beyond noise, is an infinite relative rise and fails; drained after is one
    crossing a side, 15.1 s sooner: its line holds but is not judged. Each recording's
    ingest and analyses come from compare's cache in the suite's folder (tests/conftest.py),
    as in tests/test_compare_lab.py's pairwise table of the same folders."""
    res = CliRunner().invoke(
        app,
        [
            "compare",
            str(LAB / "no-retries"),
            str(LAB / "retry-budget"),
            "--fail-if",
            "retry_share.hold > +10%",
            "--fail-if",
            "drain_s < 0",
            "--format",
            "json",
            "--html",
            str(tmp_path / "c.html"),
        ],
    )
    assert res.exit_code == 1, res.output
    c = Comparison.model_validate_json(res.stdout)
    share, drain = c.gate
    assert (share.failed, share.judged, share.measured) == (True, True, "+inf% (baseline is 0)")
    assert (drain.failed, drain.judged) == (False, False)
    assert c.failed
    assert (tmp_path / "c.html").is_file()
    assert res.stderr.splitlines() == [
        "relplan: note: not judged, no noise band: drain_s < 0 (retry-budget: -15.12 s)"
        " (give several runs a side, e.g. seeds, for a spread)",
        "relplan: finding: retry_share.hold > +10% (retry-budget: +inf% (baseline is 0))",
    ]


def test_labels_stay_short_when_a_side_groups_the_baseline_with_more_runs() -> None:
    from relplan.compare.sides import labels_of

    paper = "tests/data/lab/paper"
    s2, s3 = f"{paper}/no-retries-s2", f"{paper}/no-retries-s3"
    # was 'work/wt/.../paper/no-retries-s2+': parents were added although '+' told them apart
    assert labels_of([s2, f"{s2},{s3}"]) == ["no-retries-s2", "no-retries-s2+"]
    assert labels_of(["a.duckdb", "a.duckdb"]) == ["a#1", "a#2"]
    assert labels_of(["lab/no-retries", "lab/fresh/no-retries"]) == [
        "lab/no-retries",
        "fresh/no-retries",
    ]


@pytest.mark.slow
def test_workspaces_of_metrics_only_compare_on_time_bins(tmp_path: Path) -> None:
    """The sample incidents' metrics alone (no proxy log, no engine trace): what they
    support is compared with bands over time bins, the rest listed with the analyses' reasons;
    the phases are detected (no run.json), so the alignment is by the overload."""
    sides = []
    for name in ("pulse-retry-cancel", "pulse-retry-coalesce"):
        folder = tmp_path / name
        folder.mkdir()
        shutil.copy(SAMPLES / name / "metrics.om.txt", folder / "metrics.om.txt")
        sides.append(str(folder))
    from relplan.compare import compare

    c = compare(sides)
    rows = {r.name: r for r in c.figures}
    short = rows["counter_shortfall.run"]
    assert [v.method for v in short.values] == [
        "bootstrap over 60 s time bins (22), 400 resamples",
        "bootstrap over 60 s time bins (15), 400 resamples",
    ]
    d = short.differences[0]
    assert (d.direction, d.beyond_noise) == ("better", True)  # 54.9 % against 0.0 %
    missing = {n.name: n.reason for n in c.not_compared}
    assert missing["on_time.run"].endswith(
        "delivery and recovery need a proxy log (attempt outcomes)"
    )
    assert missing["queue_wait.run"].endswith("Wq needs the engine trace's lifecycle events")
    assert [p.name for p in c.phases] == ["run", "before", "overload", "after"]


def test_a_folder_of_runs_made_differently_is_refused(tmp_path: Path) -> None:
    """Seeds of one drill are alike (tests/data/lab/paper: only seed and name differ); runs of
    two policies, or a sweep's configurations, are not one side's spread."""
    paper = LAB / "paper"
    seeds = tmp_path / "seeds"
    for name in ("no-retries-s2", "no-retries-s3"):
        shutil.copytree(paper / name, seeds / name)
    assert [r.path.name for r in resolve(str(seeds))] == ["no-retries-s2", "no-retries-s3"]
    policies = tmp_path / "policies"
    for name in ("no-retries-s2", "retries-cancel-s2"):
        shutil.copytree(paper / name, policies / name)
    with pytest.raises(InputError) as e:
        resolve(str(policies))
    assert str(e.value).startswith(
        f'{policies}: its runs were made differently (no-retries-s2/: retry="none"'
    )
    assert 'retries-cancel-s2/: retry="fixed:3:1"' in str(e.value)


def test_a_sweep_summary_is_not_a_run(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    (sweep / "runs").mkdir(parents=True)
    (sweep / "sweep.parquet").write_bytes(b"")
    (sweep / "sweep.csv").write_text("run,seed\n")
    with pytest.raises(InputError) as e:
        resolve(str(sweep))
    assert str(e.value).startswith(f"{sweep}: a relplan simulate sweep (its summary, not a run)")


@pytest.mark.slow
def test_the_ci_examples_compare_line_gates_folders_of_seeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/compare.md's CI step, run as written in a shell, on the lab's drills (client
    records): baseline/ and candidate/ hold seeds 1-3 of no-retries and retries-cancel. Their
    analyses come from compare's cache in the suite's folder (tests/conftest.py), as in
    tests/test_compare_lab.py's comparison of the same seeds."""
    import os
    import re
    import subprocess
    import sys

    for side, policy in (("baseline", "no-retries"), ("candidate", "retries-cancel")):
        shutil.copytree(LAB / policy / "client", tmp_path / side / "seed1")
        for s in (2, 3):
            shutil.copytree(LAB / "paper" / f"{policy}-s{s}", tmp_path / side / f"seed{s}")
    doc = (ROOT / "docs" / "compare.md").read_text("utf-8")
    block = doc[doc.index("### GitHub Actions") : doc.index("### GitLab CI")]
    m = re.search(r"(relplan compare baseline/ .*?> compare\.json)", block, re.S)
    assert m is not None
    line = m.group(1).replace("\\\n", " ")
    bin_dir = Path(sys.executable).parent  # the venv's relplan
    done = subprocess.run(
        ["sh", "-c", line],
        cwd=tmp_path,
        env={
            "PATH": f"{bin_dir}:/usr/bin:/bin",
            "RELPLAN_CACHE_DIR": os.environ["RELPLAN_CACHE_DIR"],
        },
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    c = Comparison.model_validate_json((tmp_path / "compare.json").read_text("utf-8"))
    assert [len(s.runs) for s in c.sides] == [3, 3]
    # on time -90.5pt; executions per call from seeds 2 and 3 (seed 1's record names no
    # execution of an unanswered attempt: left out), +287 %: both beyond the seeds' spread
    assert [(g.failed, g.judged) for g in c.gate] == [(True, True), (True, True)]
    hold = next(r for r in c.figures if r.name == "executions_per_call.hold")
    assert [v.method for v in hold.values] == ["spread of 2 runs"] * 2
    assert (tmp_path / "compare.html").is_file()
    assert done.stderr.startswith("relplan: finding: on_time.hold < -5pt (candidate: ")


@pytest.mark.slow
def test_executions_per_call_is_left_out_where_attempts_have_no_execution_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The drills of 2026-12-03 named the execution of an answered attempt only: from their
    client records executions per call would read 0.18 in retries-cancel's hold (its client
    sent 3.91 attempts per call). Not compared, with the count; the on-time share is."""
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path))
    from relplan.compare import compare

    c = compare([str(LAB / "no-retries" / "client"), str(LAB / "retries-cancel" / "client")])
    missing = {n.name: n.reason for n in c.not_compared}
    assert missing["executions_per_call.run"] == (
        "no-retries/client: 74 of 237 attempts sent have no execution id (a record that names"
        " the execution only when answered): executions would be undercounted;"
        " retries-cancel/client: 726 of 797 attempts sent have no execution id (a record that"
        " names the execution only when answered): executions would be undercounted"
    )
    assert "executions_per_call.hold" in missing
    on_time = next(r for r in c.figures if r.name == "on_time.hold").differences[0]
    assert (on_time.direction, on_time.beyond_noise) == ("worse", True)
    # the later seeds carry every attempt's id: compared
    c = compare([str(LAB / "paper" / "no-retries-s2"), str(LAB / "paper" / "retries-cancel-s2")])
    d = next(r for r in c.figures if r.name == "executions_per_call.hold").differences[0]
    assert (d.direction, d.beyond_noise) == ("worse", True)


def test_a_drill_sweeps_pulse_sizes_are_not_one_sides_seeds(tmp_path: Path) -> None:
    """relplan drill --sweep writes DIR/runs/<size>-seed<n>/ with the same flags: the phase
    plan (run.json meta.phases) tells the sizes apart."""
    import json

    runs = tmp_path / "runs"
    for size in ("1.5", "2.7"):
        target = runs / f"{size}-seed1"
        shutil.copytree(LAB / "paper" / "no-retries-s2", target)
        plan = json.loads((target / "run.json").read_text("utf-8"))
        plan["meta"]["phases"] = [p.replace("@2.7", f"@{size}") for p in plan["meta"]["phases"]]
        (target / "run.json").write_text(json.dumps(plan), "utf-8")
    with pytest.raises(InputError) as e:
        resolve(str(runs))
    assert "its runs were made differently (1.5-seed1/: phases=" in str(e.value)
    assert '"pulse=9s@1.5"' in str(e.value)


def test_a_folder_of_runs_with_a_subfolder_that_is_no_run_is_refused(tmp_path: Path) -> None:
    """A folder of seeds with a subfolder that is no run (notes, a report) would lose it
    without a word: refused, naming it, with the commas that name the runs instead."""
    seeds = tmp_path / "seeds"
    shutil.copytree(SAMPLES / "pulse-retry-cancel", seeds / "seed1")
    shutil.copytree(SAMPLES / "pulse-retry-cancel", seeds / "seed2")
    assert [r.path.name for r in resolve(str(seeds))] == ["seed1", "seed2"]
    (seeds / "notes").mkdir()
    (seeds / "notes" / "what-we-did.md").write_text("two seeds\n", encoding="utf-8")
    (seeds / ".cache").mkdir()  # hidden folders are no one's runs: passed over
    with pytest.raises(InputError) as e:
        resolve(str(seeds))
    msg = str(e.value)
    assert msg.startswith(f"{seeds}: a folder of runs whose subfolder(s) notes are not runs")
    assert f"{seeds / 'seed1'},{seeds / 'seed2'},..." in msg
