"""`relplan simulate NAME|FILE` runs a scenario; `simulate calibrate` and `simulate sweep`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from relplan.cli.options import DbOption, JsonFlag, SetOption
from relplan.cli.progress import ProgressBar
from relplan.errors import UsageError


class _SimulateGroup(TyperGroup):
    """`relplan simulate NAME ...` runs a scenario; `calibrate` and `sweep` are subcommands."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        words = [a for a in args if not a.startswith("-")]
        if words and words[0] not in self.commands:
            args = ["run", *args]  # `relplan simulate [OPTIONS] NAME ...` runs a scenario
        return super().parse_args(ctx, args)


simulate_app = typer.Typer(
    cls=_SimulateGroup,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_show_locals=False,
)


@simulate_app.callback()
def _simulate() -> None:
    """What-if runs of an engine behind a retrying proxy, written in the canonical formats.

    `relplan simulate NAME|FILE --out DIR` runs a built-in scenario or a scenario file;
    `relplan simulate calibrate` finds an engine's capacity; `relplan simulate sweep` runs
    combinations of settings in parallel.

    Example: relplan simulate pulse-retry-cancel --out runs/pulse-retry-cancel
    """


@simulate_app.command("run")
def simulate_run(
    scenario: Annotated[
        str,
        typer.Argument(metavar="NAME|FILE", help="Built-in scenario name or a .toml/.yaml file."),
    ],
    out: Annotated[Path, typer.Option("--out", help="Directory to write the four files into.")],
    seed: Annotated[int | None, typer.Option(help="Seed (default: the scenario's).")] = None,
    set_: SetOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Run a scenario; write proxy.parquet, engine.parquet, metrics.om.txt, run.json; summarize.

    Example: relplan simulate pulse-retry-coalesce --out runs/coalesce --seed 2 --json
    """
    from relplan.sim import run as sim_run
    from relplan.sim import summary as sim_summary

    result = sim_run.simulate(scenario, out, seed=seed, sets=list(set_ or []))
    typer.echo(sim_summary.summary_json(result) if json_out else sim_summary.render_summary(result))


@simulate_app.command("calibrate")
def simulate_calibrate(
    profile: Annotated[
        str, typer.Argument(metavar="PROFILE", help="Engine profile name or .toml file.")
    ] = "h100-7b",
    scenario: Annotated[
        str, typer.Option(help="Scenario whose engine settings and workload are calibrated.")
    ] = "ramp",
    set_: SetOption = None,
    workload: Annotated[
        str | None,
        typer.Option(
            help="Trace whose lengths the ramp draws (Azure CSV, Mooncake JSONL, proxy log)."
        ),
    ] = None,
    seeds: Annotated[int, typer.Option(help="Seeds 1..N; C^ is the median.")] = 7,
    start: Annotated[float, typer.Option(help="First stage's rate, calls/s.")] = 2.0,
    step: Annotated[float, typer.Option(help="Rate added per stage, calls/s.")] = 0.05,
    stage_seconds: Annotated[float, typer.Option(help="Length of a stage, s.")] = 300.0,
    jobs: Annotated[int, typer.Option(help="Parallel processes.")] = 1,
    write: Annotated[
        bool, typer.Option(help="Store the result in the profile's capacity table.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Find an engine's capacity C^ by a staged ramp with patient clients.

    Example: relplan simulate calibrate h100-7b --scenario pulse-retry-cancel-2048 --jobs 2
    """
    from relplan.sim import calibrate as cal
    from relplan.sim.profiles import load_profile
    from relplan.sim.scenario import load_scenario

    if seeds < 1:
        raise UsageError("--seeds", f"must be 1 or more, got {seeds}")
    if step <= 0 or start <= 0 or stage_seconds <= 0:
        raise UsageError("--start/--step/--stage-seconds", "must be greater than zero")
    sets = list(set_ or [])
    sets.append(f"engine.profile={json.dumps(profile)}")
    if workload is not None:
        sets += [f"workload.trace.path={json.dumps(workload)}", 'workload.trace.use="lengths"']
    cal_scenario = load_scenario(scenario, sets)
    prof, _ = load_profile(profile)
    with ProgressBar("calibrating (seeds)") as progress:
        result = cal.calibrate(
            cal_scenario,
            prof,
            profile,
            seeds=list(range(1, seeds + 1)),
            start=start,
            step=step,
            stage_seconds=stage_seconds,
            jobs=jobs,
            write=write,
            progress=progress,
        )
    typer.echo(result.model_dump_json(indent=2) if json_out else cal.render_calibration(result))


@simulate_app.command("fit-engine")
def simulate_fit_engine(
    db: DbOption = None,
    max_gap: Annotated[
        float, typer.Option(help="Longest gap between stats records counted as a step, s.")
    ] = 1.0,
    json_out: JsonFlag = False,
) -> None:
    """Fit the step-cost model from the workspace's engine trace (steps, else scheduler stats).

    Example: relplan simulate fit-engine --db incident.duckdb
    """
    from relplan.sim.costfit import fit_engine, render_fit
    from relplan.workspace import open_workspace, resolve_db

    with open_workspace(resolve_db(db), read_only=True) as con:
        fit = fit_engine(con, max_gap_s=max_gap)
    typer.echo(fit.model_dump_json(indent=2) if json_out else render_fit(fit))


@simulate_app.command("sweep")
def simulate_sweep(
    scenario: Annotated[
        str, typer.Argument(metavar="NAME|FILE", help="Built-in scenario name or a scenario file.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Directory for sweep.csv/sweep.parquet.")],
    vary: Annotated[
        list[str] | None,
        typer.Option("--vary", help="key=v1,v2,... (repeatable; all combinations run)."),
    ] = None,
    seeds: Annotated[int, typer.Option(help="Seeds 1..N per combination.")] = 1,
    jobs: Annotated[int, typer.Option(help="Parallel processes (default: all cores).")] = 0,
    set_: SetOption = None,
    keep_runs: Annotated[
        bool, typer.Option(help="Keep every run's files under OUT/runs/.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Run combinations of settings and seeds in parallel; one summary row per run.

    Example: relplan simulate sweep pulse-retry --vary proxy.coalesce=false,true --out runs/sw
    """
    import os

    from relplan.sim import sweep as sw

    if seeds < 1:
        raise UsageError("--seeds", f"must be 1 or more, got {seeds}")
    n_jobs = jobs if jobs > 0 else (os.cpu_count() or 1)
    with ProgressBar("sweep (runs)") as progress:
        df, _ = sw.sweep(
            scenario,
            list(vary or []),
            seeds=seeds,
            jobs=n_jobs,
            out=out,
            sets=list(set_ or []),
            keep_runs=keep_runs,
            progress=progress,
        )
    if json_out:
        typer.echo(json.dumps(df.to_dicts(), indent=2))
    else:
        keys = [k for k, _ in sw.parse_vary(list(vary or []))]
        from relplan.text.sim import sweep as sweep_table

        typer.echo(sweep_table(df.to_dicts(), keys))
        typer.echo(f"\nwrote {out / 'sweep.csv'} and {out / 'sweep.parquet'}")
