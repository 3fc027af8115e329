"""`relplan compare` on the real lab incidents (tests/data/lab/README.md): the drill's own
attempt logs of a recovered and a metastable run give the directions that really happened, the
gate fails the real regression and passes a run compared with itself; and the same from the
operator's files alone (vLLM log, nginx log, Prometheus), checked against the client's record."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from relplan.cli import app
from tests.helpers.fast_cli import CliRunner
from tests.helpers.templates import from_template

LAB = Path(__file__).parent / "data" / "lab"
pytestmark = pytest.mark.slow


def compare(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["compare", *args])
    return res.exit_code, res.stdout


def side(name: str) -> str:
    return str(LAB / name / "client")


def test_the_gate_fails_the_real_regression_and_passes_a_rerun() -> None:
    code, out = compare(
        side("no-retries"), side("retries-no-cancel"), "--fail-if", "on_time.hold < -5pt"
    )
    assert code == 1
    assert "FAIL on_time.hold < -5pt" in out
    code, out = compare(side("no-retries"), side("no-retries"), "--fail-if", "on_time.hold < -5pt")
    assert code == 0, out


def test_a_retry_budget_is_better_than_retries_where_it_really_was() -> None:
    code, out = compare(side("retries-no-cancel"), side("retry-budget"), "--format", "json")
    assert code == 0
    figures = {f["name"]: f for f in json.loads(out)["figures"]}
    diff = figures["on_time.hold"]["differences"][0]
    assert diff["direction"] == "better"
    assert diff["beyond_noise"] is True
    assert diff["diff"] == pytest.approx(1.0)  # 0 % on time in the hold, against 100 %


# --- the operator's files (tests/data/lab/*/operator), checked against the client's truth ---

INCIDENTS = ("no-retries", "retries-no-cancel", "retries-cancel", "retry-budget")
OPERATOR_FILES = ("vllm.log.gz", "access.json.gz", "prometheus.query_range.json.gz")


@pytest.fixture(scope="module")
def operator(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One workspace per incident from what an operator has: the vLLM log, nginx's JSON access
    log (its call-key and attempt headers named as in tests/test_lab_incidents.py) and the
    Prometheus export, plus the drill's plan (client/run.json: phases, Ĉ, D; no outcome is
    read from it). The attempts the client logged are the truth, read only by the checks."""
    from relplan.ingest import IngestOptions, ingest_paths

    root = tmp_path_factory.mktemp("lab-operator")
    opts = IngestOptions(
        call_key="http_x_relplan_call", attempt_field="http_x_relplan_attempt", year=2026
    )
    out = {}
    for name in INCIDENTS:
        paths = [
            *(LAB / name / "operator" / f for f in OPERATOR_FILES),
            LAB / name / "client" / "run.json",
        ]
        # ingested once per test run, copied here (tests/helpers/templates.py)
        out[name] = from_template(
            root / f"{name}.duckdb",
            f"compare_lab operator {name} {opts!r}",
            lambda db, paths=paths: ingest_paths(db, paths, opts),
        )
    return out


def truth(name: str, phase: str, root: Path = LAB) -> dict[str, float]:
    """On-time share and attempts per call of the calls planned in `phase`, from the client."""
    plan = json.loads((root / name / "client" / "run.json").read_text("utf-8"))
    p = next(p for p in plan["phases"] if p["name"] == phase)
    lo, hi = plan["t0"] + p["start"], plan["t0"] + p["end"]
    raw = gzip.decompress((root / name / "client" / "attempts.jsonl.gz").read_bytes())
    rows = [r for r in map(json.loads, raw.splitlines()) if lo <= r["t_planned"] < hi]
    calls = {r["call_id"] for r in rows}
    on_time = {
        r["call_id"]
        for r in rows
        if r["outcome"] == "delivered" and r["t_end"] - r["t_planned"] <= plan["deadline_s"]
    }
    sent = [r for r in rows if r["outcome"] != "shed"]  # a refused retry never left the client
    return {"on_time": len(on_time) / len(calls), "executions_per_call": len(sent) / len(calls)}


def _figures(*dbs: Path, gate: tuple[str, ...] = ()) -> tuple[int, dict[str, Any]]:
    code, out = compare(*map(str, dbs), *gate, "--format", "json")
    return code, {f["name"]: f for f in json.loads(out)["figures"]}


@pytest.mark.parametrize(
    ("worse", "better"),
    [
        ("retries-no-cancel", "no-retries"),
        ("retries-no-cancel", "retry-budget"),
        ("retries-cancel", "no-retries"),
        ("retries-cancel", "retry-budget"),
    ],
)
def test_retries_without_a_budget_are_worse_in_the_hold_as_the_client_saw(
    operator: dict[str, Path], worse: str, better: str
) -> None:
    _, figures = _figures(operator[better], operator[worse])
    for figure, sense in (("on_time", "worse"), ("executions_per_call", "worse")):
        d = figures[f"{figure}.hold"]["differences"][0]
        assert (d["direction"], d["beyond_noise"]) == (sense, True), figure
        # the same sign as the client's own record, and within 5 points / 10 % of its size
        t = truth(worse, "hold")[figure] - truth(better, "hold")[figure]
        assert d["diff"] * t > 0
        assert d["diff"] == pytest.approx(t, abs=0.05, rel=0.1)


