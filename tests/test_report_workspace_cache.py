"""The report's workspace cache (relplan/report/workspace_cache.py): a second report of the
same raw inputs opens the workspace the first ingested, and its page is the page a fresh ingest
gives; a changed input file, input flag or damaged kept file means a new ingest; a failed
ingest leaves nothing in the cache folder; the switch turns it off."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from relplan import caches
from relplan.analyses import AnalyzeOptions
from relplan.errors import InputError
from relplan.ingest import IngestOptions, driver
from relplan.report import pipeline, workspace_cache
from tests.helpers.sim_runs import tiny_run
from tests.helpers.suite_cache import share_suite_caches

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "pulse-retry-cancel"
WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)

pytestmark = pytest.mark.slow  # each report takes most of a second


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # the what-if replays and the Vega bundle: the suite's, computed once per run
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(share_suite_caches(tmp_path / "cache")))
    monkeypatch.setenv("RELPLAN_WORKSPACE_CACHE", "1")
    monkeypatch.delenv("RELPLAN_WHATIF_CACHE", raising=False)
    return tmp_path / "cache" / workspace_cache.FOLDER


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """A copy of a 20-call simulated run (tests/helpers/sim_runs.py `tiny_run`: the sample's
    four files, no overload, a third less CPU per report): what is checked is when the cache
    ingests. That a kept workspace gives every section of the sample's page, the what-if's
    included, is the first test's, on the sample."""
    return Path(shutil.copytree(tiny_run(), tmp_path / "tiny"))


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return Path(shutil.copytree(SAMPLE, tmp_path / "pulse-retry-cancel"))


