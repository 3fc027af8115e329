"""`relplan compare`: runs side by side, differences with noise bands, and a CI gate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from relplan.cli.options import (
    RunFlags,
    build_inputs,
    input_flags_without,
    inputs_given,
    run_flags,
)
from relplan.errors import FindingError, UsageError


# --format is the comparison's output format here; --kind (forcing every file's kind) has
# no use on a folder of several kinds, and its help would load the ingest registry.
@input_flags_without("fmt", "kind")
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
    inputs: dict[str, Any],
    run: RunFlags,
) -> None:
    """Compare incidents, runs or builds: verdicts, every shared figure's difference, its
    direction and whether it is beyond noise.

    The input flags (those of relplan ingest but --format and --kind) apply to the sides that are input
    folders, ingested for the comparison; the run flags to every side, as in relplan analyze.

    Example: relplan compare before.duckdb after.duckdb --fail-if "on_time.hold < -5pt"
    """
    from relplan.compare import compare as run_compare
    from relplan.compare.render import render_comparison, render_figure_list

    if fmt not in ("text", "json"):
        raise UsageError("--format", f"expected text or json, not {fmt!r}")
    if list_figures and not sides:
        typer.echo(render_figure_list())
        return
    opts = None  # the defaults: the analyses are imported only if a run is not cached
    if any(v is not None for v in run.options().values()):
        from relplan.analyses import AnalyzeOptions

        opts = AnalyzeOptions(**run.options())
    ingest = build_inputs(**inputs) if inputs_given(inputs) else None  # None: the defaults
    result = run_compare(list(sides or []), opts, fail_if=fail_if or [], ingest=ingest)
    if list_figures:
        typer.echo(render_figure_list([r.name for r in result.figures]))
        return
    if html is not None:
        from relplan.compare.page import write_page

        write_page(result, html)
    typer.echo(result.model_dump_json(indent=2) if fmt == "json" else render_comparison(result))
    if result.failed:
        raise FindingError(
            "; ".join(f"{g.expr} ({g.side}: {g.measured})" for g in result.gate if g.failed)
        )
