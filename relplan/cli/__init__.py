"""relplan's command line: the only package that imports typer and rich.

One module per command group (planning, analyze, ingest, simulate, alerts, report), shared
options in `options`, the root command, its command table and its error handling in `root`,
the progress bar in `progress`, and the generated reference (docs/cli.md) in `reference`.
`app` (the typer app with every command, built on first use) and `main` (the console script)
are re-exported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from relplan.cli.root import main

if TYPE_CHECKING:
    from relplan.cli.root import app

__all__ = ["app", "main"]


def __getattr__(name: str) -> object:
    if name == "app":  # built on first use: `relplan budget` builds its own command alone
        from relplan.cli import root

        return root.app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
