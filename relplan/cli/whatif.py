"""`relplan whatif`: replay the incident under each control and hand over the settings;
`relplan whatif fit` writes the fitted scenario."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from relplan.cli.options import (
    CapacityOption,
    DbOption,
    DeadlineOption,
    JsonFlag,
    LazyHelpCommand,
    PhasesOption,
    duration_flag,
)
from relplan.cli.progress import ProgressBar


class _WhatIfGroup(TyperGroup):
    """`relplan whatif [OPTIONS]` runs the replay; `fit` is a subcommand."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        words = [a for a in args if not a.startswith("-")]
        if not (words and words[0] in self.commands) and not any(
            a in ("-h", "--help") for a in args
        ):
            args = ["run", *args]
        return super().parse_args(ctx, args)


whatif_app = typer.Typer(
    cls=_WhatIfGroup,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_show_locals=False,
)

ProfileOption = Annotated[
    str | None,
    typer.Option(help="Engine profile (name or .toml) when the data cannot give step costs."),
]
RetriesOption = Annotated[
    int | None, typer.Option("--max-retries", help="Client retries (overrides the fit).")
]
BackoffOption = Annotated[
    str | None,
    typer.Option(
        "--backoff",
        metavar="MIN:MAX",
        help="Client backoff in seconds, e.g. 0.25:3 (overrides the fit).",
    ),
]


def _flags(deadline: str | None, retries: int | None, backoff: str | None) -> Any:
    from relplan.errors import UsageError
    from relplan.whatif.fit import ClientFlags

    lo = hi = None
    if backoff is not None:
        try:
            a, b = backoff.split(":", 1)
            lo, hi = float(a), float(b)
        except ValueError:
            raise UsageError(
                "--backoff", f"expected MIN:MAX seconds such as 0.25:3, got {backoff!r}"
            ) from None
        if lo < 0 or hi < lo:
            raise UsageError("--backoff", f"expected 0 <= MIN <= MAX, got {backoff!r}")
    if retries is not None and retries < 0:
        raise UsageError("--max-retries", f"must be 0 or more, got {retries}")
    return ClientFlags(
        deadline_s=duration_flag(deadline, "--deadline"),
        max_retries=retries,
        backoff_min_s=lo,
        backoff_max_s=hi,
    )


def _analyze_opts(phases: str | None) -> Any:
    """The incident's phases as given (`--phases`, over run.json and the detected overload)."""
    if phases is None:
        return None
    from relplan.analyses import AnalyzeOptions
    from relplan.values import parse_phases

    return AnalyzeOptions(phases=parse_phases(phases))


@whatif_app.callback()
def _whatif() -> None:
    """What would have kept us up: replay the incident under each control.

    `relplan whatif --db FILE` fits the incident, checks the fit, replays each control over
    seeds and prints the settings for the best; `relplan whatif fit --db FILE --out
    scenario.toml` writes the fitted scenario to read and edit.

    Example: relplan whatif --db incident.duckdb --seeds 3
    """


@whatif_app.command("run", cls=LazyHelpCommand)
def whatif_run(
    db: DbOption = None,
    seeds: Annotated[int, typer.Option(help="Seeds per control (1..N).")] = 3,
    jobs: Annotated[int, typer.Option(help="Parallel processes.")] = 2,
    control: Annotated[
        list[str] | None,
        typer.Option(
            "--control",
            metavar="NAME",
            help="Replay only these controls (repeatable or comma-separated): {controls}.",
        ),
    ] = None,
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            "--scenario",
            metavar="FILE",
            help="Also replay a scenario file's client, proxy and engine settings (repeatable).",
        ),
    ] = None,
    keep: Annotated[
        Path | None,
        typer.Option(
            "--keep", metavar="DIR", help="Keep the fitted scenario and its calls in DIR."
        ),
    ] = None,
    profile: ProfileOption = None,
    capacity: CapacityOption = None,
    deadline: DeadlineOption = None,
    phases: PhasesOption = None,
    max_retries: RetriesOption = None,
    backoff: BackoffOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Fit the incident, check the fit, replay every control over seeds; print the table and
    the settings for the best controls.

    Example: relplan whatif --db incident.duckdb --seeds 3 --jobs 2
    """
    from relplan import workspace
    from relplan.text.whatif import render_whatif
    from relplan.whatif.run import WhatIfOptions, whatif

    opts = WhatIfOptions(
        seeds=seeds,
        jobs=max(1, jobs),
        only=_split(control),
        scenario_files=list(scenario or []),
        flags=_flags(deadline, max_retries, backoff),
        profile=profile,
        capacity=capacity,
    )
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
    with (
        workspace.open_workspace(workspace.resolve_db(db), read_only=True) as con,
        ProgressBar("whatif (runs)") as bar,
    ):
        result = whatif(con, opts, work_dir=keep, progress=bar, analyze_opts=_analyze_opts(phases))
    typer.echo(
        json.dumps(result.model_dump(mode="json"), indent=2) if json_out else render_whatif(result)
    )


@whatif_app.command("fit")
def whatif_fit(
    out: Annotated[
        Path, typer.Option("--out", metavar="FILE", help="Scenario file to write (.toml).")
    ],
    db: DbOption = None,
    profile: ProfileOption = None,
    capacity: CapacityOption = None,
    deadline: DeadlineOption = None,
    phases: PhasesOption = None,
    max_retries: RetriesOption = None,
    backoff: BackoffOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Fit the incident and write the replay scenario (and its calls, FILE's stem + .calls.jsonl).

    Example: relplan whatif fit --db incident.duckdb --out scenario.toml
    """
    from relplan import workspace
    from relplan.errors import UsageError
    from relplan.text.whatif import render_fit
    from relplan.whatif.fit import fit_incident

    if out.suffix != ".toml":
        raise UsageError("--out", f"expected a .toml file, got {out}")
    if out.is_dir():
        raise UsageError("--out", f"{out} is a directory; give a file such as {out}/scenario.toml")
    with workspace.open_workspace(workspace.resolve_db(db), read_only=True) as con:
        fitted = fit_incident(
            con,
            out,
            flags=_flags(deadline, max_retries, backoff),
            profile=profile,
            capacity=capacity,
            opts=_analyze_opts(phases),
        )
    if json_out:
        payload = {
            "scenario": str(out),
            "calls": str(fitted.calls_path),
            "fit": [p.model_dump(mode="json") for p in fitted.provenance],
        }
        typer.echo(json.dumps(payload, indent=2))
    else:
        typer.echo(render_fit(fitted.provenance))
        typer.echo(f"\nwrote {out} and {fitted.calls_path}")


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for item in values or [] for v in item.split(",") if v.strip()]
