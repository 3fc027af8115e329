"""Replay a fitted scenario under each control × seed, in parallel processes.

Each run is a normal simulation of the scenario file with the control's `--set` overrides
and the seed (relplan.sim.run.prepare, relplan.sim.simulator.Simulation), with the control's
hooks (hooks.py). What the figures read (the proxy log, the engine trace's events, run.json)
is taken from the simulator's own frames in the canonical formats (relplan/sim/writer.py)
into an in-memory workspace, the same rows `relplan ingest` stores from those files
(`load_measured`; no file is written), and measured by `figures()`, exactly as the incident
is. Runs are spread over `jobs` processes, this one included (the others forked from the
simulator's fork server, as `relplan simulate sweep` does); results come back in task order
whatever the parallelism, so the table is deterministic.
"""

from __future__ import annotations

import multiprocessing
import signal
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from relplan.forking import cores, fork_ok
from relplan.whatif.controls import Control
from relplan.whatif.model import ControlOutcome, Figures, Spread

if TYPE_CHECKING:
    import duckdb
    import polars as pl

    from relplan.sim.scenario import Override


@dataclass(frozen=True)
class Task:
    scenario: str  # path of the fitted scenario file
    sets: tuple[Override | str, ...]  # typed overrides, or `--set` strings
    seed: int
    control: str
    hooks: tuple[str, ...] = ()  # relplan/whatif/hooks.py


def run_one(task: Task) -> Figures:
    """One simulation of `task`, measured like the incident."""
    with no_collection_pauses():
        return _replay(task)  # its simulation is garbage once it returns


def _replay(task: Task) -> Figures:
    from relplan.sim.run import prepare
    from relplan.sim.simulator import Simulation
    from relplan.whatif.figures import figures
    from relplan.whatif.hooks import apply

    p = prepare(task.scenario, task.sets, task.seed)
    sim = Simulation(p.scenario, p.profile, p.capacity, p.scenario.seed, record_steps=False)
    apply(sim, task.hooks)
    sim.run()
    with replay_workspace() as con:
        load_measured(con, sim, {"scenario": p.scenario.name, "sets": p.sets})
        return figures(con)


