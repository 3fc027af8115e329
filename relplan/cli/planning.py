"""`relplan budget` and `relplan pulse`: arithmetic that needs no data, so no heavy imports.

The planners (pydantic models) load when the command runs; duckdb only with `budget
--from-db`, which opens the workspace.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from relplan.cli.options import DbOption, JsonFlag, SloOption
from relplan.errors import UsageError
from relplan.values import parse_duration, parse_slo, positive

DEFAULT_REPLICAS = 8


def budget(
    crashes: Annotated[
        float | None,
        typer.Option(help="Crashes per replica per window (C). Measured with --from-db."),
    ] = None,
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
        float | None,
        typer.Option(
            help="Minutes a replica is down per restart. Default 6; measured with --from-db."
        ),
    ] = None,
    planned_restarts: Annotated[
        float | None,
        typer.Option(
            help="Planned restarts per replica per window (P). Default 0; measured with --from-db."
        ),
    ] = None,
    drain: Annotated[
        bool | None,
        typer.Option(
            "--drain/--no-drain",
            help="Planned restarts drain first and kill no streams. Measured with --from-db.",
        ),
    ] = None,
    streams_per_crash: Annotated[
        float | None,
        typer.Option(help="Streams one crash kills. Default K; measured with --from-db."),
    ] = None,
    from_db: Annotated[
        bool,
        typer.Option(
            "--from-db",
            help="Measure the inputs from the workspace (proxy log, restart signals); flags override.",
        ),
    ] = False,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Error-budget burn from crash rate x stream duration.

    Example: relplan budget --crashes 10 --concurrency 40
    """
    from relplan.planning import budget as budget_mod
    from relplan.text.budget import render_budget, replicas_line

    window_s = parse_duration(window, "--window")
    typed = {
        "C": crashes,
        "K": concurrency,
        "d": stream_seconds or None,
        "r": restart_minutes,
        "P": planned_restarts,
        "drain": drain,
        "per crash": streams_per_crash,
    }
    measured = restarts = None
    got: dict[str, object] = {}
    if from_db:
        from relplan.planning.measured import measure_restarts, measure_streams
        from relplan.workspace import open_workspace, resolve_db

        with open_workspace(resolve_db(db), read_only=True) as con:
            measured = measure_streams(con)
            restarts = measure_restarts(con, window_s)
        got = {"K": measured.mean_concurrency_per_replica, "d": [measured.mean_stream_seconds]}
        if restarts is not None:
            got |= {
                "C": restarts.crashes_per_replica_per_window or None,
                "P": restarts.planned_per_replica_per_window,
                "r": restarts.restart_minutes,
                "drain": restarts.planned_drained,
                "per crash": restarts.streams_killed_per_crash,
            }
        if replicas is None:
            replicas = measured.replicas_seen
            typer.echo(replicas_line(replicas, seen=True), err=True)
        else:
            typer.echo(replicas_line(replicas, seen=False), err=True)
    if replicas is None:
        replicas = DEFAULT_REPLICAS
    defaults: dict[str, object] = {
        "d": list(budget_mod.TYPICAL_STREAM_SECONDS),
        "r": 6.0,
        "P": 0.0,
        "drain": False,
    }
    used: dict[str, object] = {}
    sources: dict[str, str] = {}
    for name, value in typed.items():
        if value is not None:
            used[name], sources[name] = value, "typed"
        elif got.get(name) is not None:
            used[name], sources[name] = got[name], "measured"
        elif name in defaults:
            used[name], sources[name] = defaults[name], "default"
    if "C" not in used:
        hint = (
            "no crash was measured in the workspace: give --crashes"
            if from_db
            else "is required (or measure it with --from-db)"
        )
        raise UsageError("--crashes", hint)
    if "K" not in used:
        raise UsageError("--concurrency", "is required (or measure it with --from-db)")
    if replicas <= 0:
        raise UsageError("--replicas", f"must be a whole number greater than zero, got {replicas}")
    inputs = _budget_inputs(budget_mod, used, replicas, slo, window_s)
    measured_inputs = None
    if from_db and got.get("C") is not None:
        merged = {k: got[k] if got.get(k) is not None else v for k, v in used.items()}
        measured_inputs = _budget_inputs(budget_mod, merged, replicas, slo, window_s)
    if from_db:
        result = budget_mod.plan_budget(
            inputs,
            measured,
            restarts=restarts,
            measured_inputs=measured_inputs,
            input_sources=sources,
        )
    else:
        result = budget_mod.plan_budget(inputs)
    typer.echo(result.model_dump_json(indent=2) if json_out else render_budget(result))


def _budget_inputs(
    budget_mod: Any, v: dict[str, Any], replicas: int, slo: float, window_s: float
) -> Any:
    durations = list(v["d"])
    for d in durations:
        positive(d, "--stream-seconds")
    per_crash = v.get("per crash")
    return budget_mod.BudgetInputs(
        crashes=positive(float(v["C"]), "--crashes"),
        concurrency=positive(float(v["K"]), "--concurrency"),
        replicas=replicas,
        slo=parse_slo(slo),
        window_s=window_s,
        stream_seconds=durations,
        restart_minutes=positive(float(v["r"]), "--restart-minutes", allow_zero=True),
        planned_restarts=positive(float(v["P"]), "--planned-restarts", allow_zero=True),
        drain=bool(v["drain"]),
        streams_per_crash=None
        if per_crash is None
        else positive(float(per_crash), "--streams-per-crash", allow_zero=True),
    )


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
    from relplan.text.pulse import render_pulse

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
    typer.echo(result.model_dump_json(indent=2) if json_out else render_pulse(result))
