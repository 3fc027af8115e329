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

The replay starts before the report's analyses. With a worker (`pool`, forked by the command
before it imports duckdb: `relplan.whatif.replay.replay_pool`) and a workspace file open
read-only, the worker opens the same file read-only and does the whole what-if there: it
measures the incident, fits it and replays from the front of the runs (`plan_in_worker`,
`replay_planned`), while the command's process runs the analyses, then takes its share of the
runs from the back and ranks them (relplan/report/pipeline.py, `collect_report_data`). So the
fit's CPU and memory stay out of the command's process, and its analyses out of the worker's.
Without a worker, or on a workspace another connection may write, the incident is fitted in
the command's process and the worker only replays.
"""

from __future__ import annotations

import json
import tempfile
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
) -> Callable[[], WhatIf]:
    """Start the replay and return what finishes it: from the cache when this workspace was
    replayed before with the same options and code (relplan/whatif/cache.py), else fitted
    now and handed to the workers (`pool`, else started here), which replay while the caller
    runs the analyses; calling the result runs the rest here, stores and returns it. With
    `reopen` (a module-level function opening a workspace file read-only, such as
    `relplan.workspace.connect` with read_only=True) and a pool of one worker, the worker fits
    too (`plan_in_worker`). Raises
    NoDataError (now, or when called) when nothing is replayed."""
    from relplan.whatif import cache

    key = cache.fingerprint(con, opts, f"seeds={REPORT_SEEDS}")
    hit = cache.load(key)
    if hit is not None:
        cached = json.loads(hit)
        if "not_replayed" in cached:
            raise NoDataError(str(cached["not_replayed"]))
        result = WhatIf.model_validate(cached["whatif"])
        return lambda: result
    # The worker that fits keeps the runs it planned for its own `replay_planned`: one worker.
    one_worker = pool is not None and getattr(pool, "_max_workers", 0) == 1
    db = _read_only_file(con) if one_worker and reopen is not None else None
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


# In the worker: the replay it planned, by work folder, for `replay_planned`.
_PLANS: dict[str, Started] = {}


def plan_in_worker(reopen: Reopen, db: str, opts: AnalyzeOptions, folder: str) -> Planned:
    """In the replay's worker: open the workspace file `db` read-only (`reopen`: this module
    does not open workspaces itself), measure the incident,
    fit it into `folder` and plan its runs (what `_start` does in the command's process); the
    worker then replays them from the front (`replay_planned`). A reason nothing is replayed
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
    _PLANS[folder] = started
    return Planned(started, controls)


def replay_planned(folder: str, index: int) -> tuple[Figures, float] | None:
    """In the replay's worker: run `index` of the runs it planned in `folder` (None when it
    planned fewer, or none)."""
    from relplan.whatif.replay import run_timed

    started = _PLANS.get(folder)
    if started is None or index >= len(started.tasks):
        return None
    return run_timed(started.tasks[index])


def _most_runs() -> int:
    from relplan.whatif.controls import CONTROLS

    return (len(CONTROLS) + 1) * REPORT_SEEDS  # as observed and every control


class _InWorker:
    """A what-if the worker fits and replays (`plan_in_worker`, then `replay_planned` for
    every run it could have); `result()` waits for the fit, runs the replays no worker has
    started here, from the back, and ranks."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        opts: AnalyzeOptions,
        pool: ProcessPoolExecutor,
        reopen: Reopen,
        db: str,
    ) -> None:
        self._con, self._opts, self._t = con, opts, time.perf_counter()
        self._folder = tempfile.TemporaryDirectory(prefix="relplan-whatif-")
        name = self._folder.name
        self._plan = pool.submit(plan_in_worker, reopen, db, opts, name)
        self._runs: list[Future[Any]] = [
            pool.submit(replay_planned, name, i) for i in range(_most_runs())
        ]

    def result(self, progress: Callable[[int, int], None] | None = None) -> WhatIf:
        from relplan.whatif.replay import finish_tasks
        from relplan.whatif.run import Replayed, ranked_whatif

        try:
            with self._folder:
                planned = self._plan.result()
                if planned.started is None:
                    raise NoDataError(planned.not_replayed)
                started = planned.started
                n = len(started.tasks)
                for extra in reversed(self._runs[n:]):
                    extra.cancel()
                out = finish_tasks(started.tasks, self._runs[:n], progress)
        except BaseException:
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
