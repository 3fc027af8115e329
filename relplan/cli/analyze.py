"""`relplan analyze`: every analysis the workspace supports, as tables or one JSON object."""

from __future__ import annotations

from typing import Annotated

import typer

from relplan.cli.options import (
    DbOption,
    FromOption,
    JsonFlag,
    ReplicaLabelOption,
    RunFlags,
    ToOption,
    duration_flag,
    run_flags,
    time_flag,
)
from relplan.errors import FindingError
from relplan.values import parse_duration, parse_tz, use_tz


@run_flags
def analyze(
    db: DbOption = None,
    json_out: JsonFlag = False,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            metavar="NAME",
            help="Run only these analyses (repeatable or comma-separated): {analyses}.",
        ),
    ] = None,
    window: Annotated[
        str, typer.Option(metavar="DURATION", help="Rolling window of the counter series.")
    ] = "60s",
    step: Annotated[
        str, typer.Option(metavar="DURATION", help="Evaluation step of the rolling series.")
    ] = "15s",
    bin_width: Annotated[
        str | None,
        typer.Option(
            "--bin",
            metavar="DURATION",
            help="Bin width of the time series (default 30s, wider past 200 bins).",
        ),
    ] = None,
    t_from: FromOption = None,
    t_to: ToOption = None,
    replica_label: ReplicaLabelOption = None,
    fail_on: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-on",
            metavar="FINDING",
            help="Exit 1 when this finding shows (repeatable or comma-separated): {findings}.",
        ),
    ] = None,
    prometheus_url: Annotated[
        str | None,
        typer.Option(
            metavar="URL",
            help="Evaluate the engine health signals on this Prometheus-compatible server"
            " (its query API), fetching only their results.",
        ),
    ] = None,
    tz: Annotated[
        str,
        typer.Option(
            "--tz",
            metavar="ZONE",
            help="Time zone of the times shown (an IANA name such as Europe/Berlin).",
        ),
    ] = "UTC",
    *,
    run: RunFlags,
) -> None:
    """Every analysis the workspace supports: amplification, delivery and recovery, wasted
    prefill, counters, Little's law, retry timing, capacity calibration, engine health.

    Example: relplan analyze --db incident.duckdb --phases base=0:120,pulse=120:227
    """
    from relplan import analyses as analyses_mod
    from relplan.analyses.findings import parse_fail_on
    from relplan.text.analyze import render_analysis
    from relplan.text.findings import fail_on_findings
    from relplan.workspace import open_workspace, resolve_db
    from relplan.workspace.attached import narrow

    zone = parse_tz(tz)
    gates = parse_fail_on(fail_on or [])
    opts = analyses_mod.AnalyzeOptions(
        **run.options(),
        window=parse_duration(window, "--window"),
        step=parse_duration(step, "--step"),
        bin=duration_flag(bin_width, "--bin"),
        t_from=time_flag(t_from, "--from"),
        t_to=time_flag(t_to, "--to"),
        replica_label=replica_label,
        prometheus_url=prometheus_url,
        only=analyses_mod.registry.check_names(
            [n.strip() for item in (only or []) for n in item.split(",") if n.strip()]
        ),
    )
    # The analyses word their findings too: their times follow --tz as well.
    with use_tz(zone), open_workspace(resolve_db(db), read_only=True) as con:
        # Attached Parquet: read only the window's hours (the window comes back in epoch s).
        t_from_s, t_to_s = narrow(con, opts.t_from, opts.t_to)
        opts = opts.model_copy(update={"t_from": t_from_s, "t_to": t_to_s})
        result = analyses_mod.analyze(con, opts)
        out = result.model_dump_json(indent=2) if json_out else render_analysis(result)
    typer.echo(out)
    found = fail_on_findings(result, gates)
    if found:
        raise FindingError("; ".join(found))
