"""The what-if's figures (relplan/whatif/figures.py) run only the queries they read, and one
query where the analyses run two (a replay's figures are computed once per control and seed).
They must stay what `relplan analyze --only amplification,delivery` and the drain say of the
same workspace: `_from_analyze` below is the way they were computed before, from the
analyses' whole results, and the two are compared on the bundled incident, on the lab's
recorded incidents (tests/data/lab/README.md: the client's attempts and run.json, the
operator's vLLM log, nginx log and Prometheus export, the vLLM log alone) and on replays of
short `pulse-retry` runs, with and without a deadline given.

A replay's workspace is a fresh in-memory database attached to one DuckDB per process
(relplan/whatif/replay.py `replay_workspace`): the second replay in a process must find it
empty and measure the same as in a DuckDB of its own. A replay runs with Python's cyclic
garbage collector paused (`no_collection_pauses`): its simulation must still be freed when it
returns, and the collector left as it was.
"""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import duckdb
import pytest

from relplan import sql
from relplan.analyses import AnalyzeOptions, analyze
from relplan.analyses import drain as drain_analysis
from relplan.analyses.context import Window
from relplan.sim.execution import Execution
from relplan.sim.run import prepare
from relplan.sim.simulator import Simulation
from relplan.whatif.figures import LATER, figures
from relplan.whatif.hooks import apply
from relplan.whatif.model import Figures, WindowFigures
from relplan.whatif.replay import Task, load_measured, replay_workspace, run_one
from relplan.workspace import connect
from tests.helpers.lab import CALL_FLAGS, LAB, lab_ingest

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data" / "pulse-retry-cancel"
OPTIONS = [AnalyzeOptions(), AnalyzeOptions(deadline=5.0)]
# The lab's incidents and controls (tests/data/lab/<name>/client and operator), ingested as
# the user would: the client's files, the operator's three (with the drill's call key), and
# the vLLM log alone (no proxy log: no delivery, no verdict).
LAB_RUNS = ["retries-no-cancel", "retries-cancel", "no-retries", "vllm-queue-cap"]


def _share(part: int, whole: int) -> float | None:
    return None if whole == 0 else part / whole


def _from_analyze(con: duckdb.DuckDBPyConnection, opts: AnalyzeOptions) -> Figures:
    """The figures as relplan/whatif/figures.py computed them before it ran its own queries:
    from `analyze(--only amplification,delivery)`'s results, a second delivery query over the
    windows, and the drain analysis."""
    res = analyze(con, opts.model_copy(update={"only": ["amplification", "delivery"]}))
    ctx = res.context
    start = next(
        (ctx.t0 + p.start_s for p in ctx.phases if p.name == ctx.overload_phase),
        ctx.window_start,
    )
    windows = [w for w in ctx.phase_windows() if w.name != "run"]
    windows.append(Window(LATER, start, ctx.window_end, True))
    params = {
        "w_names": [w.name for w in windows],
        "w_starts": [w.a for w in windows],
        "w_ends": [w.b for w in windows],
        "w_closed": [w.closed for w in windows],
        "delivery_window": float("inf") if ctx.delivery_window_s is None else ctx.delivery_window_s,
        "deadline_s": ctx.deadline_s,
        "t_end": ctx.t_end,
    }
    rows = {str(r["win_name"]): r for r in sql.rows(con, "analyses/delivery_by_window", params)}
    out = []
    for w in windows:
        r = rows[w.name]
        calls = int(r["calls"])
        out.append(
            WindowFigures(
                window=w.name,
                calls=calls,
                delivered_share=_share(int(r["delivered"]), calls),
                on_time_share=None if ctx.deadline_s is None else _share(int(r["on_time"]), calls),
            )
        )
    ex = sql.one(
        con, "whatif/executions_per_call", {"t_from": start, "t_to": ctx.window_end + 1e-9}
    )
    epc = int(ex["executions"]) / int(ex["calls"]) if ex is not None and ex["calls"] else None
    rec = res.delivery.recovery if res.delivery is not None else None
    accepted = completed = None
    if res.amplification is not None and rec is not None:
        names = {p.name for p in ctx.phases if p.start_s >= rec.overload_end_s - 1e-3}
        for a in res.amplification.windows:
            if a.window in names:
                accepted, completed = a.accepted_x_capacity, a.completed_x_capacity
                break
    return Figures(
        windows=out,
        executions_per_call=epc,
        accepted_x_capacity=accepted,
        completed_x_capacity=completed,
        recovery_s=None if rec is None else rec.recovery_s,
        drained_s=drain_analysis.measure(con, ctx).drained_after_s,
        verdict="insufficient data" if rec is None else rec.verdict,
    )


