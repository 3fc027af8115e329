"""A replay's figures come from the simulator's frames loaded straight into an in-memory
workspace (relplan/whatif/replay.py `load_measured`), not from files written and ingested.
The two must store the same rows: every table of the workspace is compared with an ingest
(`relplan ingest`'s readers) of the files the simulator's writer functions make of the same
run, and the figures of both are equal.

The runs are short variants of the built-in `pulse-retry` scenario (the shape of
tests/test_whatif_hooks.py) under settings that exercise what the controls change: retries,
cancellation, coalescing (attached attempts), a retry budget (shed attempts), a proxy cap and
an engine queue cap (rejected executions), and the retry-before-first-token hook. The files
come from a run that keeps its step records, the loaded rows from one that does not, as the
replay runs (`record_steps=False`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pytest

from relplan import sql
from relplan.ingest.base import IngestOptions
from relplan.ingest.driver import ingest_files
from relplan.sim.run import prepare
from relplan.sim.simulator import Simulation
from relplan.sim.writer import engine_frame, manifest, proxy_frame
from relplan.whatif.figures import figures
from relplan.whatif.hooks import apply
from relplan.whatif.replay import Task, load_measured, run_tasks

SHORT = [
    "workload.phases.0.seconds=20",
    "workload.phases.1.seconds=20",
    "workload.phases.2.seconds=30",
    "client.deadline_s=5",
]
CASES: list[tuple[str, list[str], tuple[str, ...]]] = [
    ("cancel-immediate", ['proxy.cancellation="immediate"'], ()),
    ("coalesce-deferred", ["proxy.coalesce=true", 'proxy.cancellation="deferred(3)"'], ()),
    ("retry-budget", ["proxy.retry_budget.ratio=0.1", "proxy.retry_budget.window_s=60"], ()),
    (
        "proxy-cap",
        ["proxy.max_outstanding=8", 'proxy.queue_order="newest_first"'],
        (),
    ),
    ("engine-cap", ["engine.max_num_queued_reqs=10"], ()),
    ("hook", ['proxy.cancellation="immediate"'], ("retry-before-first-token",)),
]
pytestmark = pytest.mark.slow  # a simulation and an ingest per case
# What differs by construction: the ingest's sources name their files, hash their bytes and
# stamp the time of the ingest.
NOT_COMPARED = {"sources": ("path", "sha256", "ingested_at")}


def _sim(
    sets: list[str], hooks: tuple[str, ...], *, record_steps: bool = True
) -> tuple[Simulation, dict[str, Any]]:
    p = prepare("pulse-retry", [*SHORT, *sets], 1)
    sim = Simulation(p.scenario, p.profile, p.capacity, p.scenario.seed, record_steps=record_steps)
    apply(sim, hooks)
    sim.run()
    return sim, {"scenario": p.scenario.name, "sets": [*SHORT, *sets]}


def _workspace() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    sql.run(con, "schema")
    sql.run(con, "whatif/no_progress_bar")
    return con


def _ingested(sim: Simulation, meta: dict[str, Any], folder: Path) -> duckdb.DuckDBPyConnection:
    """The files the replay measured before load_measured: proxy.parquet, the engine trace's
    `event` rows as engine.parquet and run.json, ingested with `relplan ingest`'s readers."""
    proxy, engine, run = folder / "proxy.parquet", folder / "engine.parquet", folder / "run.json"
    proxy_frame(sim).write_parquet(proxy)
    engine_frame(sim).filter(pl.col("type") == "event").write_parquet(engine)
    run.write_text(json.dumps(manifest(sim, meta).model_dump(mode="json")), encoding="utf-8")
    con = _workspace()
    ingest_files(con, [proxy, engine, run], IngestOptions())
    return con


def _tables(con: duckdb.DuckDBPyConnection) -> dict[str, list[tuple[Any, ...]]]:
    names = [r[0] for r in con.sql("select table_name from duckdb_tables() order by 1").fetchall()]
    out: dict[str, list[tuple[Any, ...]]] = {}
    for name in names:
        skip = NOT_COMPARED.get(name, ())
        cols = [c for c in con.sql(f"select * from {name} limit 0").columns if c not in skip]
        rows = con.sql(f"select {', '.join(cols)} from {name}").fetchall()
        out[name] = sorted(rows, key=repr)
    return out


