"""The root of the typer app, its error handling in one place, and the command table.

Errors: a RelplanError (or a click usage error) becomes one line on stderr,
`relplan: error: ...`, with exit code 2 (1 for findings under --fail-on). Ctrl-C (and the
interrupt duckdb raises for it inside a query) becomes `relplan: interrupted; nothing stored`
with exit code 130: every write is one transaction or an atomic rename. A fault of the machine
(disk full, a read-only folder, a file that cannot be read: an OSError, or duckdb's IO and
permission errors) is one line naming the cause, exit 2. Anything else is a bug and keeps its
traceback (without locals, so data never lands in one). Messages carry names from the inputs
(paths, labels, ids): control characters in them are shown escaped (relplan/terminal.py).

Start-up: this module and the command modules import only typer, the standard library and
relplan's light modules; each command imports the heavy libraries (duckdb, polars, numpy,
altair) it needs inside its function, so `relplan --version`, `budget` and `pulse` load none.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import Annotated, Any, NoReturn

import typer
from typer._click import exceptions as click_exc
from typer.core import TyperGroup

from relplan import __version__
from relplan.errors import ExitCode, RelplanError
from relplan.terminal import visible_lines


class RelplanGroup(TyperGroup):
    """Turns expected failures into one line on stderr and an exit code, in one place."""

    def main(  # type: ignore[override]
        self, args: Sequence[str] | None = None, prog_name: str | None = None, **extra: Any
    ) -> Any:
        extra.pop("standalone_mode", None)
        try:
            rv = super().main(
                args=args, prog_name=prog_name or "relplan", standalone_mode=False, **extra
            )
        except click_exc.NoArgsIsHelpError as exc:  # bare `relplan` or `relplan alerts`
            typer.echo(exc.ctx.get_help())
            sys.exit(0)
        except RelplanError as exc:
            _fail(str(exc), exc.exit_code)
        except click_exc.ClickException as exc:  # usage errors included
            _fail(exc.format_message(), ExitCode.USAGE)
        except (Interrupted, typer.Abort, KeyboardInterrupt):
            _interrupted()
        except Fault as exc:
            _fail(str(exc), ExitCode.USAGE)
        sys.exit(rv if isinstance(rv, int) else 0)

    def invoke(self, ctx: Any) -> Any:
        # Here, not in main(): typer's main turns a KeyboardInterrupt into a silent exit 130.
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            raise Interrupted() from exc
        except Exception as exc:
            if is_interrupt(exc):
                raise Interrupted() from exc
            fault = fault_message(exc)
            if fault is not None:
                raise Fault(fault) from exc
            raise


class Interrupted(Exception):
    """Ctrl-C while a command ran (a KeyboardInterrupt, or duckdb's interrupt of a query)."""


class Fault(Exception):
    """The machine, not relplan, failed: disk full, no permission, an unreadable file."""


# duckdb's errors that come from the machine or the file rather than from relplan's queries.
_DUCKDB_FAULTS = ("IOException", "PermissionException", "OutOfMemoryException")


def fault_message(exc: BaseException) -> str | None:
    """One line naming the cause of a machine fault, None when `exc` is not one."""
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    duckdb = sys.modules.get("duckdb")
    kinds = tuple(k for n in _DUCKDB_FAULTS if isinstance(k := getattr(duckdb, n, None), type))
    error = getattr(duckdb, "Error", None)
    text = " ".join(str(exc).split())
    # A full disk can also surface as a failed commit (TransactionException), not an IO error.
    full = "No space left" in text or "File too large" in text or "out of disk" in text.lower()
    if (kinds and isinstance(exc, kinds)) or (
        full and isinstance(error, type) and isinstance(exc, error)
    ):
        from relplan.text.cli import machine_fault

        return machine_fault(text, full=full)
    return None


def is_interrupt(exc: BaseException) -> bool:
    """duckdb's answer to Ctrl-C inside a query: InterruptException, or a RuntimeError saying
    "Query interrupted" (older versions). duckdb is looked up, never imported, here."""
    duckdb = sys.modules.get("duckdb")
    interrupt = getattr(duckdb, "InterruptException", None) if duckdb is not None else None
    if interrupt is not None and isinstance(exc, interrupt):
        return True
    return isinstance(exc, RuntimeError) and "Query interrupted" in str(exc)


def _fail(message: str, code: int) -> NoReturn:
    kind = "finding" if code == ExitCode.FINDING else "error"
    typer.echo(f"relplan: {kind}: {visible_lines(message)}", err=True)
    sys.exit(int(code))


def _interrupted() -> NoReturn:
    typer.echo("relplan: interrupted; nothing stored", err=True)
    sys.exit(int(ExitCode.INTERRUPTED))


def _new_app() -> typer.Typer:
    return typer.Typer(
        cls=RelplanGroup,
        name="relplan",
        help="Offline trace analysis and reliability planning for LLM serving with vLLM.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_show_locals=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )


def _version(value: bool) -> None:
    if value:
        typer.echo(f"relplan {__version__}")
        raise typer.Exit(0)


def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Offline trace analysis and reliability planning for LLM serving with vLLM.

    Example: relplan budget --crashes 10 --concurrency 40
    """


# The command table, in the order of `relplan -h`: (name, module in relplan.cli, attribute,
# what it is). "group" is a typer app of subcommands; "lazy-help" a command whose option help
# names the format registry (options.LazyHelpCommand); "inputs" one that also takes every input
# format's own flags from the registry (options.InputsCommand). A module is imported only when its
# command is built, so `relplan budget` imports and builds budget alone (see main()).
COMMANDS: tuple[tuple[str, str, str, str], ...] = (
    ("budget", "planning", "budget", "command"),
    ("pulse", "planning", "pulse", "command"),
    ("analyze", "analyze", "analyze", "lazy-help"),
    ("simulate", "simulate", "simulate_app", "group"),
    ("ingest", "ingest", "ingest", "inputs"),
    ("inspect", "ingest", "inspect", "command"),
    ("record", "record", "record", "command"),
    ("alerts", "alerts", "alerts_app", "group"),
    ("report", "report", "report", "inputs"),
    ("whatif", "whatif", "whatif_app", "group"),
    ("drill", "drill", "drill", "command"),
    ("lab", "lab", "lab_app", "group"),
    ("compare", "compare", "compare", "inputs"),
)
COMMAND_NAMES = frozenset(name for name, *_ in COMMANDS)


def build_app(only: str | None = None) -> typer.Typer:
    """The root app with every command of COMMANDS, or with the command `only` alone (the
    same root, options and error handling; the other commands are neither imported nor
    built)."""
    new = _new_app()
    new.callback()(_root)
    for name, module, attr, kind in COMMANDS:
        if only is not None and name != only:
            continue
        target = getattr(importlib.import_module(f"relplan.cli.{module}"), attr)
        if kind == "group":
            new.add_typer(target, name=name)
        elif kind in ("lazy-help", "inputs"):
            from relplan.cli.options import InputsCommand, LazyHelpCommand

            cls = InputsCommand if kind == "inputs" else LazyHelpCommand
            new.command(name, cls=cls)(target)
        else:
            new.command(name)(target)
    return new


_full_app: typer.Typer | None = None


def __getattr__(name: str) -> typer.Typer:
    """`app`, the root with every command, built on first use (PEP 562)."""
    global _full_app
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _full_app is None:
        _full_app = build_app()
    return _full_app


def main() -> None:
    """The console script: a command named first (`relplan budget ...`) is built alone, so
    the cheap commands start in a fraction of the time the whole table takes; anything else
    (`-h`, `--version`, a typo) gets the whole table."""
    args = sys.argv[1:]
    if args == ["--version"]:
        build_app(only="")()  # the root's eager --version exits before any command is needed
    build_app(args[0] if args and args[0] in COMMAND_NAMES else None)()
