"""The drill's output folder (docs/drill.md, The output folder).

- `attempts.jsonl`: one line per attempt (docs/formats.md, Proxy attempts log), appended and
  flushed as each attempt ends, so an interrupted drill leaves a valid file;
- `metrics.scrape.txt`: the endpoint's /metrics, one `# SCRAPE <time>` block per scrape, the
  format `relplan record` writes (relplan/record.py), appended whole;
- `capacity.jsonl`: the attempts of the `--capacity auto` ramp, when it ran;
- `run.json`: the run manifest (docs/formats.md, Run manifest), written at the end;
- `drill.duckdb`: the workspace, made by relplan's own ingest from the files above.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any

from relplan.drill.client import Record
from relplan.errors import InputError
from relplan.record import scrape_block

if TYPE_CHECKING:
    from relplan.ingest.outcome import IngestReport
    from relplan.models import RunManifest

ATTEMPTS = "attempts.jsonl"
SCRAPES = "metrics.scrape.txt"
RAMP = "capacity.jsonl"
MANIFEST = "run.json"
WORKSPACE = "drill.duckdb"
FILES = (ATTEMPTS, SCRAPES, RAMP, MANIFEST, WORKSPACE)


def check_out(out: Path) -> None:
    """Refuse a file, an unwritable place, or a folder that already holds a drill."""
    if out.exists() and not out.is_dir():
        raise InputError("--out must be a directory, but this is a file", str(out))
    held = [f for f in FILES if (out / f).exists()]
    if held:
        raise InputError(
            f"already holds a drill ({', '.join(held)}); give a new --out folder", str(out)
        )
    parent = next((p for p in [out, *out.parents] if p.exists()), None)
    if parent is not None and not os.access(parent, os.W_OK):
        raise InputError("--out: cannot write here (permission denied)", str(parent))


class Folder:
    """The output folder while a drill runs: `with Folder(out) as f: f.attempt(rec)`."""

    def __init__(self, out: Path) -> None:
        check_out(out)
        self.out = out
        self.attempts = 0
        self.scrapes = 0
        self.scrape_failed = 0
        self.last_scrape_error: str | None = None
        self._fh: IO[str] | None = None
        self._ramp: IO[str] | None = None

    def __enter__(self) -> Folder:
        self.out.mkdir(parents=True, exist_ok=True)
        self._fh = (self.out / ATTEMPTS).open("a", encoding="utf-8")
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for fh in (self._fh, self._ramp):
            if fh is not None:
                fh.close()

    def attempt(self, rec: Record) -> None:
        assert self._fh is not None
        self._fh.write(rec.json() + "\n")
        self._fh.flush()
        self.attempts += 1

    def ramp_attempt(self, rec: Record) -> None:
        if self._ramp is None:
            self._ramp = (self.out / RAMP).open("a", encoding="utf-8")
        self._ramp.write(rec.json() + "\n")
        self._ramp.flush()

    def scrape(self, taken: float, body: bytes) -> None:
        block = scrape_block(taken, body)
        with (self.out / SCRAPES).open("ab") as fh:
            good = fh.tell()
            try:
                fh.write(block)
                fh.flush()
            except BaseException:
                fh.truncate(good)  # never half a scrape
                raise
        self.scrapes += 1

    def scrape_error(self, message: str) -> None:
        self.scrape_failed += 1
        self.last_scrape_error = message

    def manifest(self, man: RunManifest) -> None:
        data: dict[str, Any] = man.model_dump(mode="json", exclude_none=True)
        tmp = self.out / (MANIFEST + ".tmp")
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        tmp.replace(self.out / MANIFEST)

    def remove(self, existed: bool) -> None:
        """Remove what this drill wrote (and the folder when the drill made it)."""
        for name in FILES:
            (self.out / name).unlink(missing_ok=True)
        if not existed:
            with contextlib.suppress(OSError):
                self.out.rmdir()

    def inputs(self) -> list[Path]:
        names = [ATTEMPTS, SCRAPES, MANIFEST]
        return [self.out / n for n in names if (self.out / n).is_file()]

    def ingest(self) -> IngestReport:
        """The workspace drill.duckdb, through `relplan ingest`'s own readers."""
        from relplan.ingest import IngestOptions, ingest_paths

        return ingest_paths(self.out / WORKSPACE, self.inputs(), IngestOptions())