@pytest.mark.parametrize(
    ("worse", "better"),
    [
        ("retries-no-cancel", "no-retries"),
        ("retries-no-cancel", "retry-budget"),
        ("retries-cancel", "no-retries"),
        ("retries-cancel", "retry-budget"),
    ],
)
def test_the_fresh_recordings_compared_as_folders_give_the_clients_directions(
    worse: str, better: str
) -> None:
    """tests/data/lab/fresh, each recording named as it is on disk (operator/ and client/: one
    run): the same directions as the client's record, within 5 points / 10 %. Each recording
    is ingested and analysed once per test run (compare's cache in the suite's folder,
    tests/conftest.py), here or in the pairwise table below."""
    root = LAB / "fresh"
    _, figures = _figures(root / better, root / worse)
    for figure in ("on_time", "executions_per_call"):
        d = figures[f"{figure}.hold"]["differences"][0]
        assert (d["direction"], d["beyond_noise"]) == ("worse", True), figure
        t = truth(worse, "hold", root)[figure] - truth(better, "hold", root)[figure]
        assert d["diff"] * t > 0
        assert d["diff"] == pytest.approx(t, abs=0.05, rel=0.1)


def test_a_retry_budget_and_no_retries_deliver_the_hold_alike(
    operator: dict[str, Path],
) -> None:
    """The budget let 3.5 % of the hold's executions be retries: beyond noise, and tiny."""
    _, figures = _figures(operator["no-retries"], operator["retry-budget"])
    d = figures["retry_share.hold"]["differences"][0]
    assert (d["direction"], d["beyond_noise"]) == ("worse", True)
    assert 0 < d["diff"] < 0.05
    epc = figures["executions_per_call.hold"]["differences"][0]
    assert epc["beyond_noise"] is False


def test_an_operator_run_compared_with_itself_shows_nothing_beyond_noise(
    operator: dict[str, Path], tmp_path: Path
) -> None:
    for name in ("no-retries", "retries-no-cancel"):
        again = shutil.copy(operator[name], tmp_path / f"{name}-again.duckdb")
        code, figures = _figures(operator[name], again)
        assert code == 0
        assert figures
        for f in figures.values():
            d = f["differences"][0]
            assert (d["diff"], d["beyond_noise"] is True) == (0, False), f["name"]


def test_the_gate_on_operator_files_fails_the_regression_and_passes_a_rerun(
    operator: dict[str, Path], tmp_path: Path
) -> None:
    gate = ("--fail-if", "on_time.hold < -5pt", "--fail-if", "executions_per_call.hold > +10%")
    code, _ = _figures(operator["no-retries"], operator["retries-no-cancel"], gate=gate)
    assert code == 1
    rerun = shutil.copy(operator["no-retries"], tmp_path / "rerun.duckdb")
    code, _ = _figures(operator["no-retries"], rerun, gate=gate)
    assert code == 0


def test_histogram_percentiles_and_drained_after_come_from_the_real_metrics(
    operator: dict[str, Path],
) -> None:
    _, figures = _figures(operator["no-retries"], operator["retries-no-cancel"])
    # the percentiles are bootstrapped over time bins of the histograms' bucket rises (1 s
    # scrapes: 12 bins of 7.5 s in the 90 s hold), and moved beyond their bands
    for name in ("ttft_p90.hold", "queue_p90.hold", "e2e_p90.hold"):
        d = figures[name]["differences"][0]
        assert (d["direction"], d["beyond_noise"]) == ("worse", True), name
        for v in figures[name]["values"]:
            assert v["method"].startswith("bootstrap over 7.5 s time bins (")
    d = figures["drain_s"]["differences"][0]
    assert (d["direction"], d["beyond_noise"]) == ("worse", None)  # one crossing: no band
    assert figures["drain_s"]["values"][0]["method"].startswith("none: ")


def seeds(name: str) -> str:
    """Seeds 1-3 of a policy as one side: seed 1's client record and the paper's seeds 2, 3."""
    return ",".join([side(name), *(str(LAB / "paper" / f"{name}-s{s}") for s in (2, 3))])


def test_real_seeds_widen_the_band_where_the_outcome_really_varied() -> None:
    """Three real runs a side: retries with cancellation stay down in all three and are worse
    beyond noise; without cancellation the third seed recovered, so the spread of the three
    covers the baseline's and the difference is within noise, not called a regression."""
    code, out = compare(
        seeds("no-retries"), seeds("retries-no-cancel"), seeds("retries-cancel"), "--format", "json"
    )
    assert code == 0
    c = json.loads(out)
    verdicts = [[r["verdict"] for r in s["runs"]] for s in c["sides"]]
    assert verdicts == [
        ["recovered"] * 3,
        ["metastable", "metastable", "recovered"],
        ["metastable"] * 3,
    ]
    hold = next(f for f in c["figures"] if f["name"] == "on_time.hold")
    assert [v["method"] for v in hold["values"]] == ["spread of 3 runs"] * 3
    no_cancel, cancel = hold["differences"]
    assert (no_cancel["direction"], no_cancel["beyond_noise"]) == ("worse", False)
    assert (cancel["direction"], cancel["beyond_noise"]) == ("worse", True)