@contextmanager
def no_collection_pauses() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, then one collection of the
    youngest generation, which holds everything the block made. A replay makes ~100,000
    objects that live until its end (calls, attempts, executions, events), and the
    collector, run every 700 allocations, went over them again and again: a fifth of a
    replay's CPU. Its garbage (the simulation's cycles) is freed at the end as before, so
    the peak memory is the same (231 MB for the report's 11 replays in one process)."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
            gc.collect(0)


# This process's DuckDB for its replays, with the pid that opened it (a forked child opens
# its own).
_DB: list[tuple[int, duckdb.DuckDBPyConnection]] = []


@contextmanager
def replay_workspace() -> Iterator[duckdb.DuckDBPyConnection]:
    """A fresh, empty in-memory workspace (the schema created, nothing else in it) for one
    replay, dropped at the end of the block. Each is a new in-memory database attached to one
    DuckDB per process and made the default, so a replay does not pay for starting DuckDB
    (about 20 ms of CPU, as much as loading its rows); one thread, as the tables are small and
    the other core replays too."""
    import os

    import duckdb

    from relplan import sql

    if not _DB or _DB[0][0] != os.getpid():
        con = duckdb.connect(config={"threads": 1})
        sql.run(con, "whatif/no_progress_bar")
        _DB[:] = [(os.getpid(), con)]
    con = _DB[0][1]
    sql.run(con, "whatif/replay_attach")
    try:
        sql.run(con, "schema")
        yield con
    finally:
        sql.run(con, "whatif/replay_detach")


# The sources the replay's workspace holds, as `relplan ingest` numbers the three files
# written in this order (proxy.parquet, engine.parquet, run.json).
MEASURED = (("proxy", "parquet"), ("engine", "parquet"), ("manifest", "run_json"))


def load_measured(con: duckdb.DuckDBPyConnection, sim: Any, meta: dict[str, Any]) -> None:
    """Store what the figures read of a finished simulation in the workspace `con` (the
    schema created, nothing else in it): the rows `relplan ingest` stores from the proxy log,
    the engine trace's `event` rows and run.json in the canonical formats
    (relplan/sim/writer.py), straight from the simulator's frames, with no file written and
    no reader run. The trace's step and stats rows and the metrics (most of a run's bytes)
    are left out: no figure reads them. tests/test_whatif_load.py holds every table equal to
    an ingest of the written files."""
    import datetime as dt
    import json

    import polars as pl

    from relplan import sql
    from relplan.sim.writer import event_frame, manifest, proxy_frame

    proxy = proxy_frame(sim).with_row_index("ln", offset=1)
    events = event_frame(sim).with_row_index("ln", offset=1)
    man = manifest(sim, meta)
    now = dt.datetime.now(dt.timezone.utc)
    spans = {
        "proxy": (len(proxy), proxy["t_sent"].min(), proxy["t_end"].max()),
        "engine": (len(events), events["t"].min(), events["t"].max()),
        "manifest": (1 + len(man.phases), None, None),
    }
    con.register("replay_proxy", ArrowStream(proxy.with_columns(pl.col("ln").cast(pl.Int64))))
    con.register("replay_events", ArrowStream(events.with_columns(pl.col("ln").cast(pl.Int64))))
    try:
        # one statement for the three (each insert is about 1 ms of DuckDB's CPU)
        sql.run(
            con,
            "whatif/replay_sources",
            {
                "source_ids": list(range(1, len(MEASURED) + 1)),
                "kinds": [kind for kind, _ in MEASURED],
                "formats": [fmt for _, fmt in MEASURED],
                "rows": [spans[kind][0] for kind, _ in MEASURED],
                "t_mins": [spans[kind][1] for kind, _ in MEASURED],
                "t_maxs": [spans[kind][2] for kind, _ in MEASURED],
                "ingested_at": now,
            },
        )
        sql.run(con, "whatif/replay_attempts", {"source_id": 1})
        sql.run(con, "whatif/replay_events", {"source_id": 2})
    finally:
        con.unregister("replay_proxy")
        con.unregister("replay_events")
    sql.run(
        con,
        "ingest/insert_manifest",
        {
            "source_id": 3,
            "name": man.name,
            "capacity": man.capacity_calls_per_s,
            "deadline": man.deadline_s,
            "window": man.delivery_window_s,
            "overload_phase": man.overload_phase,
            "t0": man.t0,
            "notes": man.notes,
            "manifest": json.dumps(man.model_dump(mode="json")),
        },
    )
    sql.run(
        con,
        "whatif/replay_phases",
        {
            "source_id": 3,
            "names": [ph.name for ph in man.phases],
            "starts": [ph.start for ph in man.phases],
            "ends": [ph.end for ph in man.phases],
        },
    )


class ArrowStream:
    """A polars frame as DuckDB scans it: through the Arrow C stream interface (the PyCapsule
    protocol), which polars and DuckDB both speak without pyarrow. `frame.to_arrow()` would
    import pyarrow (about 0.11 CPU s) in every replay worker for two tables of one replay."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self._frame = frame

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        """A new stream over the frame each time DuckDB scans it."""
        return self._frame.__arrow_c_stream__(requested_schema)


def run_timed(task: Task) -> tuple[Figures, float]:
    """`run_one` and the CPU seconds it took in its process."""
    c = time.process_time()
    fig = run_one(task)
    return fig, time.process_time() - c


def check_tasks(tasks: list[Task]) -> None:
    """Validate every task's overrides in the parent, so a bad one fails before any run."""
    from relplan.sim.run import prepare

    seen: set[tuple[Override | str, ...]] = set()
    for t in tasks:
        if t.sets not in seen:
            seen.add(t.sets)
            prepare(t.scenario, t.sets, t.seed)


def warm_up() -> None:
    """A worker's first job, while the parent still ingests or fits: what `run_one` would
    otherwise pay on its first run. Import its modules (not pyarrow: the replay's frames go
    to DuckDB as Arrow streams, `ArrowStream`), open this process's replay DuckDB (an empty
    replay workspace made and dropped), and build the pydantic models whose build waits for
    their first use (forward references): 0.05-0.08 CPU s of a worker's first replay
    (docs/benchmarks.md, "The cold report, sixth wave")."""
    import duckdb  # noqa: F401

    from relplan.sim.run import prepare  # noqa: F401
    from relplan.sim.simulator import Simulation  # noqa: F401
    from relplan.whatif.figures import figures  # noqa: F401
    from relplan.whatif.hooks import apply  # noqa: F401

    with replay_workspace():
        pass
    _complete_models()


def _complete_models() -> None:
    """Build every relplan pydantic model imported so far whose build was deferred."""
    from pydantic import BaseModel
    from pydantic.errors import PydanticUndefinedAnnotation

    todo: list[type[BaseModel]] = [BaseModel]
    while todo:
        cls = todo.pop()
        todo.extend(cls.__subclasses__())
        if cls.__module__.startswith("relplan.") and not cls.__pydantic_complete__:
            with suppress(PydanticUndefinedAnnotation):
                cls.model_rebuild()


@contextmanager
def replay_pool(jobs: int, *, warm: bool = True) -> Iterator[ProcessPoolExecutor | None]:
    """The `jobs - 1` worker processes of `run_tasks` (None for one job), started now, each
    importing what a replay needs (`warm_up`) while the caller prepares the tasks (with
    `warm=False` they wait for the caller to submit `warm_up`: a caller that may need no
    replay pays no imports). Pending tasks are cancelled when the block ends by an exception
    (Ctrl-C, a failed run), so the workers do not go on with them while the pool's exit waits.

    The workers are forked from the simulator's fork server (`spawn_context`): a fresh
    interpreter, because this process may run DuckDB's or polars' threads. A caller that has
    started no thread yet (the `relplan report` command, before it imports duckdb, polars or
    numpy) gets them forked from itself instead (`fork_ok`): no fresh interpreter and no fork
    server to start.

    Ctrl-C is the command's to handle: the workers ignore SIGINT (`_worker`), which a
    terminal sends to every process of the group. The command cancels what is pending and
    waits for the tasks running, each one replay or fit (a fraction of a second to seconds);
    a worker waiting for a task, interrupted, would print its traceback."""
    from relplan.sim.pool import spawn_context

    if jobs <= 1:
        yield None
        return
    forked = fork_ok()
    context = multiprocessing.get_context("fork") if forked else spawn_context()
    init = _forked_worker if forked else _worker
    with ProcessPoolExecutor(max_workers=jobs - 1, mp_context=context, initializer=init) as pool:
        # The first task starts the workers (a pool that forks starts them all at once,
        # before it starts its own threads).
        for _ in range(jobs - 1):
            pool.submit(warm_up if warm else _nothing)
        try:
            yield pool
        except BaseException:
            # Waits for the running task and the pool's manager thread: `wait=False` would
            # forget that thread, the `with`'s own shutdown would then not join it, and at
            # the interpreter's exit concurrent.futures could write to its closed pipe (a
            # traceback after `relplan: interrupted`, seen once in 20 runs of the Ctrl-C test).
            pool.shutdown(wait=True, cancel_futures=True)
            raise


def _nothing() -> None:
    """A first task that starts a worker without importing anything."""


def report_jobs() -> int:
    """Processes that replay for `relplan report` when it fits the incident itself: two at
    most (the command's own and one worker); more than there are cores would only take
    turns."""
    return max(1, min(2, cores()))


def report_workers() -> int:
    """Worker processes `relplan report` starts for its replay: two on a machine of two cores
    or more (one fits, then both replay, while the command's process runs the analyses and
    replays nothing: relplan/whatif/for_report.py), none on one core (the command fits and
    replays)."""
    return 2 if report_jobs() > 1 else 0


def _worker() -> None:
    """A replay worker ignores Ctrl-C (`replay_pool`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _forked_worker() -> None:
    """A worker forked from the command's process: one thread each for polars and DuckDB
    (relplan/sim/pool_env.py), as in a worker of the fork server, set before either is
    imported; Ctrl-C ignored (`_worker`)."""
    import relplan.sim.pool_env  # noqa: F401

    _worker()


def start_tasks(tasks: list[Task], pool: ProcessPoolExecutor | None) -> list[Future[Any]]:
    """Hand every task to the pool's workers (none without a pool), which start on them from
    the front of the list at once; `finish_tasks` runs the rest here. Check the tasks first
    (`check_tasks`)."""
    if pool is None or len(tasks) <= 1:
        return []
    return [pool.submit(run_timed, task) for task in tasks]


def finish_tasks(
    tasks: list[Task],
    futures: list[Future[Any]],
    progress: Callable[[int, int], None] | None = None,
) -> list[tuple[Figures, float]]:
    """Every task's figures and CPU seconds, in task order: this process takes the tasks
    from the back of the list (a task no worker has started yet is withdrawn from the pool
    and run here), so no process waits while a task is left."""
    done: list[tuple[Figures, float] | None] = [None] * len(tasks)

    def report() -> None:
        if progress is not None:
            progress(sum(d is not None for d in done), len(tasks))

    if futures:
        try:
            for i in reversed(range(len(tasks))):
                if futures[i].cancel():  # not started by a worker: run it here
                    done[i] = run_timed(tasks[i])
                    for j, f in enumerate(futures):
                        if done[j] is None and f.done() and not f.cancelled():
                            done[j] = f.result()
                    report()
            for i, f in enumerate(futures):
                if done[i] is None:
                    done[i] = f.result()
                    report()
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    else:
        for i, task in enumerate(tasks):
            done[i] = run_timed(task)
            report()
    out = [d for d in done if d is not None]
    assert len(out) == len(tasks), "every task ran"
    return out


def collect_tasks(
    futures: list[Future[Any]], progress: Callable[[int, int], None] | None = None
) -> list[tuple[Figures, float]]:
    """Every task's figures and CPU seconds, in task order, from the workers alone (the
    caller replays none), counting each run as it comes in."""
    for n, _ in enumerate(as_completed(futures), 1):
        if progress is not None:
            progress(n, len(futures))
    return [f.result() for f in futures]


def run_tasks(
    tasks: list[Task],
    jobs: int,
    progress: Callable[[int, int], None] | None = None,
    *,
    pool: ProcessPoolExecutor | None = None,
) -> tuple[list[Figures], float, float]:
    """Every task's figures, in task order, the wall seconds the runs took and the CPU
    seconds they used (summed over the runs, in whichever process each ran).

    `jobs` processes replay: this one and `jobs - 1` workers (`pool`, from `replay_pool`, or
    started here). The workers take the tasks from the front of the list, this process from
    the back (`start_tasks`, `finish_tasks`), so no process waits while a task is left and
    none pays a worker's start-up for nothing."""
    check_tasks(tasks)
    if pool is None and jobs > 1 and len(tasks) > 1:
        with replay_pool(min(jobs, len(tasks))) as own:
            return _run_checked(tasks, own, progress)
    return _run_checked(tasks, pool, progress)


