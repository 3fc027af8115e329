"""Template workspaces: built once per test process, copied per test (a file copy, not an
ingest or a row-by-row insert).

`from_template(dest, key, build)` builds the workspace with `build(path)` the first time a
`key` is asked for, in a folder of this process (one per pytest-xdist worker, removed at exit),
and from then on copies that file to `dest`. A build that raises leaves no template, so the
next call builds (and raises) again. The key must name everything the build depends on.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

_FOLDER: Path | None = None
_BUILT: dict[str, Path] = {}


def _folder() -> Path:
    global _FOLDER
    if _FOLDER is None:
        _FOLDER = Path(tempfile.mkdtemp(prefix="relplan-templates-"))
        atexit.register(shutil.rmtree, _FOLDER, True)
    return _FOLDER


def from_template(dest: Path, key: str, build: Callable[[Path], object]) -> Path:
    """`dest` holding the workspace `build` makes for `key`, built at most once per process."""
    template = _BUILT.get(key)
    if template is None:
        folder = _folder() / f"t{len(_BUILT)}"
        folder.mkdir()
        template = folder / "workspace.duckdb"
        build(template)
        # A closed workspace is one file: DuckDB checkpoints the WAL into it on close.
        assert not template.with_name(template.name + ".wal").exists(), key
        _BUILT[key] = template
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(template, dest)
    return dest
