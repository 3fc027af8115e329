"""Options shared by several commands, declared once, and the flag-value helpers they use.

The input flags of `relplan ingest` and `relplan report PATH` are one group: `@input_flags`
adds every one of them to a command and hands the command one `inputs: IngestOptions`
(relplan/ingest/base.py), so the two commands cannot drift apart (tests/test_cli_inputs.py).
Only `--kind`, `--format` and `--on-error` are named here; every other input flag is declared
by the input format that reads it (relplan/ingest/adapter.InputOption) and made into a flag
from the registry by `InputsCommand`.
The run-context flags of `relplan analyze` and `relplan report` (`--phases`, `--capacity`,
`--deadline`, `--delivery-window`) are another: `@run_flags` hands the command `run: RunFlags`.

Value syntax (durations, times, SLOs) is relplan/values.py's; this module only names the flags.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer import _click as click
from typer._click.globals import get_current_context
from typer.core import TyperCommand

from relplan.errors import UsageError
from relplan.values import (
    PhaseBounds,
    parse_duration,
    parse_phases,
    parse_time_flag,
    positive,
)

if TYPE_CHECKING:
    from relplan.ingest.base import IngestOptions

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
# name a `{placeholder}`; LazyHelpCommand fills it in only when the command's help is shown (its
# --help, the CLI reference), so neither `relplan --version` nor the command's own run imports
# them (the input-format registry alone imports every adapter, pyarrow included).


def _analysis_names() -> str:
    from relplan import analyses

    return ", ".join(analyses.ANALYSES)


def _format_names() -> str:
    from relplan.ingest import registry

    return registry.format_names()


def _kind_names() -> str:
    from relplan.ingest import registry

    return registry.kind_names()


def _finding_names() -> str:
    from relplan.analyses.findings import FAIL_ON

    return ", ".join(FAIL_ON)


def _control_names() -> str:
    from relplan.whatif.controls import control_names

    return ", ".join(control_names())


LAZY_HELP: dict[str, Callable[[], str]] = {
    "{analyses}": _analysis_names,
    "{controls}": _control_names,
    "{findings}": _finding_names,
    "{formats}": _format_names,
    "{kinds}": _kind_names,
}


class LazyHelpCommand(TyperCommand):
    """A command whose option help may name a LAZY_HELP placeholder."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        for p in self.get_params(ctx):
            text = getattr(p, "help", None)
            if text:
                for key, names in LAZY_HELP.items():
                    if key in text:
                        text = text.replace(key, names())
                p.help = text  # type: ignore[attr-defined]
        super().format_help(ctx, formatter)


# The input flags (see the module docstring).

_KW = inspect.Parameter.KEYWORD_ONLY


def _flag(name: str, default: Any, annotation: Any) -> inspect.Parameter:
    return inspect.Parameter(name, _KW, default=default, annotation=annotation)


# The general input flags, which every format honours. `{formats}` and `{kinds}` are filled in
# by LazyHelpCommand from the input-format registry (relplan/ingest/registry.py; a heavy
# import, done only for --help and the reference).
_PARAMS = [
    _flag(
        "kind",
        None,
        Annotated[str | None, typer.Option(help="Force the kind: {kinds}.")],
    ),
    _flag(
        "fmt",
        None,
        Annotated[str | None, typer.Option("--format", help="Force the format: {formats}.")],
    ),
    _flag(
        "on_error",
        "fail",
        Annotated[
            str,
            typer.Option(
                "--on-error",
                help="fail: stop at the first bad record; skip: keep going and store bad"
                " records in rejects.",
            ),
        ],
    ),
]

GENERAL_FLAGS = tuple(p.name for p in _PARAMS)
# Where InputsCommand leaves the values of the formats' own flags for the command.
_OWN_VALUES = "relplan.input_options"
# Set (to the command) when a command line names none of the formats' own flags.
_WITHOUT_OWN = "relplan.without_format_flags"