def _run_checked(
    tasks: list[Task],
    pool: ProcessPoolExecutor | None,
    progress: Callable[[int, int], None] | None,
) -> tuple[list[Figures], float, float]:
    t = time.perf_counter()
    out = finish_tasks(tasks, start_tasks(tasks, pool), progress)
    return [fig for fig, _ in out], time.perf_counter() - t, sum(used for _, used in out)


def spread(values: list[float | None]) -> Spread:
    known = [v for v in values if v is not None]
    if not known:
        return Spread(median=None, low=None, high=None)
    return Spread(median=statistics.median(known), low=min(known), high=max(known))


def median_run(runs: list[Figures]) -> Figures:
    """The run whose overload+later delivered share is the median (the lower one of two)."""

    def key(f: Figures) -> float:
        w = f.window("overload+later")
        return -1.0 if w is None or w.delivered_share is None else w.delivered_share

    ordered = sorted(runs, key=key)
    return ordered[(len(ordered) - 1) // 2]


def outcome(control: Control, seeds: list[int], runs: list[Figures]) -> ControlOutcome:
    """One control's figures over its seeds."""
    if control.unavailable:
        return ControlOutcome(
            name=control.name,
            label=control.label,
            sets=control.sets,
            hooks=list(control.hooks),
            available=False,
            reason=control.unavailable,
        )
    later = [r.window("overload+later") for r in runs]
    verdicts = [r.verdict for r in runs]
    top = Counter(verdicts).most_common()
    best = max(n for _, n in top)
    verdict = next(v for v in verdicts if dict(top)[v] == best)
    return ControlOutcome(
        name=control.name,
        label=control.label,
        sets=control.sets,
        hooks=list(control.hooks),
        seeds=seeds,
        delivered_share=spread([None if w is None else w.delivered_share for w in later]),
        on_time_share=spread([None if w is None else w.on_time_share for w in later]),
        recovery_s=spread([r.recovery_s for r in runs]),
        drained_s=spread([r.drained_s for r in runs]),
        executions_per_call=spread([r.executions_per_call for r in runs]),
        verdicts=verdicts,
        verdict=verdict,
    )
