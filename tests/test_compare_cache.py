"""Compare's cache (relplan/compare/cache.py): a run compared again is read back, not analysed
again, and gives the same comparison; an input folder is not ingested again; a written
workspace, a damaged entry or `RELPLAN_COMPARE_CACHE=0` means the work is done again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import relplan.analyses
import relplan.ingest
from relplan.compare import cache, compare
from tests.helpers import restarts_incident


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("RELPLAN_COMPARE_CACHE", raising=False)
    return tmp_path / "cache" / "compare"


@pytest.fixture
def sides(tmp_path: Path) -> list[str]:
    a = restarts_incident.build(tmp_path / "a.duckdb")
    b = restarts_incident.build(tmp_path / "b.duckdb", with_gateway=False)
    return [str(a), str(b)]


def _no_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("analysed again")

    monkeypatch.setattr(relplan.analyses, "analyze", refuse)


def test_a_run_compared_again_is_read_back_with_the_same_result(
    cache_dir: Path, sides: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = compare(sides)
    assert len(list((cache_dir / "results").glob("*.json"))) == 2
    _no_analysis(monkeypatch)
    assert compare(sides) == first


def test_a_workspace_written_again_is_analysed_again(
    cache_dir: Path, sides: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compare(sides)
    shutil.copy(sides[1], tmp_path / "b2.duckdb")
    Path(sides[1]).unlink()
    shutil.move(tmp_path / "b2.duckdb", sides[1])  # same path and bytes, a new file
    _no_analysis(monkeypatch)
    with pytest.raises(AssertionError, match="analysed again"):
        compare(sides)


def test_a_damaged_entry_is_ignored_and_the_cache_can_be_turned_off(
    cache_dir: Path, sides: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first = compare(sides)
    for f in (cache_dir / "results").glob("*.json"):
        f.write_text(f.read_text("utf-8")[:-10], "utf-8")
    assert compare(sides) == first  # analysed again, and stored again
    monkeypatch.setenv("RELPLAN_COMPARE_CACHE", "0")
    _no_analysis(monkeypatch)
    assert cache.load(cache.result_key(Path(sides[0]), "defaults", [])) is None
    with pytest.raises(AssertionError, match="analysed again"):
        compare(sides)


def test_an_input_folder_is_ingested_once(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "incident"
    folder.mkdir()
    restarts_incident.write_files(folder)
    first = compare([str(folder), str(folder)])
    assert len(list((cache_dir / "ingested").glob("*.duckdb"))) == 1

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("ingested again")

    monkeypatch.setattr(relplan.ingest, "ingest_paths", refuse)
    _no_analysis(monkeypatch)
    assert compare([str(folder), str(folder)]) == first
    (folder / "extra.jsonl").write_text("", "utf-8")  # the folder changed: a new key
    with pytest.raises(AssertionError, match="ingested again"):
        compare([str(folder), str(folder)])
