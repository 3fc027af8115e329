"""`relplan drill --sweep`: the smallest pulse that leaves the service down (docs/drill.md,
Sweep).

For each pulse value (its rate × Ĉ with `vary="size"`, its length in seconds with
`vary="seconds"`) and each seed, one full drill runs into `OUT/runs/<value>-seed<seed>/`
with the chosen retry policy. The service is *down* after a run when relplan's delivery
analysis gives the hold phase (the phase called `hold`, else the phase after the overload)
an on-time share below `threshold`. Per seed, the trigger is the smallest value that left it
down; the sweep reports the median and the range of the triggers over the seeds (the margin
a team actually has) and writes every run's figures to `OUT/sweep.json`.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from relplan.drill.plan import PhaseSpec
from relplan.drill.run import DrillOptions, execute, prepare
from relplan.errors import UsageError


@dataclass
class SweepRun:
    value: float
    seed: int
    calls: int
    hold_on_time_share: float | None
    down: bool
    verdict: str | None
    out: str


@dataclass
class SweepResult:
    vary: str
    threshold: float
    capacity: float
    runs: list[SweepRun] = field(default_factory=list)
    trigger_by_seed: dict[int, float | None] = field(default_factory=dict)
    trigger_median: float | None = None
    trigger_min: float | None = None
    trigger_max: float | None = None


def _hold_phase(phases: list[PhaseSpec]) -> str:
    names = [p.name for p in phases]
    if "hold" in names:
        return "hold"
    i = names.index("pulse")
    if i + 1 >= len(names):
        raise UsageError("--phases", "a sweep needs a phase after the pulse (a hold)")
    return names[i + 1]


def _with_pulse(phases: list[PhaseSpec], vary: str, value: float) -> list[PhaseSpec]:
    if not any(p.name == "pulse" for p in phases):
        raise UsageError("--phases", "a sweep varies the phase called pulse; there is none")
    out = []
    for p in phases:
        if p.name == "pulse":
            p = (
                dataclasses.replace(p, rate_x=value, rate_per_s=None)
                if vary == "size"
                else dataclasses.replace(p, seconds=value)
            )
        out.append(p)
    return out


def sweep(
    opts: DrillOptions,
    values: list[float],
    seeds: list[int],
    *,
    vary: str = "size",
    threshold: float = 0.5,
    on_run: Callable[[SweepRun], None] | None = None,
    on_prepared: Callable[[Any], None] | None = None,
) -> SweepResult:
    if vary not in ("size", "seconds"):
        raise UsageError("--sweep-vary", "expected size or seconds")
    if not values or not seeds:
        raise UsageError("--sweep", "give pulse values and at least one seed")
    hold = _hold_phase(opts.phases)
    base_out = opts.out
    if base_out.exists() and any(base_out.iterdir()):
        raise UsageError("--out", f"{base_out} is not empty; a sweep needs a new folder")
    capacity = opts.capacity
    result: SweepResult | None = None
    for value in sorted(values):
        for seed in seeds:
            run_out = base_out / "runs" / f"{value:g}-seed{seed}"
            o = dataclasses.replace(
                opts,
                out=run_out,
                seed=seed,
                capacity=capacity,
                phases=_with_pulse(opts.phases, vary, value),
                name=f"{opts.name}-{vary}-{value:g}-seed{seed}",
            )
            p = prepare(o)
            if on_prepared is not None:
                on_prepared(p)
            capacity = p.capacity  # a measured Ĉ is measured once, on the first run
            if result is None:
                result = SweepResult(vary=vary, threshold=threshold, capacity=capacity)
            res = execute(p)
            d = res.delivery
            w = None if d is None else next((x for x in d.windows if x.window == hold), None)
            share = None if w is None else w.on_time_share
            run = SweepRun(
                value=value,
                seed=seed,
                calls=res.calls_started,
                hold_on_time_share=share,
                down=share is not None and share < threshold,
                verdict=None if d is None or d.recovery is None else d.recovery.verdict,
                out=str(run_out),
            )
            result.runs.append(run)
            if on_run is not None:
                on_run(run)
            if res.interrupted:
                break
        else:
            continue
        break  # Ctrl-C: stop the sweep, keep the runs done
    assert result is not None
    for seed in seeds:
        downs = [r.value for r in result.runs if r.seed == seed and r.down]
        result.trigger_by_seed[seed] = min(downs) if downs else None
    found = [v for v in result.trigger_by_seed.values() if v is not None]
    if found:
        result.trigger_median = statistics.median(found)
        result.trigger_min, result.trigger_max = min(found), max(found)
    (base_out / "sweep.json").write_text(
        json.dumps(dataclasses.asdict(result), indent=2) + "\n", encoding="utf-8"
    )
    return result
