"""`relplan record`: sample a live /metrics endpoint into a scrape log (relplan/record.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from relplan.cli.progress import ProgressBar
from relplan.errors import ExitCode
from relplan.values import parse_duration


def record(
    url: Annotated[
        str,
        typer.Option(metavar="URL", help="The /metrics endpoint, e.g. http://vllm:8000/metrics."),
    ],
    out: Annotated[
        Path,
        typer.Option(
            metavar="FILE",
            help="Scrape log to append to (created if missing); ingest reads it as it is.",
        ),
    ],
    every: Annotated[
        str, typer.Option(metavar="DURATION", help="Time between scrapes, e.g. 5s.")
    ] = "5s",
    for_: Annotated[
        str,
        typer.Option("--for", metavar="DURATION", help="How long to record, e.g. 30m or 2h."),
    ] = "30m",
    timeout: Annotated[
        str, typer.Option(metavar="DURATION", help="Per-scrape request timeout.")
    ] = "10s",
) -> None:
    """Record a live /metrics endpoint: one `# SCRAPE <time>` block per scrape, appended to FILE.

    Shows a progress line on a terminal (quiet when piped). Ctrl-C stops cleanly: FILE keeps
    every complete scrape. Ingest the file afterwards with `relplan ingest FILE`.

    Example: relplan record --url http://vllm:8000/metrics --every 5s --for 30m --out m.scrape.txt
    """
    from relplan.record import record as record_metrics

    with ProgressBar("record (scrapes)") as bar:
        rec = record_metrics(
            url,
            out,
            every=parse_duration(every, "--every"),
            duration=parse_duration(for_, "--for"),
            timeout=parse_duration(timeout, "--timeout"),
            progress=bar if bar.active else None,
        )
    from relplan.text import record as record_text

    if rec.interrupted:
        typer.echo(record_text.interrupted(rec, out), err=True)
        raise typer.Exit(int(ExitCode.INTERRUPTED))
    typer.echo(str(out))
    typer.echo(record_text.recorded(rec), err=True)
