"""`relplan whatif` end to end: fit -> as-observed replay and fit check -> controls -> settings.

`whatif(con, ...)` is the library call the CLI and the report make; it returns a `WhatIf`
(relplan/whatif/model.py). The fitted scenario and its calls are written into `work_dir`
(a temporary folder unless the caller keeps one).
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from relplan import sql
from relplan.analyses import AnalyzeOptions
from relplan.errors import UsageError
from relplan.sim.scenario import load_scenario_data
from relplan.whatif.check import check_fit
from relplan.whatif.controls import (
    AS_OBSERVED,
    Control,
    builtin_controls,
    check_names,
    file_control,
)
from relplan.whatif.figures import figures
from relplan.whatif.fit import ClientFlags, Fitted, fit_incident
from relplan.whatif.model import ControlOutcome, Figures, WhatIf
from relplan.whatif.replay import (
    Task,
    check_tasks,
    finish_tasks,
    outcome,
    replay_pool,
    start_tasks,
    warm_up,
)
from relplan.whatif.settings import Sizing


@dataclass(frozen=True)
class WhatIfOptions:
    seeds: int = 3
    jobs: int = 2
    only: list[str] = field(default_factory=list)  # control names; empty: all
    scenario_files: list[str] = field(default_factory=list)
    flags: ClientFlags = field(default_factory=ClientFlags)
    profile: str | None = None
    capacity: float | None = None
    best: int = 3  # settings are printed for this many of the best controls


def select_controls(fitted: Fitted, opts: WhatIfOptions) -> list[Control]:
    controls = builtin_controls(fitted.data)
    for ref in opts.scenario_files:
        data, _ = load_scenario_data(ref)
        controls.append(file_control(ref, data))
    if opts.only:
        known = {c.name for c in controls}
        bad = [n for n in opts.only if n not in known]
        if bad:  # declared (check_names passed) but not sized for this fit
            raise UsageError(
                "--control",
                f"{', '.join(bad)} does not apply to this incident's fit (longer-timeout needs a"
                f" client deadline); expected one of {', '.join(sorted(known))}",
            )
        controls = [c for c in controls if c.name in opts.only]
    return controls


def _rank(outcomes: list[ControlOutcome]) -> list[ControlOutcome]:
    def key(o: ControlOutcome) -> tuple[bool, float, float]:
        d = o.delivered_share.median if o.delivered_share is not None else None
        t = o.on_time_share.median if o.on_time_share is not None else None
        return (
            o.verdict == "recovered",
            d if d is not None else -1.0,
            t if t is not None else -1.0,
        )

    return sorted((o for o in outcomes if o.available), key=key, reverse=True)


def _sizing(con: duckdb.DuckDBPyConnection, fitted: Fitted) -> Sizing:
    data = fitted.data
    named = {p.name for p in fitted.ctx.phases}
    # the incident's own phases: not the fit's leading "before" (calls planned before them)
    phases = [p for p in data["workload"]["phases"] if p["name"] in named] or data["workload"][
        "phases"
    ]
    peak = sql.one(con, "whatif/peak_running")
    d = data["client"].get("deadline_s")
    return Sizing(
        capacity=float(data["capacity_calls_per_s"]),
        deadline_s=None if d is None or not math.isfinite(d) else float(d),
        max_retries=int(data["client"].get("max_retries", 0)),
        base_rate_per_s=float(phases[0]["rate_per_s"]) if phases else None,
        peak_running=None
        if peak is None or peak["peak_running"] is None
        else int(peak["peak_running"]),
    )


@dataclass
class Replayed:
    """The fit, the incident's figures and every replay's figures (one per seed), by control
    name (`as-observed` included): what `whatif` ranks, and what a comparison with real
    control runs reads window by window (tests/test_whatif_real.py)."""

    fitted: Fitted
    incident: Figures
    seeds: list[int]
    by_control: dict[str, list[Figures]]
    cpu_s: float


@dataclass
class Started:
    """A replay under way (`start_replay`): the fit, the incident's figures, the tasks and
    the workers' futures; `finish` runs what no worker has started here and collects."""

    fitted: Fitted
    incident: Figures
    seeds: list[int]
    runnable: list[Control]
    tasks: list[Task]
    futures: list[Future[Any]]

    def finish(self, progress: Callable[[int, int], None] | None = None) -> Replayed:
        out = finish_tasks(self.tasks, self.futures, progress)
        runs = [fig for fig, _ in out]
        n = len(self.seeds)
        by_control = {c.name: runs[i * n : (i + 1) * n] for i, c in enumerate(self.runnable)}
        return Replayed(
            self.fitted, self.incident, self.seeds, by_control, sum(used for _, used in out)
        )


