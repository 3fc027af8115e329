"""The report's page cache (relplan/report/cache.py): a page read back is byte-identical to
the page the run computes; the key changes with any input file, any flag that shapes the page
and the code; workspaces, --db and images are never served from it; a hit loads no heavy
library."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from relplan import caches
from relplan.report import cache
from tests.helpers.suite_cache import share_suite_caches

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "pulse-retry-cancel"
SETTINGS: dict[str, object] = {"whatif": False, "tz": "UTC", "capacity": None, "kind": None}


@pytest.fixture
def cache_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # the what-if replays and the Vega bundle: the suite's, computed once per run
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(share_suite_caches(tmp_path / "cache")))
    monkeypatch.setenv("RELPLAN_REPORT_CACHE", "1")
    monkeypatch.delenv("RELPLAN_WHATIF_CACHE", raising=False)
    return tmp_path / "cache"


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "pulse-retry-cancel"))


def _key(path: Path, **changes: object) -> str | None:
    return cache.key_for(path, db=None, images=False, settings={**SETTINGS, **changes})


def test_the_key_follows_every_input_file_and_flag(cache_on: Path, inputs: Path) -> None:
    first = _key(inputs)
    assert first is not None
    assert _key(inputs) == first
    keys = {first}
    for change in ({"whatif": True}, {"tz": "Europe/Berlin"}, {"capacity": 3.0}, {"kind": "x"}):
        keys.add(_key(inputs, **change))
    manifest = inputs / "run.json"
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    doc["notes"] = "edited"
    manifest.write_text(json.dumps(doc), encoding="utf-8")
    keys.add(_key(inputs))
    (inputs / "extra.jsonl").write_text("{}\n", encoding="utf-8")
    keys.add(_key(inputs))
    (inputs / "extra.jsonl").rename(inputs / "other.jsonl")
    keys.add(_key(inputs))
    assert None not in keys
    assert len(keys) == 8


def test_the_key_follows_the_code_and_a_map_file(
    cache_on: Path, inputs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mapping = tmp_path / "map.toml"
    mapping.write_text("[a]\n", encoding="utf-8")
    with_map = _key(inputs, map_file=str(mapping))
    mapping.write_text("[b]\n", encoding="utf-8")
    assert _key(inputs, map_file=str(mapping)) != with_map
    before = _key(inputs)
    monkeypatch.setattr(caches, "_code_digest", "another version of relplan")
    assert _key(inputs) != before


def test_workspaces_db_images_and_the_switches_are_never_served(
    cache_on: Path, inputs: Path, incident_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cache.key_for(incident_db, db=None, images=False, settings=SETTINGS) is None
    assert cache.key_for(None, db=incident_db, images=False, settings=SETTINGS) is None
    assert cache.key_for(inputs, db=incident_db, images=False, settings=SETTINGS) is None
    assert cache.key_for(inputs, db=None, images=True, settings=SETTINGS) is None
    assert cache.key_for(inputs / "missing", db=None, images=False, settings=SETTINGS) is None
    assert _key(inputs) is not None
    monkeypatch.setenv("RELPLAN_REPORT_CACHE", "0")
    assert _key(inputs) is None
    monkeypatch.setenv("RELPLAN_REPORT_CACHE", "1")
    monkeypatch.setenv("RELPLAN_WHATIF_CACHE", "0")
    assert _key(inputs) is None


def test_a_kept_page_is_stamped_and_a_damaged_one_is_a_miss(cache_on: Path) -> None:
    placeholder = cache.SENTINEL.strftime(cache.FOOTER_TIME)
    kept = cache.CachedReport(
        "run",
        f"<p>at {placeholder}</p>",
        '{"generated_at": "2999-09-09T09:09:09Z"}\n',
    )
    cache.save("cd" * 32, kept)
    assert cache.load("cd" * 32) == kept
    html, data = cache.stamp(kept, datetime(2026, 12, 4, 3, 4, 5, tzinfo=timezone.utc))
    assert html == "<p>at 2026-12-04 03:04:05 UTC</p>"
    assert data == '{"generated_at": "2026-12-04T03:04:05Z"}\n'
    (stored,) = (cache_on / "report").iterdir()
    stored.write_text(stored.read_text(encoding="utf-8").replace("at ", "on "), encoding="utf-8")
    assert cache.load("cd" * 32) is None


def test_a_page_whose_data_shows_the_placeholder_time_is_not_kept(cache_on: Path) -> None:
    placeholder = cache.SENTINEL.strftime(cache.FOOTER_TIME)
    twice = cache.CachedReport("run", f"{placeholder} {placeholder}", '"2999-09-09T09:09:09Z"')
    cache.save("ef" * 32, twice)
    assert cache.load("ef" * 32) is None


@pytest.mark.slow
def test_a_served_page_is_byte_identical_to_the_computed_one(
    cache_on: Path, inputs: Path, tmp_path: Path
) -> None:
    from relplan.report.pipeline import make_report

    when = datetime(2026, 12, 4, 3, 4, 5, tzinfo=timezone.utc)
    key = _key(inputs)
    assert key is not None
    plain = make_report(
        inputs, out=tmp_path / "plain.html", json_path=tmp_path / "plain.json", generated_at=when
    )
    kept = make_report(
        inputs,
        out=tmp_path / "kept.html",
        json_path=tmp_path / "kept.json",
        generated_at=when,
        cache_key=key,
    )
    served = cache.serve(key, when, tmp_path / "served.html", tmp_path / "served.json")
    assert served is not None
    page = plain.html.read_bytes()
    assert "2026-12-04 03:04:05 UTC" in page.decode("utf-8")
    assert kept.html.read_bytes() == page
    assert served.html.read_bytes() == page
    assert served.html_bytes == plain.html_bytes
    data = (tmp_path / "plain.json").read_bytes()
    assert (tmp_path / "kept.json").read_bytes() == data
    assert (tmp_path / "served.json").read_bytes() == data


# The second `relplan report` of the same inputs, in a fresh interpreter, reports what it
# loaded: a page served from the cache needs no duckdb, analyses, Altair or simulator.
PROBE = """
import json, runpy, sys
sys.argv = ["relplan", *json.loads(sys.argv[1])]
code = 0
try:
    runpy.run_module("relplan", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
heavy = ("altair", "vl_convert", "polars", "relplan.analyses", "relplan.sim")
print("\\nPROBE " + json.dumps({"code": code, "loaded": [m for m in heavy if m in sys.modules]}))
"""


@pytest.mark.slow
def test_the_second_report_of_the_same_inputs_is_served_without_heavy_imports(
    cache_on: Path, inputs: Path, tmp_path: Path
) -> None:
    """The reports that compute (the first, and one with another flag) run in this process,
    the one that is served in a fresh interpreter, whose imports are the point: a computed
    report is told by the page it adds to the cache folder (a served one adds none), as a
    fresh interpreter's would be by its imports, without two more interpreters importing
    relplan's whole report path."""
    from relplan.cli import app
    from tests.helpers.fast_cli import CliRunner

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    pages = cache_on / cache.FOLDER

    def run(*args: str) -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, json.dumps(["report", str(inputs), *args])],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        tail = done.stdout.rsplit("PROBE ", 1)
        assert len(tail) == 2, done.stdout + done.stderr
        return dict(json.loads(tail[1]))

    def computed(*args: str) -> None:
        kept = len(list(pages.iterdir())) if pages.exists() else 0
        res = CliRunner().invoke(app, ["report", str(inputs), *args])
        assert res.exit_code == 0, res.output
        assert len(list(pages.iterdir())) == kept + 1  # computed and kept, not served

    computed("--no-whatif", "--out", str(tmp_path / "a.html"))
    # duckdb and pyarrow do load on a hit: the input flags come from the format registry,
    # whose adapters import them (docs/benchmarks.md, Report); nothing is computed.
    second = run("--no-whatif", "--out", str(tmp_path / "b.html"))
    assert second == {"code": 0, "loaded": []}
    page_a = (tmp_path / "a.html").read_text(encoding="utf-8")
    page_b = (tmp_path / "b.html").read_text(encoding="utf-8")
    assert page_a.split("Generated by relplan")[0] == page_b.split("Generated by relplan")[0]
    computed("--no-whatif", "--capacity", "3.0", "--out", str(tmp_path / "c.html"))
