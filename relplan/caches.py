"""Where relplan keeps what it can compute again, and how a kept file is checked.

The Vega bundle (relplan/report/bundle.py), the what-if replays and report pages
(relplan/whatif/cache.py, relplan/report/cache.py), compare's results
(relplan/compare/cache.py) and relplan's own code digest (`code/`, below) all live under one
folder: `$RELPLAN_CACHE_DIR`, else
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
    """One line per library of LIBRARIES: its name and the stamp (`_stamp_line`) of its
    module file, found without importing it ("absent" when it is not installed). An upgrade
    or reinstall rewrites that file, so the line changes."""
    lines = []
    for name in LIBRARIES:
        spec = importlib.util.find_spec(name)
        origin = spec.origin if spec is not None else None
        try:
            lines.append(f"{name} {_stamp_line(origin)}" if origin else f"{name} absent")
        except OSError:
            lines.append(f"{name} absent")
    return lines


_CODE_HEADER = "relplan code digest v1 "


def _stamp_line(path: Path | str) -> str:
    """A file's path, size, modification time, change time and inode: a rewrite, an edit or
    a reinstall changes at least one of them (the change time cannot be set back)."""
    st = os.stat(path)
    return f"{path} {st.st_size} {st.st_mtime_ns} {st.st_ctime_ns} {st.st_ino}"


def _full_digest(files: list[Path], libs: list[str]) -> str:
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode())
        h.update(p.read_bytes())
    for line in libs:
        h.update(line.encode() + b"\n")
    return h.hexdigest()


def code_digest() -> str:
    """SHA-256 over relplan's Python files, queries, TOML and templates and the installed
    libraries of LIBRARIES (once per process): a new version of relplan or of a library, or
    an edited checkout, keys every cache anew.

    Reading and hashing relplan's ~480 files costs about 0.06 CPU s; a process whose files
    all have the stamps (path, size, times, inode) a previous process saw reads the digest
    that process kept under `code/` in the cache folder instead (stat only, a few ms)."""
    global _code_digest
    if _code_digest is None:
        files = list(_code_files())
        libs = libraries()
        stamps = "\n".join([*(_stamp_line(p) for p in files), *libs])
        kept = root() / "code" / (hashlib.sha256(stamps.encode()).hexdigest() + ".txt")
        body = read_checked(kept, _CODE_HEADER)
        if body is not None and len(body) == 64 and body.isalnum():
            _code_digest = body
        else:
            _code_digest = _full_digest(files, libs)
            write_checked(kept, _code_digest, _CODE_HEADER)
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
