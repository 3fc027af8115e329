"""The analysis registry: every row resolves, the layers hold, and the recipe in
docs/development.md ("Adding an analysis") works: a toy analysis (tests/toy_analysis/) added
in those places shows up in `relplan analyze --json`, its text and the report's HTML."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from relplan import sql, workspace
from relplan.analyses import ANALYSES, AnalyzeOptions, analyze, registry
from relplan.cli import app
from relplan.errors import UsageError
from relplan.report.pipeline import collect_report_data, render_page
from relplan.report.section import Section, report_model
from tests.helpers.incident import build_incident
from tests.helpers.synthetic_runs import memory_workspace
from tests.toy_analysis import analysis as toy
from tests.toy_analysis import section as toy_section

ROOT = Path(__file__).resolve().parent.parent
TOY_DIR = Path(__file__).resolve().parent / "toy_analysis"
runner = CliRunner()


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_incident(tmp_path_factory.mktemp("registry") / "incident.duckdb")


@pytest.fixture
def toy_registered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The recipe's steps, for this test only: the SQL file joins the queries (a copy of
    queries/ with it added), the analysis and section modules are tests/toy_analysis/, and
    the registry row is appended to the registry."""
    queries = tmp_path / "queries"
    shutil.copytree(sql.queries_dir(), queries)  # type: ignore[arg-type]
    shutil.copytree(TOY_DIR / "queries", queries, dirs_exist_ok=True)
    monkeypatch.setattr(sql, "queries_dir", lambda: queries)
    sql.load.cache_clear()
    row = registry.Analysis(
        name="attempt_outcomes",
        title="attempt outcomes",
        model=toy.AttemptOutcomes,
        missing=toy.missing,
        run=toy.run,
        section="tests.toy_analysis.section:SECTION",
    )
    monkeypatch.setattr(registry, "ANALYSES", (*registry.ANALYSES, row))
    yield
    sql.load.cache_clear()


def test_every_row_resolves_to_a_renderer_and_a_report_section() -> None:
    names = [a.name for a in registry.analyses()]
    assert len(set(names)) == len(names)
    assert tuple(names) == ANALYSES
    for a in registry.analyses():
        assert issubclass(a.model, BaseModel), a.name
        assert callable(registry.resolve(a.render)), a.name
        if a.finding is not None:
            assert callable(registry.resolve(a.finding)), a.name
        if a.section is not None:
            section = registry.resolve(a.section)
            assert isinstance(section, Section), a.name
            assert issubclass(section.model, report_model().model_fields[a.name].annotation)
    assert [a.name for a in registry.analyses() if a.section is None] == ["capacity"]


def test_only_accepts_exactly_the_registry_names() -> None:
    assert registry.check_names(list(ANALYSES)) == list(ANALYSES)
    with pytest.raises(UsageError, match="expected one of " + ", ".join(ANALYSES)):
        registry.check_names(["queue"])
    with pytest.raises(UsageError, match=r"^--only: unknown analysis queue"):
        analyze(memory_workspace(), AnalyzeOptions(only=["queue"]))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("module", "forbidden"),
    [
        ("relplan.analyses", ("relplan.report", "relplan.sim", "relplan.text")),
        ("relplan.text.analyze", ("relplan.report", "relplan.sim")),
        ("relplan.report.pipeline", ("relplan.sim",)),
    ],
)
def test_layers_do_not_import_upwards(module: str, forbidden: tuple[str, ...]) -> None:
    """Analyses never import the report, the simulator or the text; the report never imports
    the simulator (every registered section loaded, as the report does)."""
    code = (
        f"import sys, {module}\n"
        "from relplan.analyses import registry\n"
        "[registry.resolve(a.section) for a in registry.analyses() if a.section]\n"
        if module == "relplan.report.pipeline"
        else f"import sys, {module}\n"
    ) + f"print([m for m in sys.modules if m.startswith({forbidden!r})])"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.usefixtures("toy_registered")
def test_a_toy_analysis_added_by_the_recipe_is_in_analyze_json(db: Path) -> None:
    """Fixture (tests/fixture_incident.py), attempts by t_sent: base c1, c2 a0, c2 a1 = 3;
    pulse 9 (c3 a1 shed at 92, c6 error at 75); hold 4 (c12 error at 230); run 16, 1 shed,
    2 errors: 3/16 shed or failed. The steady window (pulse end 120 + D 30 to 240) holds the
    same 4 hold attempts, all sent after 150."""
    res = runner.invoke(app, ["analyze", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert list(data)[-2:] == ["attempt_outcomes", "skipped"]
    w = {r["window"]: r for r in data["attempt_outcomes"]["windows"]}
    assert [(w[k]["attempts"], w[k]["shed"], w[k]["errors"]) for k in w] == [
        (16, 1, 2),
        (3, 0, 0),
        (9, 1, 1),
        (4, 0, 1),
        (4, 0, 1),
    ]
    assert list(w) == ["run", "base", "pulse", "hold", "steady"]
    assert w["run"]["refused_share"] == pytest.approx(3 / 16)
    only = runner.invoke(app, ["analyze", "--db", str(db), "--only", "attempt_outcomes"])
    assert only.exit_code == 0, only.output
    assert "Attempt outcomes\n" in only.stdout
    assert "18.8 % of attempts were shed or failed." in only.stdout
    assert "Delivery and recovery" not in only.stdout


@pytest.mark.usefixtures("toy_registered")
@pytest.mark.slow
def test_a_toy_analysis_added_by_the_recipe_is_in_the_report(db: Path) -> None:
    with workspace.open_workspace(db, read_only=True) as con:
        data = collect_report_data(
            con,
            AnalyzeOptions(),
            fallback_name="toy",
            generated_at=datetime(2026, 1, 2, tzinfo=timezone.utc),
        )
    names = [name for name, _ in data.sections()]
    assert names[-2:] == ["attempt_outcomes", "missing"]
    assert isinstance(data.attempt_outcomes, toy_section.AttemptOutcomesSection)
    page = render_page(data)
    assert '<section id="attempt_outcomes"' in page
    assert '<a href="#attempt_outcomes">Attempt outcomes</a>' in page
    assert "<td>pulse</td><td>9</td><td>1</td><td>1</td><td>22.2 %</td>" in page


def test_the_recipe_names_the_five_places() -> None:
    doc = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    recipe = doc.split("## Adding an analysis", 1)[1].split("\n## ", 1)[0]
    for place in (
        "queries/analyses/",
        "relplan/analyses/",
        "relplan/analyses/registry.py",
        "relplan/report/sections/",
        "docs/analyses.md",
    ):
        assert place in recipe, place