def input_flag_names() -> tuple[str, ...]:
    """The parameter names of every input flag: the general ones, then each format's own
    (declared by its adapter, relplan/ingest/adapter.InputOption)."""
    from relplan.ingest import registry

    return GENERAL_FLAGS + tuple(registry.input_options())


def build_inputs(
    *,
    kind: str | None = None,
    fmt: str | None = None,
    on_error: str = "fail",
    own: dict[str, Any] | None = None,
) -> IngestOptions:
    """IngestOptions from the flags' values, each checked and named in its error; `own` holds
    the formats' own flags by field (a value given is converted by its declaration)."""
    from relplan.ingest import registry
    from relplan.ingest.base import IngestOptions

    if on_error not in ("fail", "skip"):
        raise UsageError("--on-error", f"expected fail or skip, got {on_error!r}")
    declared = registry.input_options() if own else {}  # none given: no reader imported
    values: dict[str, Any] = {}
    for name, value in (own or {}).items():
        o = declared[name]
        if value is not None and value != o.default:  # a flag given
            values[name] = o.convert(value) if o.convert is not None else value
    return IngestOptions(kind=kind, fmt=fmt, on_error=on_error, **values)


def _own_params() -> list[click.Parameter]:
    """The formats' own input flags as click parameters, made by typer from their declarations
    (so they read and show as every other flag does)."""
    from typer.main import get_command

    from relplan.ingest import registry

    params = []
    for o in registry.input_options().values():
        info = typer.Option(*o.names, help=o.help, metavar=o.metavar)
        if o.exists:
            info = typer.Option(
                *o.names, help=o.help, metavar=o.metavar, exists=True, dir_okay=False
            )
        annotation = o.type if o.default is not None else o.type | None
        params.append(_flag(o.field, o.default, Annotated[annotation, info]))

    def holder(**values: Any) -> None:
        """Only carries the signature."""

    holder.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    app = typer.Typer(add_completion=False)
    app.command()(holder)
    return list(get_command(app).params)


class InputsCommand(LazyHelpCommand):
    """A command given the input flags by `@input_flags`: the formats' own flags come from the
    input-format registry when the command's parameters are first used (its --help, the CLI
    reference, a run naming a flag the command does not declare itself), so loading the CLI
    imports no reader. A run naming only the command's own flags (`relplan compare A.duckdb
    B.duckdb`) parses without them: the registry's discovery imports every reader module
    (~40 ms of such a run's start)."""

    _own: list[click.Parameter] | None = None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if self._own is None and not self._names_other_flags(ctx, args):
            ctx.meta[_WITHOUT_OWN] = self
        return super().parse_args(ctx, args)

    def _names_other_flags(self, ctx: click.Context, args: list[str]) -> bool:
        """Whether `args` holds anything shaped like a flag (`-x`, `--x`, `--x=v`) that is not
        one of this command's own, help included; after `--` only arguments follow."""
        own = {o for p in super().get_params(ctx) for o in (*p.opts, *p.secondary_opts)}
        own -= set(ctx.help_option_names)
        for a in args:
            if a == "--":
                return False
            if a.startswith("-") and a != "-" and a.split("=", 1)[0] not in own:
                return True
        return False

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        if self._own is None and ctx.meta.get(_WITHOUT_OWN) is not self:
            self._own = _own_params()
            self.params = [*self.params, *self._own]
        return super().get_params(ctx)

    def invoke(self, ctx: click.Context) -> Any:
        own = {p.name for p in self._own or () if p.name}
        ctx.meta[_OWN_VALUES] = {n: ctx.params.pop(n) for n in list(ctx.params) if n in own}
        return super().invoke(ctx)


