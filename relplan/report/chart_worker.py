"""The report's charts drawn in a process of their own, forked when `relplan report` starts.

Altair's import is about a quarter of a CPU second of Python and drawing the charts a tenth
more; in the command's process both come after the analyses (Altair imported on a thread
beside them only competes with them for the interpreter's lock, and its 20-30 MB would stay
resident under their peak: docs/benchmarks.md). `ChartWorker` is forked before the command
imports DuckDB and waits. Told to `prepare` (the report's pipeline does so when nothing else
will run beside its analyses: no what-if replay), it imports Altair, every section's module
and the report's model on the other core while the command analyses, then draws the charts
from the report's data sent to it as JSON; the command's share is sending that and reading
the specs back. Not told to prepare (the what-if replays on the workers then, or the analyses
come from their cache, so there is nothing to import beside), it draws nothing and the
command draws the charts as before.

The specs are those `chart_specs` gives in the command's process (drawn in the same zone,
`--tz`). Whatever goes wrong in the worker (a failed import, an error drawing, the process
gone), the command draws the charts itself, so an error is raised where it was before and
the page never depends on the worker.
"""

from __future__ import annotations

import signal
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from relplan.forking import fork_worker
from relplan.values import display_tz, use_tz

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from relplan.report.data import ReportData

Spec = dict[str, Any]
_PREPARE = "prepare"


class ChartWorker:
    """A forked process that draws one report's charts once told to prepare."""

    def __init__(self) -> None:
        self._conn, self._proc = fork_worker(_serve, "relplan-charts")
        self._prepared = False

    @property
    def prepared(self) -> bool:
        """Whether it was told to prepare (it then draws the charts)."""
        return self._prepared

    def prepare(self) -> None:
        """Start importing what drawing needs (the charts are then drawn by the worker); once."""
        if self._prepared:
            return
        with suppress(OSError, ValueError):
            self._conn.send(_PREPARE)
            self._prepared = True

    def specs(self, data: ReportData) -> dict[str, Spec]:
        """The chart specs of `data`: drawn by the worker when it was told to prepare, else
        (or when it cannot) by this process."""
        status, specs = "here", None
        if self._prepared:
            try:
                self._conn.send((display_tz(), data.model_dump_json()))
                status, specs = self._conn.recv()
            except Exception:  # not sent or not read back: drawn here
                status, specs = "lost", None
        if status != "ok" or not isinstance(specs, dict):
            from relplan.report.charts import chart_specs

            return chart_specs(data)
        return specs

    def close(self) -> None:
        """End the worker: it holds nothing of the report's and writes nothing, so it is
        killed rather than waited for (a report that fails early would otherwise wait for its
        imports)."""
        self._conn.close()
        self._proc.kill()
        self._proc.join()


def _serve(conn: Connection, parent_end: Connection) -> None:
    """The worker: wait to be told to prepare, import what drawing needs, then draw the one
    report it is sent and send the specs back."""
    parent_end.close()
    # Ctrl-C is the command's to handle: it stops reading, and this process ends with it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        if conn.recv() != _PREPARE:
            return
        with suppress(Exception):  # a failure is met again below, and reported as such
            import altair  # noqa: F401

            from relplan.report.section import report_model

            report_model()
        tz, text = conn.recv()
    except (EOFError, OSError):
        return
    try:
        from relplan.report.charts import chart_specs
        from relplan.report.section import report_model

        data = report_model().model_validate_json(text)
        with use_tz(tz):
            reply: tuple[str, Any] = ("ok", chart_specs(data))
    except Exception:  # a failed import or drawing: the command draws, and raises it
        reply = ("failed", None)
    with suppress(OSError, ValueError):
        conn.send(reply)
