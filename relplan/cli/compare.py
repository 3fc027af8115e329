"""`relplan compare`: runs side by side, differences with noise bands, and a CI gate."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from relplan.cli.options import RunFlags, input_flags_but_format, run_flags
from relplan.errors import FindingError, UsageError

if TYPE_CHECKING:
    from relplan.ingest.base import IngestOptions

# Compare's numpy work is a few thousand bootstrap draws per run, no linear algebra, so
# OpenBLAS's thread pool (a thread per core, started when numpy is first imported) is not
# needed: one thread saves ~35 ms of a new process's start and ~0.1 s of its CPU time on two
# cores (docs/benchmarks.md, Compare). Set before numpy is imported; a value given is kept.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "1")


@input_flags_but_format
@run_flags
def compare(
    sides: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="SIDE...",
            help="Workspaces, input folders, drill or simulate outputs; A1,A2 groups runs"
            " into one side, a folder of runs is one side. The first is the baseline.",
        ),
    ] = None,
    fail_if: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-if",
            metavar="EXPR",
            help='Exit 1 when this holds beyond noise, e.g. "on_time.hold < -5pt" (repeatable;'
            " docs/compare.md).",
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", metavar="text|json", help="Output format.")
    ] = "text",
    html: Annotated[
        Path | None,
        typer.Option("--html", metavar="FILE", help="Also write the comparison page to FILE."),
    ] = None,
    list_figures: Annotated[
        bool,
        typer.Option("--list-figures", help="List the figure names (of these sides, if given)."),
    ] = False,
    *,
    inputs: IngestOptions,
    run: RunFlags,
) -> None:
    """Compare incidents, runs or builds: verdicts, every shared figure's difference, its
    direction and whether it is beyond noise.

    Input folders are ingested with the input flags (all but `--format`, which is the
    output's here), as `relplan ingest` would; the run flags apply to every side, as in
    relplan analyze.

    Example: relplan compare before.duckdb after.duckdb --fail-if "on_time.hold < -5pt"
    """
    os.environ.setdefault(*BLAS_THREADS)
    from relplan.compare import compare as run_compare
    from relplan.compare.figures import FAMILIES, NOT_IN_ANALYSES
    from relplan.text.compare import render_comparison, render_figure_list

    if fmt not in ("text", "json"):
        raise UsageError("--format", f"expected text or json, not {fmt!r}")
    if list_figures and not sides:
        typer.echo(render_figure_list(FAMILIES, NOT_IN_ANALYSES))
        return
    opts = None  # the defaults: the analyses are imported only if a run is not cached
    if any(v is not None for v in run.options().values()):
        from relplan.analyses import AnalyzeOptions

        opts = AnalyzeOptions(**run.options())
    result = run_compare(list(sides or []), opts=opts, fail_if=fail_if or [], inputs=inputs)
    if list_figures:
        typer.echo(render_figure_list(FAMILIES, NOT_IN_ANALYSES, [r.name for r in result.figures]))
        return
    if html is not None:
        from relplan.compare.page import write_page

        write_page(result, html)
    typer.echo(
        result.model_dump_json(indent=2) if fmt == "json" else render_comparison(result, FAMILIES)
    )
    unjudged = [g for g in result.gate if not g.judged]
    if unjudged:
        typer.echo(
            "relplan: note: not judged, no noise band: "
            + "; ".join(f"{g.expr} ({g.side}: {g.measured})" for g in unjudged)
            + " (give several runs a side, e.g. seeds, for a spread)",
            err=True,
        )
    if result.failed:
        raise FindingError(
            "; ".join(f"{g.expr} ({g.side}: {g.measured})" for g in result.gate if g.failed)
        )