def _flag_group(
    func: Callable[..., None],
    param: str,
    params: list[inspect.Parameter],
    build: Callable[..., Any],
) -> Callable[..., None]:
    """Replace `func`'s parameter `param` by the flags `params`; the command calls `func` with
    `param=build(**those flags' values)`. Groups stack (`@input_flags` over `@run_flags`)."""
    # `inputs: IngestOptions` names a type imported only for type checking (the ingest
    # package is heavy); the other annotations are evaluated as typer would.
    sig = inspect.signature(func, eval_str=True, locals={"IngestOptions": object})
    if param not in sig.parameters:
        raise TypeError(f"{func.__name__} takes no `{param}` parameter")
    own = [p for p in sig.parameters.values() if p.name != param]
    names = tuple(p.name for p in params)

    def command(**values: Any) -> None:
        flags = {name: values.pop(name) for name in names}
        func(**values, **{param: build(**flags)})

    command.__name__ = func.__name__
    command.__qualname__ = func.__qualname__
    command.__doc__ = func.__doc__
    command.__module__ = func.__module__
    command.__signature__ = sig.replace(parameters=[*own, *params])  # type: ignore[attr-defined]
    return command


def input_flags(func: Callable[..., None]) -> Callable[..., None]:
    """Give a command the input flags; it receives them as `inputs: IngestOptions`. Register
    it with `cls=InputsCommand` (relplan/cli/root.py), which adds the formats' own flags.

    The command's own parameters keep their order; the input flags follow them. typer reads
    the signature set here (`__signature__`), so the flags exist in --help and the reference.
    """
    return _input_flags(func, _PARAMS)


def input_flags_but_format(func: Callable[..., None]) -> Callable[..., None]:
    """`@input_flags` for a command whose own `--format` is its output's (`relplan
    compare`): every input flag but the forced input format."""
    return _input_flags(func, [p for p in _PARAMS if p.name != "fmt"])


def _input_flags(func: Callable[..., None], params: list[inspect.Parameter]) -> Callable[..., None]:
    def build(**general: Any) -> IngestOptions:
        own = get_current_context().meta.get(_OWN_VALUES)
        if own is None:
            raise TypeError(f"{func.__name__} takes input flags: register it with InputsCommand")
        return build_inputs(**general, own=own)

    return _flag_group(func, "inputs", params, build)


# The run-context flags: what a user knows about the run and would otherwise put in run.json.


@dataclass(frozen=True)
class RunFlags:
    """`--phases`, `--capacity`, `--deadline`, `--delivery-window`, checked; None when not
    given (run.json's value, or the one found in the data, then applies)."""

    phases: list[PhaseBounds] | None = None
    capacity: float | None = None
    deadline: float | None = None
    delivery_window: float | None = None

    def options(self) -> dict[str, Any]:
        """The AnalyzeOptions fields these flags set."""
        return {
            "phases": self.phases,
            "capacity": self.capacity,
            "deadline": self.deadline,
            "delivery_window": self.delivery_window,
        }


def build_run_flags(
    *,
    phases: str | None = None,
    capacity: float | None = None,
    deadline: str | None = None,
    delivery_window: str | None = None,
) -> RunFlags:
    """RunFlags from the flags' text, each checked and named in its error."""
    return RunFlags(
        phases=None if phases is None else parse_phases(phases),
        capacity=positive_flag(capacity, "--capacity"),
        deadline=duration_flag(deadline, "--deadline"),
        delivery_window=duration_flag(delivery_window, "--delivery-window"),
    )


_RUN_PARAMS = [
    _flag("phases", None, PhasesOption),
    _flag("capacity", None, CapacityOption),
    _flag("deadline", None, DeadlineOption),
    _flag("delivery_window", None, DeliveryWindowOption),
]
RUN_FLAGS = tuple(p.name for p in _RUN_PARAMS)


def run_flags(func: Callable[..., None]) -> Callable[..., None]:
    """Give a command the run-context flags; it receives them as `run: RunFlags`
    (`relplan analyze` and `relplan report` share them, tests/test_cli_inputs.py)."""
    return _flag_group(func, "run", _RUN_PARAMS, build_run_flags)
