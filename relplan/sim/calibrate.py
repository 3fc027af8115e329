"""Capacity calibration by a staged ramp (docs/simulate.md, Engine profiles and calibration).

For each seed, patient clients (no deadline, no retries) arrive as a Poisson process in
stages of `stage_seconds` (300 s) whose rate rises by `step` (0.05 calls/s) from `start`.
A stage *grows* when the least-squares slope of the engine's waiting queue over the stage
(the metrics scrapes inside it, every 5 s) exceeds 0.05 /s and the stage ends with more than
20 executions waiting. C^ for the seed is the rate of the last stage before the first
growing one; the ramp stops at that growing stage. The calibrated C^ is the median over seeds
(1-7 by default: the engine is bistable near saturation, so single seeds spread by about
+-0.2). The saturated completion rate is the rate of `finished` executions during the first
growing stage (median over seeds).

The configuration calibrated is the scenario's engine settings and workload lengths on the
given profile; its fingerprint keys the entry that `--write` stores beside the profile.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Literal

from pydantic import Field

from relplan.models import StrictModel
from relplan.sim.pool import spawn_context
from relplan.sim.profiles import (
    CalibratedCapacity,
    Profile,
    capacity_settings,
    fingerprint,
    save_capacity,
)
from relplan.sim.scenario import ClientSpec, PhaseSpec, ProxySpec, Scenario
from relplan.sim.simulator import Simulation
from relplan.wording import Words

GROWTH_SLOPE = 0.05  # waiting executions per second
GROWTH_MIN_WAITING = 20

# A seed's note, the configuration's label and the text, worded by relplan/text/sim.py.
Said = Literal["first_stage_grows", "no_stage_grew", "config_label", "calibration"]


_say: Words[Said] = Words("relplan.text.sim")


class StageResult(StrictModel):
    stage: int
    rate_calls_per_s: float
    waiting_slope_per_s: float
    waiting_at_end: int
    completed_calls_per_s: float
    grows: bool


class SeedResult(StrictModel):
    seed: int
    capacity_calls_per_s: float | None = Field(
        description="null when the first stage already grows (C^ below the ramp) or no stage grows"
    )
    saturated_completion_calls_per_s: float | None
    note: str | None = None
    stages: list[StageResult]


class CalibrationResult(StrictModel):
    profile: str
    config: str = Field(description="configuration fingerprint")
    label: str
    capacity_calls_per_s: float | None
    saturated_completion_calls_per_s: float | None
    seeds: list[SeedResult]
    start_calls_per_s: float
    step_calls_per_s: float
    stage_seconds: float
    written_to: str | None = None


def _slope(points: list[tuple[float, int]]) -> float:
    n = len(points)
    if n < 2:
        return 0.0
    mt = sum(p[0] for p in points) / n
    mw = sum(p[1] for p in points) / n
    num = sum((p[0] - mt) * (p[1] - mw) for p in points)
    den = sum((p[0] - mt) ** 2 for p in points)
    return num / den if den > 0 else 0.0


def ramp_scenario(
    base: Scenario, start: float, step: float, stage_s: float, stages: int
) -> Scenario:
    phases = [
        PhaseSpec(name=f"stage-{i + 1}", seconds=stage_s, rate_per_s=round(start + i * step, 6))
        for i in range(stages)
    ]
    trace = base.workload.trace
    if trace is not None and trace.use == "arrivals":  # the ramp draws the trace's lengths
        trace = trace.model_copy(update={"use": "lengths"})
    wl = base.workload.model_copy(update={"phases": phases, "trace": trace})
    return base.model_copy(
        update={
            "workload": wl,
            "client": ClientSpec(deadline_s=float("inf"), max_retries=0, delivery_window_s=1e12),
            "proxy": ProxySpec(),
            "capacity_calls_per_s": None,
            "overload_phase": None,
        }
    )


def calibrate_seed(
    scn: Scenario,
    profile: Profile,
    seed: int,
    start: float,
    step: float,
    stage_s: float,
    max_stages: int,
) -> SeedResult:
    ramp = ramp_scenario(scn, start, step, stage_s, max_stages)
    sim = Simulation(ramp, profile, None, seed)
    results: list[StageResult] = []
    cap: float | None = None
    sat: float | None = None
    note: str | None = None
    finished_seen = 0
    for i, (_, a, b) in enumerate(sim.phases):
        sim.advance(b + 1e-9)  # includes the scrape at the stage's end
        pts = [(s.t, s.waiting) for s in sim.samples if a <= s.t <= b]
        slope = _slope(pts)
        at_end = pts[-1][1] if pts else 0
        n_fin = sim.engine.success_stop_total + sim.engine.success_length_total
        done_rate = (n_fin - finished_seen) / (b - a)
        finished_seen = n_fin
        rate = start + i * step
        grows = slope > GROWTH_SLOPE and at_end > GROWTH_MIN_WAITING
        results.append(
            StageResult(
                stage=i + 1,
                rate_calls_per_s=round(rate, 6),
                waiting_slope_per_s=slope,
                waiting_at_end=at_end,
                completed_calls_per_s=done_rate,
                grows=grows,
            )
        )
        if grows:
            sat = done_rate
            if i == 0:
                lower = max(step, round(0.8 * done_rate / step) * step)
                note = _say("first_stage_grows", rate=rate, lower=lower)
            else:
                cap = round(start + (i - 1) * step, 6)
            break
    else:
        top = start + (max_stages - 1) * step
        note = _say("no_stage_grew", top=top, next_start=top + step)
    return SeedResult(
        seed=seed,
        capacity_calls_per_s=cap,
        saturated_completion_calls_per_s=sat,
        note=note,
        stages=results,
    )


def _median(values: list[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return round(statistics.median(got), 6) if got else None


def calibrate(
    scn: Scenario,
    profile: Profile,
    profile_ref: str,
    *,
    seeds: list[int],
    start: float = 2.0,
    step: float = 0.05,
    stage_seconds: float = 300.0,
    max_stages: int = 40,
    jobs: int = 1,
    write: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> CalibrationResult:
    args = [(scn, profile, s, start, step, stage_seconds, max_stages) for s in seeds]
    per_seed: list[SeedResult] = []
    if jobs > 1 and len(seeds) > 1:
        with ProcessPoolExecutor(
            max_workers=min(jobs, len(seeds)), mp_context=spawn_context()
        ) as pool:
            for r in pool.map(_calibrate_args, args):
                per_seed.append(r)
                if progress is not None:
                    progress(len(per_seed), len(args))
    else:
        for a in args:
            per_seed.append(calibrate_seed(*a))
            if progress is not None:
                progress(len(per_seed), len(args))
    settings = capacity_settings(scn, profile)
    fp = fingerprint(settings)
    e = scn.engine
    label = _say(
        "config_label",
        scenario=scn.name,
        step_tokens=e.max_num_batched_tokens,
        seqs=e.max_num_seqs,
        blocks=e.num_blocks,
    )
    result = CalibrationResult(
        profile=profile.name,
        config=fp,
        label=label,
        capacity_calls_per_s=_median([r.capacity_calls_per_s for r in per_seed]),
        saturated_completion_calls_per_s=_median(
            [r.saturated_completion_calls_per_s for r in per_seed]
        ),
        seeds=per_seed,
        start_calls_per_s=start,
        step_calls_per_s=step,
        stage_seconds=stage_seconds,
    )
    if write and result.capacity_calls_per_s is not None:
        path = save_capacity(
            profile_ref,
            CalibratedCapacity(
                config=fp,
                label=label,
                capacity_calls_per_s=result.capacity_calls_per_s,
                saturated_completion_calls_per_s=result.saturated_completion_calls_per_s,
                seeds=seeds,
                per_seed=[r.capacity_calls_per_s for r in per_seed],
                stage_seconds=stage_seconds,
                stage_step_calls_per_s=step,
                start_calls_per_s=start,
                settings=settings,
            ),
        )
        result.written_to = str(path)
    return result


def _calibrate_args(
    a: tuple[Scenario, Profile, int, float, float, float, int],
) -> SeedResult:
    return calibrate_seed(*a)


def render_calibration(r: CalibrationResult) -> str:
    """The calibration as text for the terminal (relplan/text/sim.py words it)."""
    return _say("calibration", result=r)
