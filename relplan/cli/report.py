"""`relplan report`: the HTML incident report (ingesting raw inputs first when given them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from relplan.cli.options import (
    DB_HELP,
    JsonFlag,
    RunFlags,
    input_flags,
    run_flags,
)
from relplan.values import fixed

if TYPE_CHECKING:
    from collections.abc import Callable
    from concurrent.futures import Executor
    from datetime import datetime

    from relplan.ingest.base import IngestOptions
    from relplan.report.files import ReportFiles


@input_flags
@run_flags
def report(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="A workspace file, or a directory (or file) of raw inputs to ingest first."
            " Default: the --db workspace."
        ),
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help=DB_HELP + " With a raw-input PATH, the inputs are ingested into it (else into"
            " a temporary workspace).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", metavar="FILE", help="HTML file to write. Default: reports/<run name>.html."
        ),
    ] = None,
    png: Annotated[
        Path | None,
        typer.Option("--png", metavar="DIR", help="Also write each chart as a PNG into DIR."),
    ] = None,
    svg: Annotated[
        Path | None,
        typer.Option("--svg", metavar="DIR", help="Also write each chart as an SVG into DIR."),
    ] = None,
    data_json: Annotated[
        Path | None,
        typer.Option(
            "--data-json",
            metavar="FILE",
            help="Also write the report's data model as JSON to FILE.",
        ),
    ] = None,
    json_out: JsonFlag = False,
    whatif: Annotated[
        bool,
        typer.Option(
            "--whatif/--no-whatif",
            help='Replay the incident under each control for "What would have helped"'
            " (one seed each; needs a proxy log and Ĉ).",
        ),
    ] = True,
    tz: Annotated[
        str,
        typer.Option(
            "--tz",
            metavar="ZONE",
            help="Time zone of the times shown (an IANA name such as Europe/Berlin).",
        ),
    ] = "UTC",
    *,
    inputs: IngestOptions,
    run: RunFlags,
) -> None:
    """The HTML incident report: verdict, charts and tables of every analysis, one offline page.

    A raw-input PATH is read with the same input flags as `relplan ingest` (--kind, --format,
    --at, --map, ...).

    Prints the path of the page written (with --json, one object naming every file written);
    its size goes to stderr.

    Example: relplan report sample_data/pulse-retry-cancel
    """
    from datetime import datetime, timezone

    from relplan.report import cache as page_cache

    when = datetime.now(timezone.utc).replace(microsecond=0)
    settings = {
        **inputs.as_dict(),
        **run.options(),
        "whatif": whatif,
        "tz": tz,
        "name": None if path is None else path.name,
    }
    key = page_cache.key_for(path, db=db, images=bool(png or svg), settings=settings)
    files = page_cache.serve(key, when, out, data_json) if key is not None else None
    if files is None:
        files = _make(path, db, out, png, svg, data_json, whatif, tz, inputs, run, when, key)
    if json_out:
        written = {
            "html": str(files.html),
            "html_bytes": files.html_bytes,
            "images": [str(p) for p in files.images],
            "data_json": None if files.json is None else str(files.json),
        }
        typer.echo(json.dumps(written, indent=2))
    else:
        typer.echo(str(files.html))
    extra = f"; {len(files.images)} image(s)" if files.images else ""
    typer.echo(f"relplan: report {fixed(files.html_bytes / 1e6, 2)} MB{extra}", err=True)


def _make(
    path: Path | None,
    db: Path | None,
    out: Path | None,
    png: Path | None,
    svg: Path | None,
    data_json: Path | None,
    whatif: bool,
    tz: str,
    inputs: IngestOptions,
    run: RunFlags,
    when: datetime,
    key: str | None,
) -> ReportFiles:
    """The report computed (a miss of the page cache, or a run it does not serve)."""
    import functools
    from contextlib import ExitStack

    from relplan.forking import cores, fork_ok

    with ExitStack() as stack:
        charts = None
        if cores() > 1 and fork_ok():
            from relplan.report.chart_worker import ChartWorker

            # Forked first, while this process has one thread. Told to prepare (no what-if
            # replay to run), it imports Altair on the other core while this one analyses,
            # then draws the charts (relplan/report/chart_worker.py).
            charts = ChartWorker()
            stack.callback(charts.close)
        ingest = None
        raw = _raw_inputs(path, db)
        if raw and cores() > 1 and fork_ok():
            from relplan.report.ingest_worker import IngestWorker

            # Forked before duckdb is imported (`workspace_cache` imports it); told the inputs
            # once they are known to be new, it ingests them while this process imports the
            # report's modules (relplan/report/ingest_worker.py).
            ingest = IngestWorker()
            stack.callback(ingest.close)
        pool = None
        warm = None
        if whatif:
            from relplan.whatif.replay import replay_pool, report_workers, warm_up

            # The replay's workers, forked from this process now, before duckdb, polars and
            # numpy are imported (relplan/whatif/replay.py): they import what a replay needs
            # at once when the inputs are new to the workspace cache (their replay is not
            # cached either), on the core this process leaves idle while it imports the
            # report's modules; else only once the replay is not found in its cache (`warm`,
            # called by the report on a miss it finds later).
            workers = report_workers()
            pool = stack.enter_context(replay_pool(workers + 1, warm=False))
            if pool is not None:
                warm = functools.partial(_warm, pool, workers, warm_up)
        new = None
        if raw and path is not None:
            from relplan.report import workspace_cache

            # the cache's key of inputs it does not hold (the report will ingest them)
            new = workspace_cache.missing(path, inputs)
        if new is not None and path is not None:
            if ingest is not None:
                ingest.ingest(path, inputs, new)
            if warm is not None:
                warm()
                warm = None
        elif ingest is not None:
            ingest.close()
            ingest = None
        if charts is not None and not whatif and ingest is None:
            # Nothing will run beside the analyses: it starts at once. Beside an ingest in
            # the ingest worker it would take that core's turns; the report tells it to
            # prepare when the analyses start (relplan/report/pipeline.py).
            charts.prepare()

        from relplan.analyses import AnalyzeOptions
        from relplan.cli.progress import ProgressBar
        from relplan.report import pipeline as report_mod
        from relplan.values import use_tz

        opts = AnalyzeOptions(**run.options())
        with use_tz(tz), ProgressBar("what would have helped (runs)") as bar:
            extras: dict[str, report_mod.ExtraSection] = {}
            if whatif:
                from relplan.whatif.for_report import report_whatif

                reopen = None
                if pool is not None:
                    from relplan.workspace import connect

                    # how a worker opens the report's workspace file to fit it there
                    reopen = functools.partial(connect, read_only=True)
                extras["whatif"] = lambda con, o: report_whatif(
                    con, o, progress=bar, pool=pool, reopen=reopen
                )
            return report_mod.make_report(
                path,
                db=db,
                out=out,
                png_dir=png,
                svg_dir=svg,
                json_path=data_json,
                opts=opts,
                inputs=inputs,
                extras=extras,
                generated_at=when,
                cache_key=key,
                on_new_inputs=warm,
                ingested=None if ingest is None else ingest.result,
                charts=charts,
            )


def _raw_inputs(path: Path | None, db: Path | None) -> bool:
    """Whether PATH names raw inputs that the report ingests into the workspace cache when
    the cache does not hold them: a PATH that exists and is not a workspace file, no --db.
    Known without importing DuckDB. An unreadable PATH says False: the report names it."""
    from relplan.errors import InputError
    from relplan.report.files import is_workspace_file

    if path is None or db is not None or not path.exists():
        return False
    try:
        return not (path.is_file() and is_workspace_file(path))
    except InputError:
        return False


def _warm(pool: Executor, workers: int, warm_up: Callable[[], None]) -> None:
    """Each worker imports what a replay needs (one `warm_up` each: an idle worker takes the
    next)."""
    for _ in range(workers):
        pool.submit(warm_up)
