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
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

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
from relplan.whatif.replay import Task, outcome, replay_pool, run_tasks
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
    """Fit the incident into `work_dir` (unless `fitted` was fitted there already), measure
    it (`incident`: already measured with `analyze_opts`, which stands when the fit changes
    none of them), replay it as observed and under each available control over `o.seeds`
    seeds."""
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
    runs, _, cpu = run_tasks(tasks, o.jobs, progress, pool=pool)
    by_control = {
        c.name: runs[i * len(seeds) : (i + 1) * len(seeds)] for i, c in enumerate(runnable)
    }
    return Replayed(fitted, incident, seeds, by_control, cpu)


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
    o = opts or WhatIfOptions()
    if o.seeds < 1:
        raise UsageError("--seeds", "give at least 1 seed")
    check_names(o.only, o.scenario_files)  # before the fit, which takes a while
    t = time.perf_counter()
    # the workers start (and import) while this process fits
    with (
        tempfile.TemporaryDirectory(prefix="relplan-whatif-") as tmp,
        replay_pool(o.jobs) as pool,
    ):
        folder = work_dir or Path(tmp)
        fitted = fit_incident(
            con,
            folder / "scenario.toml",
            flags=o.flags,
            profile=o.profile,
            capacity=o.capacity,
            opts=analyze_opts,
        )
        controls = select_controls(fitted, o)
        done = replay(
            con,
            controls,
            o,
            work_dir=folder,
            progress=progress,
            analyze_opts=analyze_opts,
            fitted=fitted,
            pool=pool,
            incident=incident,
        )
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