def start_replay(
    con: duckdb.DuckDBPyConnection,
    controls: list[Control],
    o: WhatIfOptions,
    *,
    work_dir: Path,
    analyze_opts: AnalyzeOptions | None = None,
    fitted: Fitted | None = None,
    pool: ProcessPoolExecutor | None = None,
    incident: Figures | None = None,
) -> Started:
    """Fit the incident into `work_dir` (unless `fitted` was fitted there already), measure
    it (`incident`: already measured with `analyze_opts`, which stands when the fit changes
    none of them), and hand its replays, as observed and under each available control over
    `o.seeds` seeds, to the pool's workers, which start on them at once."""
    scenario = work_dir / "scenario.toml"
    if fitted is None:
        fitted = fit_incident(
            con, scenario, flags=o.flags, profile=o.profile, capacity=o.capacity, opts=analyze_opts
        )
    aopts = analyze_opts or AnalyzeOptions()
    if aopts.deadline is None and fitted.ctx.deadline_s is None and o.flags.deadline_s:
        # D given only as the client's flag: the incident is measured against it too
        aopts = aopts.model_copy(update={"deadline": o.flags.deadline_s})
    if aopts.capacity is None and fitted.ctx.capacity is None:
        # the data gives no Ĉ: the incident is measured against the fitted engine's
        aopts = aopts.model_copy(update={"capacity": float(fitted.data["capacity_calls_per_s"])})
    if incident is None or aopts != (analyze_opts or AnalyzeOptions()):
        incident = figures(con, aopts)
    seeds = list(range(1, o.seeds + 1))
    runnable = [Control(AS_OBSERVED, "as observed")] + [c for c in controls if not c.unavailable]
    tasks = [Task(str(scenario), c.applied, s, c.name, c.hooks) for c in runnable for s in seeds]
    check_tasks(tasks)
    return Started(fitted, incident, seeds, runnable, tasks, start_tasks(tasks, pool))


def replay(
    con: duckdb.DuckDBPyConnection,
    controls: list[Control],
    o: WhatIfOptions,
    *,
    work_dir: Path,
    progress: Callable[[int, int], None] | None = None,
    analyze_opts: AnalyzeOptions | None = None,
    fitted: Fitted | None = None,
    pool: ProcessPoolExecutor | None = None,
    incident: Figures | None = None,
) -> Replayed:
    """`start_replay`, then `finish`: the fit, the incident's figures and every replay's.
    Without a pool, `o.jobs` processes replay (workers started here)."""
    if pool is None and o.jobs > 1:
        with replay_pool(o.jobs) as own:
            return replay(
                con,
                controls,
                o,
                work_dir=work_dir,
                progress=progress,
                analyze_opts=analyze_opts,
                fitted=fitted,
                pool=own,
                incident=incident,
            )
    started = start_replay(
        con,
        controls,
        o,
        work_dir=work_dir,
        analyze_opts=analyze_opts,
        fitted=fitted,
        pool=pool,
        incident=incident,
    )
    return started.finish(progress)


