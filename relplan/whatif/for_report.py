"""The what-if replay the report shows: one seed per control, to keep `relplan report` quick.

`relplan report` hands `report_whatif` to the report pipeline (the report itself never imports
the simulator); the page says how many seeds were replayed. `relplan whatif --seeds N` is the
full run with the range over seeds.

Nothing is replayed when there is nothing to improve or to compare with: an incident that
recovered, or one without a verdict. Then, and when the replay cannot run (no proxy log, no
Ĉ, a scenario the simulator refuses), the reason is listed under "what the data could not
show" and the rest of the report is unchanged.

The result (or the reason nothing was replayed) is cached per workspace fingerprint
(relplan/whatif/cache.py, docs/whatif.md "The report's cache"): a second report of the same
inputs reads it instead of replaying.

The replay starts before the report's analyses. With workers (`pool`, forked by the command
before it imports duckdb: `relplan.whatif.replay.replay_pool`, two on a machine of two cores
or more: `report_workers`) and a workspace file open read-only, a worker opens the same file
read-only and measures and fits the incident there (`plan_in_worker`); once its plan is in, a
thread of the command's hands every run to the workers, which replay them while the
command's process runs the analyses (relplan/report/pipeline.py, `collect_report_data`) and
then waits for them and ranks. So the fit's and the replays' CPU and memory stay out of the
command's process, and its analyses out of the workers'. Without a worker, or on a workspace
another connection may write, the incident is fitted in the command's process, which also
replays its share of the runs from the back.
"""

from __future__ import annotations

import json
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from relplan.analyses import AnalyzeOptions
from relplan.errors import NoDataError, RelplanError
from relplan.whatif.model import Figures, WhatIf

if TYPE_CHECKING:
    from relplan.whatif.controls import Control
    from relplan.whatif.run import Pending, Started, WhatIfOptions

REPORT_SEEDS = 1

# Opens a workspace file read-only (relplan.workspace.connect with read_only=True), in the
# replay's worker: a module-level function, so it crosses to the worker by name.
Reopen = Callable[[Path], duckdb.DuckDBPyConnection]


def report_whatif(
    con: duckdb.DuckDBPyConnection,
    opts: AnalyzeOptions,
    progress: Callable[[int, int], None] | None = None,
    *,
    pool: ProcessPoolExecutor | None = None,
    reopen: Reopen | None = None,
) -> WhatIf | Callable[[], WhatIf]:
    """The what-if from the cache when this workspace was replayed before with the same
    options and code (relplan/whatif/cache.py); else start the replay and return what
    finishes it: fitted now and handed to the workers (`pool`, else started here), which
    replay while the caller runs the analyses; calling the result runs the rest here, stores
    and returns it. (A result at once tells the report that nothing runs beside its
    analyses: relplan/report/pipeline.py, `collect_report_data`.) With
    `reopen` (a module-level function opening a workspace file read-only, such as
    `relplan.workspace.connect` with read_only=True) and a workspace file open read-only, a
    worker fits too (`plan_in_worker`) and the workers replay every run (`_InWorker`). Raises
    NoDataError (now, or when called) when nothing is replayed."""
    from relplan.whatif import cache

    key = cache.fingerprint(con, opts, f"seeds={REPORT_SEEDS}")
    hit = cache.load(key)
    if hit is not None:
        cached = json.loads(hit)
        if "not_replayed" in cached:
            raise NoDataError(str(cached["not_replayed"]))
        return WhatIf.model_validate(cached["whatif"])
    db = _read_only_file(con) if pool is not None and reopen is not None else None
    try:
        if pool is not None and reopen is not None and db is not None:
            pending: Pending | _InWorker = _InWorker(con, opts, pool, reopen, db)
        else:
            pending = _start(con, opts, pool)
    except NoDataError as exc:
        cache.store(key, json.dumps({"not_replayed": str(exc)}))
        raise

    def finish() -> WhatIf:
        try:
            result = pending.result(progress)
        except NoDataError as exc:
            cache.store(key, json.dumps({"not_replayed": str(exc)}))
            raise
        except RelplanError as exc:
            cache.store(key, json.dumps({"not_replayed": f"not replayed: {exc}"}))
            raise NoDataError(f"not replayed: {exc}") from None
        cache.store(key, json.dumps({"whatif": result.model_dump(mode="json")}))
        return result

    return finish


def _start(
    con: duckdb.DuckDBPyConnection,
    opts: AnalyzeOptions,
    pool: ProcessPoolExecutor | None,
) -> Pending:
    from relplan.whatif.figures import figures
    from relplan.whatif.replay import report_jobs
    from relplan.whatif.run import WhatIfOptions, start_whatif

    incident = figures(con, opts)
    _check_verdict(incident)
    try:
        return start_whatif(
            con,
            WhatIfOptions(seeds=REPORT_SEEDS, jobs=report_jobs(), capacity=opts.capacity),
            analyze_opts=opts,
            incident=incident,
            pool=pool,
        )
    except NoDataError:
        raise
    except RelplanError as exc:
        raise NoDataError(f"not replayed: {exc}") from None


def _read_only_file(con: duckdb.DuckDBPyConnection) -> str | None:
    """The workspace file `con` has open read-only (so another process may open it too and
    nothing changes it meanwhile), else None."""
    from relplan import sql

    row = sql.one(con, "whatif/current_database")
    if row is None or not row["readonly"] or row["path"] is None:
        return None
    return str(row["path"])


