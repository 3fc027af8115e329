"""The report's what-if cache (relplan/whatif/cache.py): keyed by the workspace's sources,
the options and the code; a damaged file is ignored; RELPLAN_WHATIF_CACHE=0 turns it off."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relplan import workspace
from relplan.analyses import AnalyzeOptions
from relplan.whatif import cache
from tests.helpers.incident import build_incident


def _key(db: Path, opts: AnalyzeOptions, settings: str = "seeds=1") -> str:
    with workspace.open_workspace(db, read_only=True) as con:
        return cache.fingerprint(con, opts, settings)


def test_the_key_follows_the_sources_and_options_not_the_path(tmp_path: Path) -> None:
    a = build_incident(tmp_path / "a.duckdb")
    b = build_incident(tmp_path / "b.duckdb")
    no_metrics = build_incident(tmp_path / "c.duckdb", metrics=False)
    opts = AnalyzeOptions()
    assert _key(a, opts) == _key(b, opts)
    assert _key(a, opts) != _key(no_metrics, opts)
    assert _key(a, opts) != _key(a, AnalyzeOptions(capacity=3.0))
    assert _key(a, opts) != _key(a, opts, "seeds=3")


def test_a_stored_result_is_read_back_and_a_damaged_one_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path / "cache"))
    key = "ab" * 32
    assert cache.load(key) is None
    cache.store(key, '{"whatif": 1}')
    assert cache.load(key) == '{"whatif": 1}'
    (stored,) = (tmp_path / "cache" / "whatif").iterdir()
    stored.write_text(stored.read_text(encoding="utf-8").replace("1}", "2}"), encoding="utf-8")
    assert cache.load(key) is None
    monkeypatch.setenv("RELPLAN_WHATIF_CACHE", "0")
    cache.store(key, '{"whatif": 3}')
    assert cache.load(key) is None


def test_a_cached_what_if_is_the_result_itself_so_the_report_knows_nothing_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The report's chart worker draws only when nothing runs beside the analyses
    (relplan/report/pipeline.py): a hit is the WhatIf, not a function that returns it."""
    from relplan.whatif import for_report
    from tests.test_whatif_report import WHATIF

    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path / "cache"))
    db = build_incident(tmp_path / "a.duckdb")
    key = _key(db, AnalyzeOptions())
    cache.store(key, json.dumps({"whatif": WHATIF.model_dump(mode="json")}))
    with workspace.open_workspace(db, read_only=True) as con:
        got = for_report.report_whatif(con, AnalyzeOptions())
    assert got == WHATIF
