"""Options shared by several commands, declared once, and the flag-value helpers they use.

Value syntax (durations, times, SLOs) is relplan/values.py's; this module only names the flags.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from typer import _click as click
from typer.core import TyperCommand

from relplan.values import parse_duration, parse_time_flag, positive

DB_HELP = "Workspace file (default: $RELPLAN_DB or ./relplan.duckdb)."
TIME_HELP = "seconds from t0 (120, 2m), epoch seconds or RFC 3339 with an offset"

DbOption = Annotated[Path | None, typer.Option("--db", help=DB_HELP)]
JsonFlag = Annotated[
    bool, typer.Option("--json", help="Print one JSON object on stdout instead of tables.")
]
FromOption = Annotated[
    str | None, typer.Option("--from", metavar="TIME", help=f"Start: {TIME_HELP}.")
]
ToOption = Annotated[str | None, typer.Option("--to", metavar="TIME", help=f"End: {TIME_HELP}.")]
PhasesOption = Annotated[
    str | None,
    typer.Option(
        metavar="NAME=START:END,...",
        help="Phases in seconds from t0 or epoch seconds, e.g. base=0:120,pulse=120:227"
        " (overrides run.json).",
    ),
]
CapacityOption = Annotated[
    float | None, typer.Option(help="Capacity C^ in calls/s (overrides run.json).")
]
DeadlineOption = Annotated[
    str | None,
    typer.Option(
        metavar="DURATION",
        help="Client per-attempt deadline D, e.g. 120 or 2m (overrides run.json).",
    ),
]
DeliveryWindowOption = Annotated[
    str | None,
    typer.Option(
        metavar="DURATION",
        help="Delivery window W from planned arrival, e.g. 840s (overrides run.json).",
    ),
]
ReplicaLabelOption = Annotated[
    str | None,
    typer.Option(help="Metric label naming the replica (default: replica, pod or instance)."),
]
SloOption = Annotated[float, typer.Option(help="SLO, as 99.9 (percent) or 0.999.")]
ThresholdOption = Annotated[
    list[str] | None,
    typer.Option(
        "--threshold",
        "--thresholds",
        help="key=value, repeatable or comma-separated: preemption_rate, kv_usage, waiting,"
        " queue_slope, shortfall, retry_amplification, for_<signal> (durations as 90s, 2m).",
    ),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a scenario setting: key.path=value (repeatable)."),
]


def duration_flag(text: str | None, flag: str) -> float | None:
    """A duration flag's seconds; None when the flag was not given."""
    return None if text is None else parse_duration(text, flag)


def time_flag(text: str | None, flag: str) -> float | None:
    """A time flag (relative to t0 or absolute, see values.resolve_time); None when not given."""
    return None if text is None else parse_time_flag(text, flag)


def positive_flag(value: float | None, flag: str) -> float | None:
    return None if value is None else positive(value, flag)


# Help texts that list names owned by a heavy module (the analyses, the --fail-on findings)
# name a `{placeholder}`; LazyHelpCommand fills it in only when the command's parameters are
# used (its --help, its own run, the CLI reference), so `relplan --version` never imports them.


def _analysis_names() -> str:
    from relplan import analyses

    return ", ".join(analyses.ANALYSES)


def _finding_names() -> str:
    from relplan.analyses.findings import FAIL_ON

    return ", ".join(FAIL_ON)


LAZY_HELP: dict[str, Callable[[], str]] = {
    "{analyses}": _analysis_names,
    "{findings}": _finding_names,
}


class LazyHelpCommand(TyperCommand):
    """A command whose option help may name a LAZY_HELP placeholder."""

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        params = super().get_params(ctx)
        for p in params:
            text = getattr(p, "help", None)
            if text:
                for key, names in LAZY_HELP.items():
                    if key in text:
                        text = text.replace(key, names())
                p.help = text  # type: ignore[attr-defined]
        return params
