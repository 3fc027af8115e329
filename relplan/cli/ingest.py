"""`relplan ingest` (files or a live Prometheus pull) and `relplan inspect`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from relplan.cli.options import DbOption, JsonFlag, input_flags
from relplan.cli.progress import ProgressBar
from relplan.errors import UsageError
from relplan.values import parse_duration, parse_instant

if TYPE_CHECKING:
    from relplan.ingest.base import IngestOptions


@input_flags
def ingest(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Files or directories to ingest.", show_default=False),
    ] = None,
    db: DbOption = None,
    prometheus_url: Annotated[
        str | None, typer.Option(help="Pull metrics live from this Prometheus-compatible API.")
    ] = None,
    match: Annotated[
        str, typer.Option(help="Live pull: regular expression for metric names.")
    ] = "vllm:.*",
    start: Annotated[
        str | None,
        typer.Option(metavar="TIME", help="Live pull: start (epoch seconds or RFC 3339)."),
    ] = None,
    end: Annotated[
        str | None,
        typer.Option(metavar="TIME", help="Live pull: end (epoch seconds or RFC 3339)."),
    ] = None,
    step: Annotated[
        str, typer.Option(metavar="DURATION", help="Live pull: resolution, e.g. 5s or 1m.")
    ] = "15s",
    timeout: Annotated[
        str,
        typer.Option(
            metavar="DURATION",
            help="Live pull: the whole pull's deadline, however slowly the server answers.",
        ),
    ] = "3m",
    attach: Annotated[
        list[str] | None,
        typer.Option(
            "--attach",
            metavar="GLOB",
            help="Register engine Parquet (Hive-partitioned, e.g. 'traces/day=*/replica=*/*.parquet')"
            " as views over the files instead of copying them; quote the glob.",
            show_default=False,
        ),
    ] = None,
    json_out: JsonFlag = False,
    *,
    inputs: IngestOptions,
) -> None:
    """Load proxy logs, engine traces, metrics and run manifests into the workspace.

    The kind and format are detected from the content; one transaction per call, so a bad
    record or a crash leaves the workspace as it was. Re-ingesting the same content adds
    nothing.

    Live pull: relplan ingest --prometheus-url http://prometheus:9090 --match 'vllm:.*'
    --start 2025-11-30T00:00:00Z --end 2025-11-30T01:00:00Z --step 5s

    Attach in place: relplan ingest --attach 'traces/day=*/replica=*/*.parquet'

    Example: relplan ingest sample_data/pulse-retry-cancel --db incident.duckdb
    """
    from relplan import ingest as ingest_mod
    from relplan.workspace import resolve_db

    opts = inputs
    target = resolve_db(db)
    if attach:
        from relplan.ingest.attach import attach_globs

        if paths or prometheus_url is not None:
            raise UsageError("--attach", "give either PATHs, --prometheus-url or --attach")
        rep = attach_globs(target, attach, opts)
    elif prometheus_url is not None:
        if paths:
            raise UsageError("--prometheus-url", "give either PATHs or --prometheus-url, not both")
        if start is None or end is None:
            raise UsageError("--start", "a live pull needs --start and --end")
        t_start = parse_instant(start, "--start")
        t_end = parse_instant(end, "--end")
        opts = opts.replace(timeout=parse_duration(timeout, "--timeout"))
        rep = ingest_mod.pull_prometheus(
            target, prometheus_url, match, t_start, t_end, parse_duration(step, "--step"), opts
        )
    else:
        if not paths:
            raise UsageError("PATH", "give files or directories to ingest (or --prometheus-url)")
        with ProgressBar("ingest", bytes_=True) as bar:
            rep = ingest_mod.ingest_paths(target, paths, opts, bar if bar.active else None)
    from relplan.text.ingest import render_ingest

    typer.echo(rep.model_dump_json(indent=2) if json_out else render_ingest(rep))


def inspect(
    db: DbOption = None,
    json_out: JsonFlag = False,
    formats: Annotated[
        bool,
        typer.Option(
            "--formats", help="List the input formats this build reads instead (no workspace)."
        ),
    ] = False,
) -> None:
    """What the workspace holds: sources, spans, counts, rejected rows, metrics, manifests.

    Example: relplan inspect --db incident.duckdb
    """
    from relplan import ingest as ingest_mod
    from relplan.workspace import resolve_db

    if formats:
        from relplan.ingest.contents import input_formats
        from relplan.text.ingest import render_formats

        fr = input_formats()
        typer.echo(fr.model_dump_json(indent=2) if json_out else render_formats(fr))
        return
    from relplan.text.ingest import render_inspect

    rep = ingest_mod.inspect_workspace(resolve_db(db))
    typer.echo(rep.model_dump_json(indent=2) if json_out else render_inspect(rep))
