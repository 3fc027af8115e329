"""`relplan ingest` (files or a live Prometheus pull) and `relplan inspect`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from relplan.cli.options import DbOption, JsonFlag
from relplan.cli.progress import ProgressBar
from relplan.errors import UsageError
from relplan.values import parse_duration, parse_instant


def ingest(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Files or directories to ingest.", show_default=False),
    ] = None,
    db: DbOption = None,
    kind: Annotated[
        str | None, typer.Option(help="Force the kind: proxy, engine, metrics or manifest.")
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="Force the format: jsonl, csv, parquet, openmetrics, scrape, query_range,"
            " vllm_log, envoy, run_json.",
        ),
    ] = None,
    on_error: Annotated[
        str,
        typer.Option(
            "--on-error",
            help="fail: stop at the first bad record; skip: keep"
            " going and store bad records in rejects.",
        ),
    ] = "fail",
    year: Annotated[
        int | None, typer.Option(help="Year of vLLM log timestamps that carry none.")
    ] = None,
    call_id_field: Annotated[
        str, typer.Option(help="Envoy access logs: the field holding the call id.")
    ] = "x-request-id",
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
    json_out: JsonFlag = False,
) -> None:
    """Load proxy logs, engine traces, metrics and run manifests into the workspace.

    The kind and format are detected from the content; one transaction per call, so a bad
    record or a crash leaves the workspace as it was. Re-ingesting the same content adds
    nothing.

    Live pull: relplan ingest --prometheus-url http://prometheus:9090 --match 'vllm:.*'
    --start 2025-11-30T00:00:00Z --end 2025-11-30T01:00:00Z --step 5s

    Example: relplan ingest sample_data/pulse-retry-cancel --db incident.duckdb
    """
    from relplan import ingest as ingest_mod
    from relplan.workspace import resolve_db

    if on_error not in ("fail", "skip"):
        raise UsageError("--on-error", f"expected fail or skip, got {on_error!r}")
    opts = ingest_mod.IngestOptions(
        kind=kind, fmt=fmt, on_error=on_error, year=year, call_id_field=call_id_field
    )
    target = resolve_db(db)
    if prometheus_url is not None:
        if paths:
            raise UsageError("--prometheus-url", "give either PATHs or --prometheus-url, not both")
        if start is None or end is None:
            raise UsageError("--start", "a live pull needs --start and --end")
        t_start = parse_instant(start, "--start")
        t_end = parse_instant(end, "--end")
        rep = ingest_mod.pull_prometheus(
            target, prometheus_url, match, t_start, t_end, parse_duration(step, "--step"), opts
        )
    else:
        if not paths:
            raise UsageError("PATH", "give files or directories to ingest (or --prometheus-url)")
        with ProgressBar("ingest", bytes_=True) as bar:
            rep = ingest_mod.ingest_paths(target, paths, opts, bar if bar.active else None)
    typer.echo(rep.model_dump_json(indent=2) if json_out else ingest_mod.render_ingest(rep))


def inspect(db: DbOption = None, json_out: JsonFlag = False) -> None:
    """What the workspace holds: sources, spans, counts, rejected rows, metrics, manifests.

    Example: relplan inspect --db incident.duckdb
    """
    from relplan import ingest as ingest_mod
    from relplan.workspace import resolve_db

    rep = ingest_mod.inspect_workspace(resolve_db(db))
    typer.echo(rep.model_dump_json(indent=2) if json_out else ingest_mod.render_inspect(rep))
