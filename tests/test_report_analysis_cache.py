"""The report's analysis cache (relplan/report/analysis_cache.py): a second report of the same
raw inputs with the same analysis flags reads the analyses' result the first kept, and writes
the page and data JSON a fresh run writes; other analysis flags, a damaged file or the switch
mean the analyses run again."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from relplan.analyses import AnalyzeOptions, analyze
from relplan.report import analysis_cache, pipeline
from tests.helpers.suite_cache import share_suite_caches

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "pulse-retry-cancel"
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.fixture
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # the what-if replays and the Vega bundle: the suite's, computed once per run
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(share_suite_caches(tmp_path / "cache")))
    for switch in ("RELPLAN_WORKSPACE_CACHE", "RELPLAN_ANALYSIS_CACHE", "RELPLAN_WHATIF_CACHE"):
        monkeypatch.delenv(switch, raising=False)
    return tmp_path / "cache"


@pytest.fixture
def runs(monkeypatch: pytest.MonkeyPatch) -> list[AnalyzeOptions]:
    """The options of every run of the analyses."""
    seen: list[AnalyzeOptions] = []

    def counted(con: Any, opts: AnalyzeOptions, *a: Any, **k: Any) -> Any:
        seen.append(opts)
        return analyze(con, opts, *a, **k)

    monkeypatch.setattr(pipeline, "analyze", counted)
    return seen


def _report(path: Path, out: Path, opts: AnalyzeOptions | None = None) -> tuple[str, str]:
    files = pipeline.make_report(
        path,
        out=out,
        json_path=out.with_suffix(".json"),
        opts=opts or AnalyzeOptions(),
        generated_at=WHEN,
    )
    assert files.json is not None
    return files.html.read_text(encoding="utf-8"), files.json.read_text(encoding="utf-8")


@pytest.mark.slow  # four reports of the sample
def test_a_second_report_reads_the_analyses_and_writes_the_same_page(
    cache_root: Path, runs: list[AnalyzeOptions], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs = Path(shutil.copytree(SAMPLE, tmp_path / "pulse-retry-cancel"))
    first = _report(inputs, tmp_path / "a.html")
    assert len(runs) == 1
    (kept,) = (cache_root / analysis_cache.FOLDER).glob("*.json")
    assert _report(inputs, tmp_path / "b.html") == first
    assert len(runs) == 1  # read, not run
    monkeypatch.setenv("RELPLAN_ANALYSIS_CACHE", "0")
    assert _report(inputs, tmp_path / "c.html") == first  # run again: the same page
    assert len(runs) == 2
    monkeypatch.delenv("RELPLAN_ANALYSIS_CACHE")
    kept.write_text(kept.read_text(encoding="utf-8").replace("0", "1", 1), encoding="utf-8")
    assert _report(inputs, tmp_path / "d.html") == first  # damaged: run again, kept anew
    assert len(runs) == 3
    other = AnalyzeOptions(capacity=2.0)
    _report(inputs, tmp_path / "e.html", other)
    assert runs[-1] == other  # other analysis flags: another key
    assert len(list((cache_root / analysis_cache.FOLDER).glob("*.json"))) == 2


def test_the_key_follows_the_workspace_and_the_analysis_flags(cache_root: Path) -> None:
    base = analysis_cache.key_for("w1", AnalyzeOptions())
    assert base is not None
    assert analysis_cache.key_for("w1", AnalyzeOptions()) == base
    assert analysis_cache.key_for("w2", AnalyzeOptions()) != base
    assert analysis_cache.key_for("w1", AnalyzeOptions(deadline=30.0)) != base
    assert analysis_cache.key_for("w1", AnalyzeOptions(phases=[("a", 0.0, 1.0)])) != base
    assert analysis_cache.key_for(None, AnalyzeOptions()) is None  # no kept workspace
    remote = AnalyzeOptions(prometheus_url="http://localhost:9090")
    assert analysis_cache.key_for("w1", remote) is None  # not from the workspace alone


def test_a_file_kept_under_another_key_is_not_read(cache_root: Path) -> None:
    from relplan import caches

    key = analysis_cache.key_for("w1", AnalyzeOptions())
    other = analysis_cache.key_for("w2", AnalyzeOptions())
    assert key is not None
    assert other is not None
    path = cache_root / analysis_cache.FOLDER / f"{key[:32]}.json"
    caches.write_checked(path, "{}", f"relplan analyses sha256 of the rest: {other} ")
    assert analysis_cache.load(key) is None


def test_a_result_its_json_does_not_give_back_is_not_kept(
    cache_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """JSON writes a NaN as null: such a result would come back as another; it is not kept."""
    from pydantic import BaseModel

    from relplan.analyses import registry

    class Tiny(BaseModel):
        x: float | None

    monkeypatch.setattr(registry, "result_model", lambda: Tiny)
    key = analysis_cache.key_for("w1", AnalyzeOptions())
    assert key is not None
    analysis_cache.save(key, Tiny(x=float("nan")))  # type: ignore[arg-type]
    assert analysis_cache.load(key) is None
    analysis_cache.save(key, Tiny(x=0.1 + 0.2))  # type: ignore[arg-type]
    back: object = analysis_cache.load(key)
    assert back == Tiny(x=0.30000000000000004)
