"""relplan/caches.py: the code digest that keys every cache, and the checked files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from relplan import caches


def test_every_library_is_named_with_its_module_file() -> None:
    lines = caches.libraries()
    assert [line.split(" ", 1)[0] for line in lines] == list(caches.LIBRARIES)
    duckdb_line = next(line for line in lines if line.startswith("duckdb "))
    import duckdb

    assert duckdb_line.split(" ")[1] == duckdb.__file__


def test_a_new_library_build_keys_every_cache_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reinstalling a library rewrites its module file: the digest must change with it."""
    fake = tmp_path / "fake_lib"
    fake.mkdir()
    init = fake / "__init__.py"
    init.write_text("VERSION = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(caches, "LIBRARIES", (*caches.LIBRARIES, "fake_lib"))
    monkeypatch.setattr(caches, "_code_digest", None)
    before = caches.code_digest()
    init.write_text("VERSION = 22\n")
    os.utime(init, ns=(1, 1))
    monkeypatch.setattr(caches, "_code_digest", None)
    after = caches.code_digest()
    assert before != after


def test_a_missing_library_is_named_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(caches, "LIBRARIES", ("no_such_library_here",))
    assert caches.libraries() == ["no_such_library_here absent"]


def test_a_checked_file_that_was_edited_reads_as_absent(tmp_path: Path) -> None:
    kept = tmp_path / "k.txt"
    caches.write_checked(kept, "body\n", "relplan-test ")
    assert caches.read_checked(kept, "relplan-test ") == "body\n"
    kept.write_text(kept.read_text() + "edited")
    assert caches.read_checked(kept, "relplan-test ") is None


def _fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RELPLAN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(caches, "_code_digest", None)


def test_a_later_process_reads_the_kept_digest_without_hashing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fresh(monkeypatch, tmp_path)
    first = caches.code_digest()
    assert len(list((tmp_path / "cache" / "code").iterdir())) == 1

    def no_hashing(*args: object) -> str:
        raise AssertionError("the kept digest should have been read")

    monkeypatch.setattr(caches, "_full_digest", no_hashing)
    monkeypatch.setattr(caches, "_code_digest", None)
    assert caches.code_digest() == first


def test_a_damaged_kept_digest_is_computed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fresh(monkeypatch, tmp_path)
    first = caches.code_digest()
    (kept,) = (tmp_path / "cache" / "code").iterdir()
    kept.write_text(kept.read_text().replace(first, "0" * 64))
    monkeypatch.setattr(caches, "_code_digest", None)
    assert caches.code_digest() == first


def test_an_edited_code_file_keys_every_cache_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kept digest is looked up by the files' stamps: an edit (a new change time) misses
    it and the digest is computed over the new content."""
    files = [tmp_path / "a.py", tmp_path / "b.sql"]
    files[0].write_text("x = 1\n")
    files[1].write_text("select 1\n")
    monkeypatch.setattr(caches, "_code_files", lambda: iter(files))
    _fresh(monkeypatch, tmp_path)
    before = caches.code_digest()
    seen = files[0].stat()
    # Same size, mtime set back: only the change time moves (the kernel's clock ticks
    # every few ms, so the edit is repeated until it has).
    for _ in range(100_000):
        files[0].write_text("x = 2\n")
        os.utime(files[0], ns=(seen.st_mtime_ns, seen.st_mtime_ns))
        if files[0].stat().st_ctime_ns != seen.st_ctime_ns:
            break
    monkeypatch.setattr(caches, "_code_digest", None)
    assert caches.code_digest() != before
