"""`relplan compare`: runs side by side, differences with noise bands, and a CI gate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from relplan.cli.options import input_flags_but_format
from relplan.errors import FindingError, UsageError

if TYPE_CHECKING:
    from relplan.ingest.base import IngestOptions


@input_flags_but_format
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
) -> None:
    """Compare incidents, runs or builds: verdicts, every shared figure's difference, its
    direction and whether it is beyond noise.

    Input folders are ingested with the input flags (all but `--format`, which is the
    output's here), as `relplan ingest` would.

    Example: relplan compare before.duckdb after.duckdb --fail-if "on_time.hold < -5pt"
    """
    from relplan.compare import compare as run_compare
    from relplan.compare.render import render_comparison, render_figure_list

    if fmt not in ("text", "json"):
        raise UsageError("--format", f"expected text or json, not {fmt!r}")
    if list_figures and not sides:
        typer.echo(render_figure_list())
        return
    result = run_compare(list(sides or []), fail_if=fail_if or [], inputs=inputs)
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
