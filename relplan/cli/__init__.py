"""relplan's command line: the only package that imports typer and rich.

One module per command group (planning, analyze, ingest, simulate, alerts, report), shared
options in `options`, the root and its error handling in `app`, the progress bar in
`progress`, and the generated reference (docs/cli.md) in `reference`.
"""

from relplan.cli.app import app, main

__all__ = ["app", "main"]