class Pending:
    """A `whatif` under way (`start_whatif`): `result()` finishes the replays (this process
    runs what no worker has started), ranks and returns the `WhatIf`; the workspace must still
    be open then. The fitted scenario's folder and a pool started here live until then."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        o: WhatIfOptions,
        started: Started,
        controls: list[Control],
        stack: ExitStack,
        t: float,
    ) -> None:
        self._con, self._o, self._started, self._controls = con, o, started, controls
        self._stack, self._t = stack, t

    def result(self, progress: Callable[[int, int], None] | None = None) -> WhatIf:
        with self._stack:
            done = self._started.finish(progress)
        return ranked_whatif(self._con, self._o, done, self._controls, self._t)


def start_whatif(
    con: duckdb.DuckDBPyConnection,
    opts: WhatIfOptions | None = None,
    *,
    work_dir: Path | None = None,
    analyze_opts: AnalyzeOptions | None = None,
    incident: Figures | None = None,
    pool: ProcessPoolExecutor | None = None,
) -> Pending:
    """Fit the workspace's incident and hand its replays to the workers (`pool`, else
    `opts.jobs - 1` started here), which go on with them while the caller does other work;
    `Pending.result()` finishes. `incident`: its figures, when the caller measured them
    already with `analyze_opts`."""
    o = opts or WhatIfOptions()
    if o.seeds < 1:
        raise UsageError("--seeds", "give at least 1 seed")
    check_names(o.only, o.scenario_files)  # before the fit, which takes a while
    t = time.perf_counter()
    with ExitStack() as stack:
        folder = work_dir or Path(
            stack.enter_context(tempfile.TemporaryDirectory(prefix="relplan-whatif-"))
        )
        # the workers start (and import) while this process fits
        if pool is None:
            pool = stack.enter_context(replay_pool(o.jobs))
        else:
            for _ in range(o.jobs - 1):
                pool.submit(warm_up)
        fitted = fit_incident(
            con,
            folder / "scenario.toml",
            flags=o.flags,
            profile=o.profile,
            capacity=o.capacity,
            opts=analyze_opts,
        )
        controls = select_controls(fitted, o)
        started = start_replay(
            con,
            controls,
            o,
            work_dir=folder,
            analyze_opts=analyze_opts,
            fitted=fitted,
            pool=pool,
            incident=incident,
        )
        return Pending(con, o, started, controls, stack.pop_all(), t)
    raise AssertionError("unreachable")  # pragma: no cover


def whatif(
    con: duckdb.DuckDBPyConnection,
    opts: WhatIfOptions | None = None,
    *,
    work_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    analyze_opts: AnalyzeOptions | None = None,
    incident: Figures | None = None,
) -> WhatIf:
    """Fit the workspace's incident, replay it as observed and under each control, rank.
    `incident`: its figures, when the caller measured them already with `analyze_opts`."""
    pending = start_whatif(
        con, opts, work_dir=work_dir, analyze_opts=analyze_opts, incident=incident
    )
    return pending.result(progress)


def ranked_whatif(
    con: duckdb.DuckDBPyConnection,
    o: WhatIfOptions,
    done: Replayed,
    controls: list[Control],
    t: float,
) -> WhatIf:
    """The `WhatIf` of a finished replay: the fit check, each control's outcome, the ranking
    and the settings of the best (`t`: when the what-if started, for its wall time)."""
    fitted, incident, seeds, by_control, cpu = (
        done.fitted,
        done.incident,
        done.seeds,
        done.by_control,
        done.cpu_s,
    )
    check = check_fit(incident, by_control[AS_OBSERVED], seeds)
    outcomes = [
        outcome(c, seeds if not c.unavailable else [], by_control.get(c.name, [])) for c in controls
    ]
    ranked = _rank(outcomes) if check.trusted else []
    by_name = {c.name: c for c in controls}
    sizing = _sizing(con, fitted)
    settings = [b for r in ranked[: o.best] for b in by_name[r.name].blocks(sizing)]
    ctx = fitted.ctx
    return WhatIf(
        name=str(fitted.data["name"]).removesuffix("-whatif"),
        capacity_calls_per_s=float(fitted.data["capacity_calls_per_s"]),
        deadline_s=ctx.deadline_s,
        fit=fitted.provenance,
        check=check,
        controls=outcomes,
        ranked=[r.name for r in ranked],
        settings=settings,
        seeds=o.seeds,
        wall_s=round(time.perf_counter() - t, 2),
        replay_cpu_s=round(cpu, 2),
    )
