"""`relplan budget` and `relplan pulse`: arithmetic that needs no data, so no heavy imports.

The planners (pydantic models) load when the command runs; duckdb only with `budget
--from-db`, which opens the workspace.
"""

from __future__ import annotations

from typing import Annotated

import typer

from relplan.cli.options import DbOption, JsonFlag, SloOption
from relplan.errors import UsageError
from relplan.values import parse_duration, parse_slo, positive

DEFAULT_REPLICAS = 8


def budget(
    crashes: Annotated[float, typer.Option(help="Crashes per replica per window (C).")],
    concurrency: Annotated[
        float | None,
        typer.Option(help="Mean concurrent streams per replica (K). Measured with --from-db."),
    ] = None,
    replicas: Annotated[
        int | None,
        typer.Option(help="Replicas (N). Default: those seen with --from-db, else 8."),
    ] = None,
    slo: SloOption = 99.9,
    window: Annotated[
        str, typer.Option(metavar="DURATION", help="SLO window: 30d, 720h, 4w, ...")
    ] = "30d",
    stream_seconds: Annotated[
        list[float] | None,
        typer.Option(help="Mean stream duration in seconds (repeatable). Default: 10..600 s."),
    ] = None,
    restart_minutes: Annotated[
        float, typer.Option(help="Minutes a replica is down per restart.")
    ] = 6,
    planned_restarts: Annotated[
        float, typer.Option(help="Planned restarts per replica per window (P).")
    ] = 0,
    drain: Annotated[
        bool, typer.Option(help="Planned restarts drain first and kill no streams.")
    ] = False,
    from_db: Annotated[
        bool,
        typer.Option(
            "--from-db", help="Measure K and d from the workspace's proxy log (flags override)."
        ),
    ] = False,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Error-budget burn from crash rate x stream duration.

    Example: relplan budget --crashes 10 --concurrency 40
    """
    from relplan.planning import budget as budget_mod

    measured = None
    if from_db:
        from relplan.planning.measured import measure_streams
        from relplan.workspace import open_workspace, resolve_db

        with open_workspace(resolve_db(db), read_only=True) as con:
            measured = measure_streams(con)
        if concurrency is None:
            concurrency = measured.mean_concurrency_per_replica
        if not stream_seconds:
            stream_seconds = [measured.mean_stream_seconds]
        if replicas is None:
            replicas = measured.replicas_seen
            typer.echo(
                f"relplan: replicas: {replicas}, as seen in the proxy log (--replicas overrides)",
                err=True,
            )
        else:
            typer.echo(f"relplan: replicas: {replicas}, from --replicas", err=True)
    if replicas is None:
        replicas = DEFAULT_REPLICAS
    if concurrency is None:
        raise UsageError("--concurrency", "is required (or measure it with --from-db)")
    durations = stream_seconds or list(budget_mod.TYPICAL_STREAM_SECONDS)
    for d in durations:
        positive(d, "--stream-seconds")
    if replicas <= 0:
        raise UsageError("--replicas", f"must be a whole number greater than zero, got {replicas}")
    inputs = budget_mod.BudgetInputs(
        crashes=positive(crashes, "--crashes"),
        concurrency=positive(concurrency, "--concurrency"),
        replicas=replicas,
        slo=parse_slo(slo),
        window_s=parse_duration(window, "--window"),
        stream_seconds=durations,
        restart_minutes=positive(restart_minutes, "--restart-minutes", allow_zero=True),
        planned_restarts=positive(planned_restarts, "--planned-restarts", allow_zero=True),
        drain=drain,
    )
    result = budget_mod.plan_budget(inputs, measured)
    typer.echo(result.model_dump_json(indent=2) if json_out else budget_mod.render_budget(result))


def pulse(
    capacity: Annotated[float, typer.Option(help="Engine capacity C^ in calls/s.")],
    pulse: Annotated[float, typer.Option(help="Pulse load as a multiple of capacity.")],
    pulse_seconds: Annotated[float, typer.Option(help="Pulse length in seconds.")],
    base: Annotated[float, typer.Option(help="Base load as a multiple of capacity.")] = 0.6,
    hold: Annotated[
        float | None, typer.Option(help="Load after the pulse (multiple). Default: --base.")
    ] = None,
    deadline: Annotated[
        str,
        typer.Option(metavar="DURATION", help="Client per-attempt deadline D, e.g. 120 or 2m."),
    ] = "120",
    retries: Annotated[int, typer.Option(help="Retries per call after a timeout.")] = 3,
    json_out: JsonFlag = False,
) -> None:
    """Backlog arithmetic for an overload pulse: does it drain, or can retries lock it up?

    Example: relplan pulse --capacity 2.78 --base 0.6 --pulse 2.7 --pulse-seconds 107 --deadline 120 --retries 3
    """
    from relplan.planning import pulse as pulse_mod

    if retries < 0:
        raise UsageError("--retries", f"must be zero or more, got {retries}")
    base_x = positive(base, "--base", allow_zero=True)
    inputs = pulse_mod.PulseInputs(
        capacity_calls_per_s=positive(capacity, "--capacity"),
        base=base_x,
        pulse=positive(pulse, "--pulse"),
        pulse_seconds=positive(pulse_seconds, "--pulse-seconds"),
        hold=base_x if hold is None else positive(hold, "--hold", allow_zero=True),
        deadline_s=parse_duration(deadline, "--deadline"),
        retries=retries,
    )
    result = pulse_mod.plan_pulse(inputs)
    typer.echo(result.model_dump_json(indent=2) if json_out else pulse_mod.render_pulse(result))
