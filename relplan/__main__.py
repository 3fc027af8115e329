"""`python -m relplan` runs the CLI."""

from relplan.cli import main

main()
