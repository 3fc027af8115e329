"""Where relplan keeps what it can compute again, and how a kept file is checked.

The Vega bundle (relplan/report/bundle.py), the what-if replays and report pages
(relplan/whatif/cache.py, relplan/report/cache.py) and compare's results
(relplan/compare/cache.py) all live under one folder: `$RELPLAN_CACHE_DIR`, else
`$XDG_CACHE_HOME/relplan`, else `~/.cache/relplan`. Each kept text file starts with a header
line ending in the SHA-256 of the rest; a file that fails it (truncated, edited) reads as
absent and is written again. Writes are atomic (a temporary file renamed into place) and a
folder that cannot be written is skipped quietly: a cache only ever saves work.

Standard library only (and relplan.sql's folder of queries, imported when the code digest is
first asked for), so a report served from a cache loads neither duckdb nor the analyses.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

_code_digest: str | None = None

# The libraries whose results a kept file holds: the SQL engine, the frames, the numbers, the
# charts and the page. A new version of any of them keys every cache anew.
LIBRARIES = (
    "duckdb",
    "polars",
    "numpy",
    "pyarrow",
    "pydantic",
    "altair",
    "vl_convert",
    "jinja2",
)


def root() -> Path:
    """The cache folder: `$RELPLAN_CACHE_DIR`, else `$XDG_CACHE_HOME/relplan`, else
    `~/.cache/relplan`."""
    if explicit := os.environ.get("RELPLAN_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "relplan"


def _code_files() -> Iterator[Path]:
    import relplan
    from relplan import sql

    here = Path(relplan.__file__).resolve().parent
    yield from sorted(here.rglob("*.py"))
    yield from sorted(Path(str(sql.queries_dir())).rglob("*.sql"))
    yield from sorted(here.rglob("*.toml"))
    yield from sorted(here.rglob("*.html"))  # the report's and the comparison's templates


def libraries() -> list[str]:
    """One line per library of LIBRARIES: its name and the path, size and modification time
    of its module file, found without importing it ("absent" when it is not installed).
    An upgrade or reinstall rewrites that file, so the line changes."""
    lines = []
    for name in LIBRARIES:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        try:
            st = os.stat(origin) if origin else None
        except OSError:
            st = None
        if st is None:
            lines.append(f"{name} absent")
        else:
            lines.append(f"{name} {origin} {st.st_size} {st.st_mtime_ns}")
    return lines


def code_digest() -> str:
    """SHA-256 over relplan's Python files, queries, TOML and templates and the installed
    libraries of LIBRARIES (once per process): a new version of relplan or of a library, or
    an edited checkout, keys every cache anew."""
    global _code_digest
    if _code_digest is None:
        h = hashlib.sha256()
        for p in _code_files():
            h.update(p.name.encode())
            h.update(p.read_bytes())
        for line in libraries():
            h.update(line.encode() + b"\n")
        _code_digest = h.hexdigest()
    return _code_digest


def file_sha256(path: Path | str) -> str:
    """SHA-256 of a file's bytes, read in 1 MiB pieces (raises OSError when it cannot be read)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def read_checked(path: Path, header: str) -> str | None:
    """The text kept at `path` after its `header` + SHA-256 line, or None when the file is
    absent, unreadable or fails the check."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    head, sep, body = text.partition("\n")
    if not sep or head != header + hashlib.sha256(body.encode("utf-8")).hexdigest():
        return None
    return body


def write_checked(path: Path, body: str, header: str) -> None:
    """Keep `body` at `path` under its `header` + SHA-256 line, atomically; a folder that
    cannot be written is skipped."""
    text = header + hashlib.sha256(body.encode("utf-8")).hexdigest() + "\n" + body
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return