def _same(con: duckdb.DuckDBPyConnection) -> list[Figures]:
    """The figures with each of OPTIONS, asserted equal to the analyses' own."""
    got = []
    for opts in OPTIONS:
        mine = figures(con, opts)
        assert mine.model_dump() == _from_analyze(con, opts).model_dump(), opts
        got.append(mine)
    return got


@pytest.mark.slow  # an ingest of the sample (once per run) and the analyses twice
def test_the_bundled_incident_has_the_analyses_figures(tmp_path: Path) -> None:
    db = lab_ingest(tmp_path / "sample.duckdb", [SAMPLE])
    with connect(db, read_only=True) as con:
        got = _same(con)
    # what the report's what-if section compares: a verdict, the rates after the overload
    assert got[0].verdict == "metastable"
    assert got[0].accepted_x_capacity is not None
    assert got[0].drained_s is None or got[0].drained_s > 0


@pytest.mark.slow  # three ingests per recorded incident (once per run: templates)
@pytest.mark.parametrize("name", LAB_RUNS)
def test_the_lab_incidents_have_the_analyses_figures(tmp_path: Path, name: str) -> None:
    client, operator = LAB / name / "client", LAB / name / "operator"
    inputs: list[tuple[list[Path], list[str]]] = [
        ([client], []),
        ([operator / f for f in ("vllm.log.gz", "access.json.gz")], CALL_FLAGS),
        ([operator / "vllm.log.gz"], []),
    ]
    verdicts = []
    for i, (paths, flags) in enumerate(inputs):
        db = lab_ingest(tmp_path / f"{i}.duckdb", paths, flags)
        with connect(db, read_only=True) as con:
            verdicts.append([f.verdict for f in _same(con)])
    # the vLLM log alone has no proxy log: no delivery, so no verdict
    assert verdicts[2] == ["insufficient data"] * len(OPTIONS)
    assert any(v != "insufficient data" for v in verdicts[0] + verdicts[1])


SHORT = [
    "workload.phases.0.seconds=20",
    "workload.phases.1.seconds=20",
    "workload.phases.2.seconds=30",
    "client.deadline_s=5",
]


def _replay(sets: list[str], hooks: tuple[str, ...] = ()) -> tuple[Simulation, dict[str, Any]]:
    p = prepare("pulse-retry", [*SHORT, *sets], 1)
    sim = Simulation(p.scenario, p.profile, p.capacity, p.scenario.seed, record_steps=False)
    apply(sim, hooks)
    sim.run()
    return sim, {"scenario": p.scenario.name, "sets": p.sets}


@pytest.mark.slow  # four short simulations
def test_replays_measure_the_same_in_a_shared_duckdb_as_in_their_own() -> None:
    runs = [
        _replay([]),
        _replay(['proxy.cancellation="immediate"', "engine.max_num_queued_reqs=10"]),
        _replay(["proxy.coalesce=true"], ("retry-before-first-token",)),
        _replay(["client.max_retries=0"]),
    ]
    tables = ("sources", "attempts", "events", "manifests", "phases")
    shared = []
    for sim, meta in runs:
        with replay_workspace() as con:
            # fresh: nothing of the previous replay is left
            assert all(
                con.execute(f"select count(*) from {t}").fetchall() == [(0,)] for t in tables
            )
            load_measured(con, sim, meta)
            shared.append(_same(con))
    for (sim, meta), seen in zip(runs, shared, strict=True):
        own = duckdb.connect()
        sql.run(own, "schema")
        load_measured(own, sim, meta)
        assert [f.model_dump() for f in seen] == [figures(own, o).model_dump() for o in OPTIONS]
        own.close()
    assert len({f[0].model_dump_json() for f in shared}) == len(runs)  # the runs differ


def _executions() -> int:
    return sum(isinstance(o, Execution) for o in gc.get_objects())


@pytest.mark.slow  # three short simulations
def test_a_replay_leaves_no_simulation_behind_and_the_collector_as_it_was() -> None:
    task = Task("pulse-retry", tuple(SHORT), 1, "as-observed")
    first = run_one(task)  # imports, the process's DuckDB
    before = _executions()
    assert gc.isenabled()
    assert run_one(task) == first
    assert gc.isenabled()
    assert _executions() == before  # the simulation's cycles were collected at its end
    gc.disable()
    try:
        assert run_one(task) == first
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()
