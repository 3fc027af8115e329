"""What `relplan report` writes, and where: the result paths, the default page path, the
checks of the output flags, and how a workspace file is told from raw inputs.

Light on purpose (standard library and relplan.errors): the page cache
(relplan/report/cache.py) serves a page with these alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from relplan.errors import InputError, UsageError

REPORTS_DIR = Path("reports")
_DUCKDB_MAGIC = b"DUCK"  # bytes 8..12 of every DuckDB database file


@dataclass
class ReportFiles:
    html: Path
    html_bytes: int
    images: list[Path] = field(default_factory=list)
    json: Path | None = None


def default_out(run_name: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", run_name).strip(".-") or "report"
    return REPORTS_DIR / f"{safe[:120]}.html"


def check_targets(out: Path | None, png_dir: Path | None, svg_dir: Path | None) -> None:
    """The output flags name places a page and images can go (else a UsageError)."""
    if out is not None and out.is_dir():
        raise UsageError("--out", f"{out} is a directory; give a file such as {out}/incident.html")
    for flag, folder in (("--png", png_dir), ("--svg", svg_dir)):
        if folder is not None and folder.exists() and not folder.is_dir():
            raise UsageError(flag, f"{folder} exists and is not a directory")


def is_workspace_file(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            head = fh.read(12)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", str(path)) from exc
    return head[8:12] == _DUCKDB_MAGIC


def run_name_of(path: Path) -> str:
    """The run name a raw-input PATH gives when run.json names none."""
    return path.name if path.is_dir() else path.stem.split(".")[0]
