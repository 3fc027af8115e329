"""One simulation run end to end: scenario -> simulation -> files -> summary."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from relplan.errors import InputError
from relplan.sim.profiles import Profile, load_profile, lookup_capacity
from relplan.sim.scenario import (
    Override,
    Scenario,
    apply_all,
    load_scenario_data,
    validate_scenario,
)
from relplan.sim.simulator import Simulation
from relplan.sim.summary import SimSummary, summarize
from relplan.sim.writer import check_out_dir, write_outputs
from relplan.values import num


@dataclass
class Prepared:
    scenario: Scenario
    source: str
    profile: Profile
    profile_source: str
    capacity: float | None
    capacity_source: str
    sets: list[str]


def prepare(
    ref: str, sets: Sequence[str | Override] | None = None, seed: int | None = None
) -> Prepared:
    """The scenario `ref` with `sets` applied (`--set` strings or typed overrides) and its seed,
    validated, with its engine profile and capacity."""
    data, label = load_scenario_data(ref)
    apply_all(data, sets or [])
    if seed is not None:
        data["seed"] = seed
    scn = validate_scenario(data, label)
    profile, plabel = load_profile(scn.engine.profile)
    cap, source = lookup_capacity(scn, profile)
    # x C^ rates need C^; so does a trace's run: its x C^ figures and its verdict are
    # relative to the capacity of the trace's own length mix
    needs_cap = scn.workload.trace is not None or any(
        p.rate_x is not None for p in scn.workload.phases
    )
    if cap is None and needs_cap:
        fp = source.split(":", 1)[1]
        what = "this trace's length mix" if scn.workload.trace is not None else "it"
        raise InputError(
            f"no calibrated capacity for this configuration (fingerprint {fp}) of engine "
            f"profile {scn.engine.profile!r}: calibrate {what} with `relplan simulate "
            f"calibrate {scn.engine.profile} --scenario {ref} --write` (with the same --set "
            "options), or give --set capacity_calls_per_s=VALUE",
            label,
        )
    check_size(scn, cap, label)
    said = [s.text() if isinstance(s, Override) else s for s in sets or []]
    return Prepared(scn, label, profile, plabel, cap, source, said)


# The most calls one simulation plans (each is a few hundred bytes through the event queue,
# the executions and the written files: 5 M calls is a few GB). More is refused before any
# is drawn, with the estimate.
MAX_CALLS = 5_000_000


def check_size(scn: Scenario, cap: float | None, label: str) -> None:
    """Refuse up front a scenario whose phases plan more calls than MAX_CALLS."""
    if scn.workload.trace is not None:
        return  # a trace's calls are its own, already bounded by its file
    planned = 0.0
    for ph in scn.workload.phases:
        rate = ph.rate_per_s if ph.rate_per_s is not None else (ph.rate_x or 0.0) * (cap or 0.0)
        planned += rate * ph.seconds
    if planned > MAX_CALLS:
        raise InputError(
            f"the phases plan about {num(planned, 0)} calls, more than the {num(MAX_CALLS)} one"
            " simulation holds in memory; shorten the phases or lower the rates",
            label,
        )


def run_prepared(p: Prepared) -> Simulation:
    return Simulation(p.scenario, p.profile, p.capacity, p.scenario.seed).run()


def simulate(
    ref: str, out: Path, *, seed: int | None = None, sets: list[str] | None = None
) -> SimSummary:
    """Run a scenario (built-in NAME or FILE), write the four files into `out`, summarize."""
    p = prepare(ref, sets, seed)
    check_out_dir(out)
    sim = run_prepared(p)
    existed = out.exists()
    before = set(out.iterdir()) if existed else set()
    try:
        write_outputs(
            sim,
            out,
            {
                "scenario": p.scenario.name,
                "scenario_source": p.source,
                "sets": p.sets,
                "profile_source": p.profile_source,
                "capacity_source": p.capacity_source,
                "settings": p.scenario.model_dump(mode="json"),
            },
        )
        return summarize(out, p.scenario.seed)
    except (KeyboardInterrupt, InputError):
        # Ctrl-C or a full disk once the files are (partly) written: "nothing stored" must
        # stay true.
        _remove_new(out, before, existed)
        raise


def _remove_new(out: Path, before: set[Path], existed: bool) -> None:
    """Remove what this run wrote into `out` (and `out` itself when the run made it)."""
    if not out.exists():
        return
    for path in set(out.iterdir()) - before:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    if not existed:
        with contextlib.suppress(OSError):
            out.rmdir()
