"""The figures compare reads are the analyses' own values: drained after and the histogram
percentiles from the verdict, the error budget's inputs from the restarts analysis (checked on
the hand-computed incident of tests/helpers/restarts_incident.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from relplan.analyses import AnalyzeOptions, analyze
from relplan.compare import compare
from relplan.compare.figures import FAMILIES, NOT_IN_ANALYSES
from relplan.compare.model import Comparison
from relplan.workspace import open_workspace
from tests.helpers import restarts_incident

DAYS_30 = 30 * 86_400


def _value(c: Comparison, name: str) -> tuple[list[float | None], float | None]:
    row = next(r for r in c.figures if r.name == name)
    return [v.value for v in row.values], row.differences[0].diff


@pytest.fixture(scope="module")
def incident(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return restarts_incident.build(tmp_path_factory.mktemp("restarts") / "w.duckdb")


def test_the_error_budget_inputs_are_the_restarts_analysis_values(
    incident: Path, tmp_path: Path
) -> None:
    again = shutil.copy(incident, tmp_path / "again.duckdb")
    c = compare([str(incident), str(again)])
    # by hand (the helper's docstring): 4 crashes and 2 planned restarts over 4 pods in
    # 1,200 s; 5 streams cut by the 4 crashes
    per_30d = 4 / 4 * DAYS_30 / 1200
    assert _value(c, "crashes_per_30d") == ([pytest.approx(per_30d)] * 2, 0)
    assert _value(c, "planned_restarts_per_30d") == ([pytest.approx(per_30d / 2)] * 2, 0)
    assert _value(c, "streams_killed_per_crash") == ([1.25, 1.25], 0)
    assert _value(c, "break_even_stream_s") == ([pytest.approx(0.001 * DAYS_30 / per_30d)] * 2, 0)
    row = next(r for r in c.figures if r.name == "crashes_per_30d")
    assert (row.analysis, row.sense, row.differences[0].beyond_noise) == ("restarts", "lower", None)


def test_a_figure_one_side_lacks_is_listed_with_the_analysis_reason(
    incident: Path, tmp_path: Path
) -> None:
    bare = restarts_incident.build(tmp_path / "bare.duckdb", with_gateway=False)
    c = compare([str(incident), str(bare)])
    missing = {n.name: n for n in c.not_compared}
    assert missing["streams_killed_per_crash"].supported_by == ["w"]
    assert missing["streams_killed_per_crash"].reason == (
        "bare: no crash, or no gateway log to see the streams it cut"
    )
    assert "crashes_per_30d" in {r.name for r in c.figures}


def test_the_catalogue_names_each_figure_once_and_drops_what_is_now_compared() -> None:
    names = [f.name for f in FAMILIES]
    assert len(names) == len(set(names))
    for wanted in ("drain_s", "ttft_p99", "queue_p50", "e2e_p90", "crashes_per_30d"):
        assert wanted in names
    assert [n for n, _ in NOT_IN_ANALYSES] == ["error_budget_burn"]


@pytest.mark.slow
def test_drained_after_is_the_verdict_value(tmp_path: Path) -> None:
    from relplan.ingest import IngestOptions, ingest_paths

    db = tmp_path / "cancel.duckdb"
    ingest_paths(
        db, [Path(__file__).parent.parent / "sample_data" / "pulse-retry-cancel"], IngestOptions()
    )
    with open_workspace(db, read_only=True) as con:
        full = analyze(con, AnalyzeOptions())  # what relplan analyze computes
    assert full.verdict is not None
    assert full.verdict.drain is not None
    c = compare([str(db), str(db)])
    assert _value(c, "drain_s")[0] == [full.verdict.drain.drained_after_s] * 2
    delivery = full.delivery
    hold = next(w for w in delivery.windows if w.window == "hold")
    assert _value(c, "on_time.hold")[0] == [hold.on_time_share] * 2
