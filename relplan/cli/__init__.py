"""relplan's command line: the only package that imports typer and rich.

One module per command group (planning, analyze, ingest, simulate, alerts, report), shared
options in `options`, the root command, its command table and its error handling in `root`,
the progress bar in `progress`, and the generated reference (docs/cli.md) in `reference`.
`app` (the typer app) and `main` (the console script) are re-exported here.
"""

from relplan.cli.root import app, main

__all__ = ["app", "main"]
