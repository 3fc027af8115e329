"""New raw inputs ingested in a process of their own, forked when `relplan report` starts.

A report of raw inputs the workspace cache (relplan/report/workspace_cache.py) does not hold
ingests them before it can analyse. In the command's process that ingest (about 0.6 CPU s on
the sample: DuckDB's work and the ingest's own imports) came after the command imported the
report's modules (about 0.25 CPU s), and for most of it the second core was idle.
`IngestWorker` is forked before the command imports DuckDB (a fork after would copy its
threads' locks) and imports what the ingest needs at once, while the command finds out
whether the inputs are new (it kills a worker it does not need). Told the inputs and their
cache key, it ingests them into the cache folder (`workspace_cache.workspace_for`, the same
call the command makes) while the command imports the report's modules; the command then
opens the kept file read-only, as it opens one kept by an earlier report.

Whatever goes wrong in the worker (an input error, a failed import, the cache folder not
writable, the process gone), its answer is only "not ingested", and the command ingests the
inputs itself as before: an error is raised where and as it was (after a second read of
the inputs; a bad input costs that), and the report never depends on the worker. An ingest
that was asked for and not read when the command ends (an error, Ctrl-C) is interrupted:
the ingest removes its file, as every failed ingest does (relplan/workspace, open_workspace).
"""

from __future__ import annotations

import os
import signal
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from relplan.forking import fork_worker

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from relplan.ingest.base import IngestOptions

_OK = "ok"
# How long `close` waits for an interrupted ingest to remove its file before it kills it.
_WAIT_S = 10.0


class IngestWorker:
    """A forked process that ingests one report's new inputs into the workspace cache."""

    def __init__(self) -> None:
        self._conn, self._proc = fork_worker(_serve, "relplan-ingest")
        self._asked = False  # told to ingest, and its answer not read yet

    def ingest(self, path: Path, inputs: IngestOptions, key: str) -> None:
        """Start ingesting the raw inputs at `path` (read with `inputs`) into the workspace
        cache under `key` (workspace_cache.missing); once."""
        if self._asked:
            return
        # Not sent (the pipe gone, an option that cannot be pickled): not asked, and the
        # command ingests the inputs itself.
        with suppress(Exception):
            self._conn.send((path, inputs, key))
            self._asked = True

    def result(self) -> Path | None:
        """The kept workspace it ingested (waited for), or None: not asked, or not ingested
        there for any reason (the command then ingests)."""
        if not self._asked:
            return None
        try:
            status, found = self._conn.recv()
        except Exception:  # the process gone, or an answer that cannot be read
            self._asked = False
            return None
        # Interrupted while waiting (Ctrl-C), the ingest is still asked for: `close` stops it.
        self._asked = False
        return Path(found) if status == _OK and isinstance(found, str) else None

    def close(self) -> None:
        """End the worker. An ingest asked for and not read is interrupted first, so that it
        removes what it wrote; an idle worker holds nothing and is killed."""
        if self._asked and self._proc.is_alive() and self._proc.pid is not None:
            with suppress(OSError):
                os.kill(self._proc.pid, signal.SIGINT)
            self._proc.join(_WAIT_S)
        self._conn.close()
        self._proc.kill()
        self._proc.join()


def _serve(conn: Connection, parent_end: Connection) -> None:
    """The worker: wait for the inputs, ingest them, send back the kept file's path. Nothing
    leaves it as an exception (a forked process prints its traceback): a failure, Ctrl-C
    included, is the answer "failed"."""
    parent_end.close()
    # Ctrl-C interrupts the ingest (which then removes its file), as it would the command's.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    reply: tuple[str, str | None] = ("failed", None)
    try:
        # What the ingest imports, while the command finds out whether the inputs are new
        # (an idle worker is killed: nothing is written before the inputs arrive).
        with suppress(Exception):  # a failure is met again below, and answered as such
            import relplan.ingest.driver
            import relplan.report.workspace_cache  # noqa: F401
        try:
            path, inputs, key = conn.recv()
        except (EOFError, OSError):
            return
        from relplan.report import workspace_cache

        kept = workspace_cache.workspace_for(path, inputs, key)
        reply = (_OK, str(kept)) if kept is not None else ("none", None)
    except BaseException:  # the command ingests again, and raises it there
        reply = ("failed", None)
    finally:
        with suppress(BaseException):
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            conn.send(reply)
