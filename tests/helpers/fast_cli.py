"""typer's CliRunner with each app's click command built once per test process.

typer's `CliRunner.invoke(app, ...)` turns the typer app into click commands on every call
(`typer.main.get_command`): about 30 ms of CPU for relplan's whole command table, more than
many of the commands it then runs. This runner builds the command the first time it sees an
app and reuses it; the run itself is typer's (the same isolation, streams and Result).

Not for a test that changes a registry at run time (tests/test_ingest_recipe.py,
tests/test_ingest_registry.py, tests/test_analyses_registry.py,
tests/test_whatif_new_control.py): a built command reads the input formats' own flags
(relplan.cli.options.InputsCommand) and fills the registries' names into its help
(LazyHelpCommand) once, so a command built before the change would not show it.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

import typer.main
import typer.testing
from typer import Typer
from typer._click import Command

_BUILT: dict[int, tuple[Typer, Command]] = {}


def command(app: Typer) -> Command:
    """The click command of `app`, built on the first call for that app object."""
    known = _BUILT.get(id(app))
    if known is None or known[0] is not app:
        known = (app, typer.main.get_command(app))
        _BUILT[id(app)] = known
    return known[1]


class CliRunner(typer.testing.CliRunner):
    def invoke(self, app: Typer, *args: Any, **kwargs: Any) -> typer.testing.Result:
        with mock.patch.object(typer.testing, "_get_command", command):
            return super().invoke(app, *args, **kwargs)
