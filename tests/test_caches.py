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
