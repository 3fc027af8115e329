"""docs/cli.md, generated from the typer app: every command's `--help`, and the value syntax.

    python -m relplan.cli.reference --write     # rewrite docs/cli.md (and whatif's controls)
    python -m relplan.cli.reference             # print it

tests/test_cli_reference.py regenerates it and fails when docs/cli.md differs. The help text is
what `relplan ... --help` prints, at a fixed width of 100 columns so the file does not depend on
the terminal; the value syntax is the one in relplan/values.py's docstring.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

from typer import _click as click
from typer.core import TyperGroup
from typer.main import get_command

from relplan import values
from relplan.cli.root import app
from relplan.errors import ExitCode
from relplan.text import cli as words

WIDTH = 100
DOC = Path("docs/cli.md")
WHATIF_DOC = Path("docs/whatif.md")  # its Controls table (relplan/text/whatif.py)
REGENERATE = "python -m relplan.cli.reference --write"


def _value_syntax() -> str:
    """The bullet list of relplan/values.py's docstring, after 'The syntax every flag accepts'."""
    doc = values.__doc__ or ""
    _, _, rest = doc.partition("The syntax every flag accepts")
    lines = rest.splitlines()[1:]
    return "\n".join(lines).strip()


def _commands(
    cmd: click.Command, ctx: click.Context
) -> Iterator[tuple[click.Command, click.Context]]:
    yield cmd, ctx
    if isinstance(cmd, TyperGroup):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                sub_ctx = click.Context(
                    sub, info_name=name, parent=ctx, terminal_width=WIDTH, max_content_width=WIDTH
                )
                yield from _commands(sub, sub_ctx)


def render_reference() -> str:
    root = get_command(app)
    ctx = click.Context(
        root,
        info_name="relplan",
        terminal_width=WIDTH,
        max_content_width=WIDTH,
        **root.context_settings,
    )
    parts = [
        *words.reference_head(REGENERATE, _value_syntax()),
        *words.exit_codes(
            int(ExitCode.OK), int(ExitCode.FINDING), int(ExitCode.USAGE), int(ExitCode.INTERRUPTED)
        ),
        "## Commands",
    ]
    for cmd, cmd_ctx in _commands(root, ctx):
        parts += ["", f"### {cmd_ctx.command_path}", "", "```text", cmd.get_help(cmd_ctx), "```"]
    return "\n".join(parts) + "\n"


def main(argv: list[str]) -> int:
    text = render_reference()
    if argv == ["--write"]:
        DOC.write_text(text, encoding="utf-8")
        print(words.wrote(DOC))
        from relplan.text.whatif import with_controls_table

        doc = WHATIF_DOC.read_text(encoding="utf-8")
        WHATIF_DOC.write_text(with_controls_table(doc), encoding="utf-8")
        print(words.wrote(WHATIF_DOC, "the controls table"))
    elif not argv:
        sys.stdout.write(text)
    else:
        print(f"usage: {REGENERATE.replace(' --write', '')} [--write]", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
