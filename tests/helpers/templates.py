"""Template workspaces: built once per test run and copied per test (a file copy, not an
ingest or a row-by-row insert).

`from_template(dest, key, build)` builds the workspace with `build(path)` the first time a
`key` is asked for and from then on copies that file to `dest`. The templates live in the
folder tests/conftest.py names in RELPLAN_TEST_TEMPLATES (made by the controlling process
before pytest-xdist starts its workers, removed at exit), so every worker shares them: the
first to ask builds under a file lock, the others wait for it and copy. Outside pytest (a
test module run as a script) a folder of this process is used. A build that raises leaves
no template, so the next call builds (and raises) again. The key must name everything the
build depends on.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

ENV = "RELPLAN_TEST_TEMPLATES"
_FOLDER: Path | None = None
_BUILT: dict[str, Path] = {}


def _folder() -> Path:
    global _FOLDER
    if _FOLDER is None:
        shared = os.environ.get(ENV)
        if shared:
            _FOLDER = Path(shared)
        else:
            _FOLDER = Path(tempfile.mkdtemp(prefix="relplan-templates-"))
            atexit.register(shutil.rmtree, _FOLDER, True)
    return _FOLDER


def template(key: str, build: Callable[[Path], object], name: str = "workspace.duckdb") -> Path:
    """The folder's file `name` that `build(path)` made for `key`: built at most once per
    run (under a lock shared by the workers), read-only from then on."""
    known = _BUILT.get(key)
    if known is not None:
        return known
    folder = _folder() / hashlib.sha256(key.encode()).hexdigest()[:24]
    path = folder / name
    done = folder / "built"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            for old in folder.iterdir():  # what a build that raised left behind
                if old.name != "lock":
                    shutil.rmtree(old) if old.is_dir() else old.unlink()
            build(path)
            # A closed workspace is one file: DuckDB checkpoints the WAL into it on close.
            assert not path.with_name(path.name + ".wal").exists(), key
            done.write_text(key, encoding="utf-8")
    _BUILT[key] = path
    return path


def from_template(dest: Path, key: str, build: Callable[[Path], object]) -> Path:
    """`dest` holding the workspace `build` makes for `key`, built at most once per run."""
    source = template(key, build)
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, dest)
    return dest