@pytest.fixture
def ingests(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The paths ingested, by either path (the cache's or the in-memory one)."""
    seen: list[Path] = []
    real = driver.ingest_files

    def counted(con: Any, paths: Any, opts: Any, *a: Any) -> Any:
        seen.extend(paths)
        return real(con, paths, opts, *a)

    # Both import it when they ingest, from the driver.
    monkeypatch.setattr(driver, "ingest_files", counted)
    return seen


def _note(inputs: Path, notes: str) -> None:
    manifest = inputs / "run.json"
    doc = json.loads(manifest.read_text(encoding="utf-8"))
    doc["notes"] = notes
    manifest.write_text(json.dumps(doc), encoding="utf-8")


def _page(path: Path, out: Path, inputs: IngestOptions | None = None) -> str:
    files = pipeline.make_report(
        path, out=out, opts=AnalyzeOptions(), generated_at=WHEN, inputs=inputs
    )
    return files.html.read_text(encoding="utf-8")


def test_a_second_report_opens_the_kept_workspace_and_writes_the_same_page(
    cache_dir: Path,
    sample: Path,
    ingests: list[Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = _page(sample, tmp_path / "a.html")
    assert ingests == [sample]
    kept = sorted(p.suffix for p in cache_dir.iterdir())
    assert kept == [".duckdb", ".sha256"]
    assert _page(sample, tmp_path / "b.html") == first
    assert ingests == [sample]  # opened, not ingested again
    monkeypatch.setenv("RELPLAN_WORKSPACE_CACHE", "0")
    assert _page(sample, tmp_path / "c.html") == first  # in memory, as without the cache
    assert ingests == [sample, sample]


def test_a_changed_input_flag_or_damage_means_a_new_ingest(
    cache_dir: Path, inputs: Path, ingests: list[Path], tmp_path: Path
) -> None:
    _page(inputs, tmp_path / "a.html")
    _note(inputs, "edited")
    _page(inputs, tmp_path / "b.html")
    _page(inputs, tmp_path / "c.html", IngestOptions(on_error="skip"))
    assert len(ingests) == 3
    assert len(list(cache_dir.glob("*.duckdb"))) == 3
    newest = max(cache_dir.glob("*.duckdb"), key=lambda p: p.stat().st_mtime_ns)
    data = bytearray(newest.read_bytes())
    data[len(data) // 2] ^= 0xFF
    newest.write_bytes(bytes(data))
    _page(inputs, tmp_path / "d.html", IngestOptions(on_error="skip"))
    assert len(ingests) == 4  # the damaged file failed its SHA-256 and was ingested again
    digest = newest.with_suffix(".sha256")
    assert caches.read_checked(digest, workspace_cache.DIGEST_HEADER) == caches.file_sha256(newest)
    # The right digest with a line more: the file's own checksum no longer holds.
    digest.write_text(digest.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    _page(inputs, tmp_path / "e.html", IngestOptions(on_error="skip"))
    assert len(ingests) == 5  # the digest file failed its own check: ingested again


def test_a_failed_ingest_keeps_nothing(cache_dir: Path, inputs: Path, tmp_path: Path) -> None:
    (inputs / "proxy.parquet").write_bytes(b"PAR1 this is no Parquet file PAR1")
    with pytest.raises(InputError):
        _page(inputs, tmp_path / "a.html")
    assert not cache_dir.exists() or list(cache_dir.iterdir()) == []
    assert not (tmp_path / "a.html").exists()


def test_only_the_newest_workspaces_are_kept(cache_dir: Path, inputs: Path) -> None:
    for i in range(workspace_cache.KEEP + 2):
        _note(inputs, str(i))
        key = workspace_cache.key_of(inputs, IngestOptions())
        assert key is not None
        assert workspace_cache.workspace_for(inputs, IngestOptions(), key) is not None
    assert len(list(cache_dir.glob("*.duckdb"))) == workspace_cache.KEEP
    assert len(list(cache_dir.glob("*.sha256"))) == workspace_cache.KEEP


def test_a_kept_file_duckdb_cannot_open_is_forgotten_and_ingested_again(
    cache_dir: Path, inputs: Path, ingests: list[Path], tmp_path: Path
) -> None:
    first = _page(inputs, tmp_path / "a.html")
    (db,) = cache_dir.glob("*.duckdb")
    garbage = b"not a DuckDB file" * 100
    db.write_bytes(garbage)  # its SHA-256 file agrees: only DuckDB can tell
    caches.write_checked(
        db.with_suffix(".sha256"),
        hashlib.sha256(garbage).hexdigest(),
        workspace_cache.DIGEST_HEADER,
    )
    assert _page(inputs, tmp_path / "b.html") == first
    assert not db.exists()
    assert _page(inputs, tmp_path / "c.html") == first
    assert db.exists()
    assert len(ingests) == 3


def test_missing_gives_the_key_when_the_report_will_ingest(
    cache_dir: Path, inputs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`missing` (asked by `relplan report` before its imports, so that the ingest starts in
    its own process and the what-if's workers start importing at once for new inputs) agrees
    with `workspace_for`: the key until the inputs' workspace is kept, None once it is, the
    key again when its file no longer passes its digest; None with the cache off, when
    `workspace_for` is not asked. The command asks only for raw inputs (`_raw_inputs`), not
    for what it does not ingest into the cache: a workspace file, --db, no PATH, a missing
    PATH."""
    from relplan.cli.report import _raw_inputs

    opts = IngestOptions()
    key = workspace_cache.key_of(inputs, opts)
    assert key is not None
    assert workspace_cache.missing(inputs, opts) == key
    assert _raw_inputs(inputs, None)
    kept = workspace_cache.workspace_for(inputs, opts, key)
    assert kept is not None
    assert workspace_cache.missing(inputs, opts) is None
    other = workspace_cache.missing(inputs, IngestOptions(on_error="skip"))  # other flags
    assert other is not None
    assert other != key
    assert not _raw_inputs(kept, None)  # a workspace file
    assert not _raw_inputs(inputs, tmp_path / "w.duckdb")  # --db
    assert not _raw_inputs(None, None)
    assert not _raw_inputs(tmp_path / "missing", None)
    kept.write_bytes(kept.read_bytes()[:-1])
    assert workspace_cache.missing(inputs, opts) == key  # fails its digest: ingested again
    monkeypatch.setenv("RELPLAN_WORKSPACE_CACHE", "0")
    assert workspace_cache.missing(inputs, opts) is None
