"""The CLI's own words: the opening of docs/cli.md (relplan/cli/reference.py arranges the
rest, every command's `--help`), the lines `python -m relplan.cli.reference` prints, and the
one line for a machine fault (relplan/cli/root.py). Plain values in: this package never
imports the CLI."""

from __future__ import annotations

from pathlib import Path


def reference_head(regenerate: str, value_syntax: str) -> list[str]:
    """docs/cli.md up to its exit codes: how it is made, `--json`, the value syntax."""
    return [
        "# CLI reference",
        "",
        f"Generated from the program by `{regenerate}`; do not edit by hand",
        "(tests/test_cli_reference.py fails when this file and the program differ).",
        "",
        "Every command takes `-h` or `--help`; bare `relplan` prints the list of commands.",
        "`--json` always means: print one JSON object on stdout instead of tables.",
        "",
        "## Values",
        "",
        "Every flag of a kind accepts the same syntax:",
        "",
        value_syntax,
        "",
    ]


def exit_codes(ok: int, finding: int, usage: int, interrupted: int) -> list[str]:
    """docs/cli.md's exit codes and messages."""
    return [
        "## Exit codes and messages",
        "",
        "Data goes to stdout; messages go to stderr as `relplan: error: ...` (one line).",
        "",
        f"- {ok}: done.",
        f"- {finding}: a finding that `--fail-on` (or `alerts unittest --run`)"
        " asked to fail on; the message starts with `relplan: finding:`.",
        f"- {usage}: a bad flag or input; the message names the flag or the file.",
        f"- {interrupted}: interrupted (Ctrl-C): `relplan: interrupted; nothing stored`.",
        "",
    ]


def wrote(path: Path, what: str = "") -> str:
    """`python -m relplan.cli.reference --write`: a file written (`what`: which part)."""
    return f"wrote {path}" + (f" ({what})" if what else "")


def machine_fault(cause: str, *, full: bool) -> str:
    """A disk or database fault: its cause, and that the workspace is unchanged."""
    if full:
        cause = f"the disk is full or the file size limit was reached ({cause})"
    return f"{cause}; the workspace was left as it was before the command"