@pytest.mark.parametrize(("sets", "hooks"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_loaded_replay_stores_what_an_ingest_of_its_files_stores(
    sets: list[str], hooks: tuple[str, ...], tmp_path: Path
) -> None:
    sim, meta = _sim(sets, hooks)
    ingested = _ingested(sim, meta, tmp_path)
    # the replay's own run keeps no step records (record_steps=False): same events, same log
    lean, _ = _sim(sets, hooks, record_steps=False)
    assert not lean.engine.step_t_issue
    loaded = _workspace()
    load_measured(loaded, lean, meta)
    want, got = _tables(ingested), _tables(loaded)
    assert want.keys() == got.keys()
    assert want["attempts"]
    assert want["events"]
    assert want["phases"]
    for name in want:
        assert got[name] == want[name], name
    assert figures(loaded) == figures(ingested)


def test_the_cases_exercise_what_the_controls_change(tmp_path: Path) -> None:
    """The cases above are worth their time only if their runs differ where the controls
    act: attached, shed and rejected records and cancellations occur among them."""
    seen: set[str] = set()
    for _, sets, hooks in CASES:
        sim, meta = _sim(sets, hooks)
        con = _workspace()
        load_measured(con, sim, meta)
        row = con.execute(
            "select bool_or(attached), bool_or(outcome = 'shed'), bool_or(t_cancel is not null)"
            " from attempts"
        ).fetchone()
        assert row is not None
        seen |= {n for n, v in zip(("attached", "shed", "cancel"), row, strict=True) if v}
        if con.execute("select count(*) from events where event = 'rejected'").fetchone() != (0,):
            seen.add("rejected")
    assert seen == {"attached", "shed", "cancel", "rejected"}


def test_two_processes_give_the_figures_of_one_in_task_order() -> None:
    """`run_tasks` with a worker (which takes tasks from the front while this process takes
    them from the back) returns what one process returns, in task order."""
    tasks = [
        Task("pulse-retry", (*SHORT, *sets), 1, name, hooks) for name, sets, hooks in CASES[:4]
    ]
    alone, _, _ = run_tasks(tasks, 1)
    shared, _, cpu = run_tasks(tasks, 2)
    assert shared == alone
    assert len({f.model_dump_json() for f in alone}) > 1  # the cases differ
    assert cpu > 0


def _fresh(code: str) -> str:
    """`code` run by a fresh interpreter (this one has imported duckdb): its stdout."""
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_worker_forked_from_the_command_gives_the_figures_of_one_process() -> None:
    """`relplan report` forks its replay worker from its own process before importing duckdb
    (`replay_pool`, `fork_ok`); that worker's figures are one process's, in task order."""
    out = _fresh(
        f"""
import json
from relplan.forking import fork_ok
from relplan.whatif.replay import Task, replay_pool, run_tasks
assert fork_ok()
tasks = [Task("pulse-retry", (*{SHORT!r}, *sets), 1, name, hooks) for name, sets, hooks in {CASES[:4]!r}]
with replay_pool(2, warm=False) as pool:
    assert pool is not None and pool._mp_context.get_start_method() == "fork"
    shared, _, _ = run_tasks(tasks, 2, pool=pool)
alone, _, _ = run_tasks(tasks, 1)
print(json.dumps([shared == alone, len({{f.model_dump_json() for f in alone}})]))
"""
    )
    assert json.loads(out) == [True, 4]


def test_the_workers_come_from_the_fork_server_once_duckdb_or_a_thread_runs() -> None:
    out = _fresh(
        """
import threading
from relplan.forking import fork_ok
first = fork_ok()
stop = threading.Event()
t = threading.Thread(target=stop.wait)
t.start()
with_thread = fork_ok()
stop.set()
t.join()
# join() returns when the thread's Python state is let go; the kernel, whose count fork_ok()
# reads, can hold the thread a moment longer (on a loaded machine this read 2 threads): wait
# for its exit, which has no event to wait on, by its count, for at most a minute
import os, time
deadline = time.monotonic() + 60
while len(os.listdir("/proc/self/task")) > 1 and time.monotonic() < deadline:
    time.sleep(0.001)
after_join = fork_ok()
import duckdb
print(first, with_thread, after_join, fork_ok())
"""
    )
    assert out.split() == ["True", "False", "True", "False"]


def test_an_interrupted_pool_leaves_no_manager_thread_for_the_interpreter_exit() -> None:
    """Ctrl-C inside `replay_pool`: the pool is shut down and its manager thread joined before
    the exception goes on, so nothing of concurrent.futures runs at the interpreter's exit (it
    once printed a traceback there after `relplan: interrupted; nothing stored`)."""
    out = _fresh(
        """
import threading
from concurrent.futures.process import _ExecutorManagerThread
from relplan.whatif.replay import replay_pool
try:
    with replay_pool(2, warm=False) as pool:
        assert pool is not None
        pool.submit(sum, [1, 2]).result()
        raise KeyboardInterrupt
except KeyboardInterrupt:
    pass
print(sum(isinstance(t, _ExecutorManagerThread) for t in threading.enumerate()))
"""
    )
    assert out.split() == ["0"]


def test_a_replay_imports_no_pyarrow_numpy_or_other_analyses() -> None:
    """A replay's frames go to DuckDB as Arrow streams (`ArrowStream`), so a replay worker
    imports no pyarrow (about 0.11 CPU s in each of the report's two workers); the rows they
    store are those of an ingest (the tests above). Its figures read a few analyses' parts,
    which import neither the registry of every analysis nor numpy (relplan/analyses/
    __init__.py loads the registry on first use): `warm_up` 0.40 -> 0.26 CPU s."""
    out = _fresh(
        f"""
import sys
from relplan.whatif.replay import Task, run_one, warm_up
warm_up()
fig = run_one(Task("pulse-retry", {SHORT!r}, 1, "as observed"))
loaded = ("pyarrow", "numpy", "relplan.analyses.registry", "relplan.alerts.health")
print(fig.verdict is not None, [m for m in loaded if m in sys.modules])
"""
    )
    assert out.strip().split(maxsplit=1) == ["True", "[]"]
