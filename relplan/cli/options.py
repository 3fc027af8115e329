"""Options shared by several commands, declared once, and the flag-value helpers they use.

The input flags of `relplan ingest` and `relplan report PATH` are one group: `@input_flags`
adds every one of them to a command and hands the command one `inputs: IngestOptions`
(relplan/ingest/base.py), so the two commands cannot drift apart (tests/test_cli_inputs.py).
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
from typer.core import TyperCommand

from relplan.errors import UsageError
from relplan.values import parse_duration, parse_instant, parse_time_flag, positive

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
# name a `{placeholder}`; LazyHelpCommand fills it in only when the command's parameters are
# used (its --help, its own run, the CLI reference), so `relplan --version` never imports them.


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


LAZY_HELP: dict[str, Callable[[], str]] = {
    "{analyses}": _analysis_names,
    "{findings}": _finding_names,
    "{formats}": _format_names,
    "{kinds}": _kind_names,
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


# The input flags (see the module docstring).

_KW = inspect.Parameter.KEYWORD_ONLY


def _flag(name: str, default: Any, annotation: Any) -> inspect.Parameter:
    return inspect.Parameter(name, _KW, default=default, annotation=annotation)


# One row per IngestOptions field a user sets. `{formats}` and `{kinds}` are filled in by
# LazyHelpCommand from the input-format registry (relplan/ingest/registry.py; a heavy import,
# done only for --help and the reference).
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
    _flag(
        "year",
        None,
        Annotated[int | None, typer.Option(help="Year of vLLM log timestamps that carry none.")],
    ),
    _flag(
        "at",
        None,
        Annotated[
            str | None,
            typer.Option(
                metavar="TIME",
                help="When a timestamp-less /metrics scrape was taken (RFC 3339 with an offset"
                " or epoch seconds), for files whose names carry no time.",
            ),
        ],
    ),
    _flag(
        "map_file",
        None,
        Annotated[
            Path | None,
            typer.Option(
                "--map",
                metavar="FILE",
                exists=True,
                dir_okay=False,
                help="TOML mapping file for any other gateway's log (docs/formats.md).",
            ),
        ],
    ),
    _flag(
        "call_key",
        None,
        Annotated[
            str | None,
            typer.Option(
                metavar="HEADER",
                help="Gateway logs without a per-call key: the header the caller sets per call"
                " (Idempotency-Key, X-Request-Id); its lines are the tries of one call.",
            ),
        ],
    ),
    _flag(
        "attempt_field",
        None,
        Annotated[
            str | None,
            typer.Option(
                metavar="FIELD",
                help="Gateway logs: the field giving the attempt number (x-stainless-retry-count).",
            ),
        ],
    ),
    _flag(
        "log_format",
        None,
        Annotated[
            str | None,
            typer.Option(
                "--log-format",
                "--nginx-format",
                metavar="STRING",
                help="The access log's format string: nginx `log_format` ($remote_addr ...,"
                " or an nginx.conf to read it from) or Envoy's (%START_TIME% ...).",
            ),
        ],
    ),
    _flag(
        "bench_start",
        None,
        Annotated[
            str | None,
            typer.Option(
                metavar="TIME",
                help="`vllm bench serve` results: wall-clock time of the first request"
                " (default: the run's `date`).",
            ),
        ],
    ),
    _flag(
        "call_id_field",
        "x-request-id",
        Annotated[str, typer.Option(help="Envoy JSON access logs: the field holding the call id.")],
    ),
]

INPUT_FLAGS = tuple(p.name for p in _PARAMS)


def build_inputs(
    *,
    kind: str | None = None,
    fmt: str | None = None,
    on_error: str = "fail",
    year: int | None = None,
    at: str | None = None,
    map_file: Path | None = None,
    call_key: str | None = None,
    attempt_field: str | None = None,
    log_format: str | None = None,
    bench_start: str | None = None,
    call_id_field: str = "x-request-id",
) -> IngestOptions:
    """IngestOptions from the flags' values, each checked and named in its error."""
    from relplan.ingest.base import IngestOptions
    from relplan.ingest.metrics.scrape_time import parse_at

    if on_error not in ("fail", "skip"):
        raise UsageError("--on-error", f"expected fail or skip, got {on_error!r}")
    return IngestOptions(
        kind=kind,
        fmt=fmt,
        on_error=on_error,
        year=year,
        at=None if at is None else parse_at(at),
        call_id_field=call_id_field,
        call_key=call_key,
        attempt_field=attempt_field,
        log_format=log_format,
        map_file=map_file,
        bench_start=None if bench_start is None else parse_instant(bench_start, "--bench-start"),
    )


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
    """Give a command the input flags; it receives them as `inputs: IngestOptions`.

    The command's own parameters keep their order; the input flags follow them. typer reads
    the signature set here (`__signature__`), so the flags exist in --help and the reference.
    """
    return _flag_group(func, "inputs", _PARAMS, build_inputs)


def _raw_inputs(**flags: Any) -> dict[str, Any]:
    return flags


def input_flags_without(*names: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """`@input_flags` less the flags `names` (parameter names), for a command whose own flag
    takes one of their option names (`relplan compare --format` is its output's format). The
    command receives the flags' values as `inputs: dict`, to pass to `build_inputs` when it
    ingests (`inputs_given` tells whether any differs from its default): building the options
    imports the ingest, which a command that may not ingest should not pay for."""
    params = [p for p in _PARAMS if p.name not in names]

    def decorate(func: Callable[..., None]) -> Callable[..., None]:
        return _flag_group(func, "inputs", params, _raw_inputs)

    return decorate


def inputs_given(flags: dict[str, Any]) -> bool:
    """Whether any input flag in `flags` (from `input_flags_without`) is not its default."""
    defaults = {p.name: p.default for p in _PARAMS}
    return any(v != defaults[k] for k, v in flags.items())


# The run-context flags: what a user knows about the run and would otherwise put in run.json.


@dataclass(frozen=True)
class RunFlags:
    """`--phases`, `--capacity`, `--deadline`, `--delivery-window`, checked; None when not
    given (run.json's value, or the one found in the data, then applies)."""

    phases: str | None = None
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
        phases=phases,
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