def test_operator_folders_compare_with_the_input_and_run_flags(tmp_path: Path) -> None:
    """The same comparison from the operator's folders as given: the input flags reach the
    ingest of each folder (call key, attempt header, year) and --deadline every run; without
    the drill's plan the whole run is compared (and the windows around a detected overload)."""
    folders = []
    for name in ("no-retries", "retries-no-cancel"):
        folder = tmp_path / name
        folder.mkdir()
        for f in OPERATOR_FILES:
            shutil.copy(LAB / name / "operator" / f, folder / f)
        folders.append(str(folder))
    flags = ["--call-key", "http_x_relplan_call", "--attempt-field", "http_x_relplan_attempt"]
    code, out = compare(*folders, *flags, "--year", "2026", "--deadline", "10s", "--format", "json")
    assert code == 0, out
    c = json.loads(out)
    figures = {f["name"]: f for f in c["figures"]}
    assert c["phases"][0]["name"] == "run"
    epc = figures["executions_per_call.run"]["values"]
    # within 5 % of the client's record (3.42 attempts per call; tests/data/lab/README.md)
    assert epc[1]["value"] == pytest.approx(810 / 237, rel=0.05)
    on_time = figures["on_time.run"]["differences"][0]
    assert (on_time["direction"], on_time["beyond_noise"]) == ("worse", True)
    # without the flags the ingest still knows relplan drill's own headers (nginx.py): the same
    code, out = compare(*folders, "--year", "2026", "--deadline", "10s", "--format", "json")
    plain = {f["name"]: f for f in json.loads(out)["figures"]}
    assert plain["executions_per_call.run"]["values"] == epc


# --- the pairwise tables of docs/compare.md, as `relplan compare` prints them today ---

PAIRS = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]  # later minus earlier, INCIDENTS order
TABLE_FIGURES = (
    "on_time.hold",
    "delivered.hold",
    "executions_per_call.hold",
    "retry_share.hold",
    "drain_s",
    "ttft_p90.hold",
    "queue_p90.hold",
    "e2e_p90.hold",
)


def _cell(row: Any) -> str:
    from relplan.compare.model import FigureRow
    from relplan.text.compare import fmt

    r = FigureRow.model_validate(row)
    d = r.differences[0]
    noise = {True: "beyond noise", False: "within noise", None: "no band"}[d.beyond_noise]
    return f"{fmt(d.diff, r.unit, True)} {d.direction}, {noise}"


def pairwise_table(root: Path) -> str:
    """The pairwise table of the four recordings under `root`, each compared as a user would
    (`relplan compare root/A root/B --format json`: a relplan lab recording is one run)."""
    head = [f"{INCIDENTS[j]} − {INCIDENTS[i]}" for i, j in PAIRS]
    cells: dict[str, list[str]] = {f: [] for f in TABLE_FIGURES}
    for i, j in PAIRS:
        code, out = compare(str(root / INCIDENTS[i]), str(root / INCIDENTS[j]), "--format", "json")
        assert code == 0, out
        figures = {f["name"]: f for f in json.loads(out)["figures"]}
        for f in TABLE_FIGURES:
            cells[f].append(_cell(figures[f]) if f in figures else "not compared")
    lines = ["| figure | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    lines += [f"| `{f}` | " + " | ".join(cells[f]) + " |" for f in TABLE_FIGURES]
    return "\n".join(lines)


@pytest.mark.parametrize(("root", "marker"), [(LAB, "first"), (LAB / "fresh", "fresh")])
def test_the_documented_pairwise_tables_are_what_compare_prints(root: Path, marker: str) -> None:
    """docs/compare.md's pairwise tables of the lab's real incidents, between
    `<!-- pairwise:NAME -->` markers; RELPLAN_UPDATE_DOCS=1 writes them again."""
    import os
    import re

    # each recording analysed once per run: compare's cache in the suite's folder (conftest)
    table = pairwise_table(root)
    doc = Path(__file__).parent.parent / "docs" / "compare.md"
    text = doc.read_text("utf-8")
    begin, end = f"<!-- pairwise:{marker} -->", f"<!-- /pairwise:{marker} -->"
    block = re.compile(re.escape(begin) + r"\n(?:.*?\n)?" + re.escape(end), re.S)
    if os.environ.get("RELPLAN_UPDATE_DOCS") == "1":
        doc.write_text(block.sub(lambda _: f"{begin}\n{table}\n{end}", text), "utf-8")
        text = doc.read_text("utf-8")
    assert f"{begin}\n{table}\n{end}" in text