def _options(opts: AnalyzeOptions) -> WhatIfOptions:
    from relplan.whatif.replay import report_jobs
    from relplan.whatif.run import WhatIfOptions

    return WhatIfOptions(seeds=REPORT_SEEDS, jobs=report_jobs(), capacity=opts.capacity)


@dataclass
class Planned:
    """What the worker's fit hands back (`plan_in_worker`): the replay under way, the
    controls, and the reason nothing is replayed instead, when there is one."""

    started: Started | None
    controls: list[Control]
    not_replayed: str = ""


def plan_in_worker(reopen: Reopen, db: str, opts: AnalyzeOptions, folder: str) -> Planned:
    """In the replay's worker: open the workspace file `db` read-only (`reopen`: this module
    does not open workspaces itself), measure the incident,
    fit it into `folder` and plan its runs (what `_start` does in the command's process); the
    command then hands the runs to the workers (`_InWorker`). A reason nothing is replayed
    comes back as `not_replayed` (not an exception, whose class may not survive the pipe)."""
    from relplan.whatif.figures import figures
    from relplan.whatif.fit import fit_incident
    from relplan.whatif.run import select_controls, start_replay

    o = _options(opts)
    try:
        con = reopen(Path(db))
        try:
            incident = figures(con, opts)
            _check_verdict(incident)
            fitted = fit_incident(
                con,
                Path(folder) / "scenario.toml",
                flags=o.flags,
                profile=o.profile,
                capacity=o.capacity,
                opts=opts,
            )
            controls = select_controls(fitted, o)
            started = start_replay(
                con,
                controls,
                o,
                work_dir=Path(folder),
                analyze_opts=opts,
                fitted=fitted,
                incident=incident,
            )
        finally:
            con.close()
    except NoDataError as exc:
        return Planned(None, [], str(exc))
    except RelplanError as exc:
        return Planned(None, [], f"not replayed: {exc}")
    return Planned(started, controls)


class _InWorker:
    """A what-if a worker fits (`plan_in_worker`) and the workers replay: a thread of the
    command's waits for the plan and hands every run to the pool at once, so a worker starts
    replaying while the command's process still runs the analyses; `result()` waits for the
    runs and ranks. The command's process replays none: its memory, which holds the
    analyses' DuckDB, never holds a simulation too (docs/benchmarks.md, "The cold report,
    sixth wave")."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        opts: AnalyzeOptions,
        pool: ProcessPoolExecutor,
        reopen: Reopen,
        db: str,
    ) -> None:
        from relplan.whatif.replay import warm_up

        self._con, self._opts, self._t = con, opts, time.perf_counter()
        self._folder = tempfile.TemporaryDirectory(prefix="relplan-whatif-")
        self._plan = pool.submit(plan_in_worker, reopen, db, opts, self._folder.name)
        pool.submit(warm_up)  # another worker imports what a replay needs meanwhile
        self._pool = pool
        self._runs: list[Future[Any]] = []
        self._lock = threading.Lock()
        self._closed = False
        self._refused: RuntimeError | None = None  # the pool's, when it took no run
        self._handing = threading.Thread(
            target=self._hand_out, name="relplan-whatif-hand-out", daemon=True
        )
        self._handing.start()

    def _hand_out(self) -> None:
        """On the thread: once the plan is in, every run to the pool. A failed or cancelled
        plan hands nothing: `result()` raises its error."""
        from relplan.whatif.replay import run_timed

        try:
            planned = self._plan.result()
        except BaseException:  # `result()` raises it on the command's thread
            return
        if planned.started is None:
            return
        with self._lock:
            if self._closed:
                return
            runs: list[Future[Any]] = []
            try:
                for task in planned.started.tasks:
                    runs.append(self._pool.submit(run_timed, task))
            except RuntimeError as exc:  # a worker died (a broken pool): `result()` raises it
                for f in runs:
                    f.cancel()
                self._refused = exc
                return
            self._runs = runs

    def result(self, progress: Callable[[int, int], None] | None = None) -> WhatIf:
        from relplan.whatif.replay import collect_tasks
        from relplan.whatif.run import Replayed, ranked_whatif

        try:
            with self._folder:
                planned = self._plan.result()
                if planned.started is None:
                    raise NoDataError(planned.not_replayed)
                started = planned.started
                self._handing.join()
                if self._refused is not None:
                    raise self._refused
                out = collect_tasks(self._runs, progress)
        except BaseException:
            with self._lock:
                self._closed = True
                for f in self._runs:
                    f.cancel()
            raise
        runs = [fig for fig, _ in out]
        k = len(started.seeds)
        done = Replayed(
            started.fitted,
            started.incident,
            started.seeds,
            {c.name: runs[i * k : (i + 1) * k] for i, c in enumerate(started.runnable)},
            sum(used for _, used in out),
        )
        return ranked_whatif(self._con, _options(self._opts), done, planned.controls, self._t)


def _check_verdict(incident: Figures) -> None:
    verdict = incident.verdict
    if verdict == "recovered":
        raise NoDataError("not replayed: the incident recovered by itself, no control is needed")
    if verdict == "insufficient data":
        raise NoDataError("not replayed: the incident has no verdict to compare the replays with")
