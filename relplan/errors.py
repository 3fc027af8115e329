"""One exception hierarchy; the CLI turns it into `relplan: error: ...` and an exit code."""

from __future__ import annotations

import os
from enum import IntEnum
from pathlib import Path


class ExitCode(IntEnum):
    OK = 0
    FINDING = 1  # only where a --fail-on flag asks for it
    USAGE = 2  # bad flag, bad input file
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it); nothing was stored


class RelplanError(Exception):
    """An expected failure: shown to the user as one line, never as a traceback."""

    exit_code: ExitCode = ExitCode.USAGE


class UsageError(RelplanError):
    """A flag value that makes no sense. The message names the flag."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(f"{flag}: {message}")
        self.flag = flag


class InputError(RelplanError):
    """A bad input file or record. The message names the file and line where known."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(where + message)
        self.reason = message
        self.path = path
        self.line = line


class QueryError(RelplanError):
    """A query file that breaks the loader's rules (a bug in relplan or a user's query)."""


class NoDataError(RelplanError):
    """The workspace lacks the input a command needs; the message says which."""


class FindingError(RelplanError):
    """An analysis found a problem and the user asked to fail on it (--fail-on)."""

    exit_code = ExitCode.FINDING


def check_utf8_path(path: Path | str) -> None:
    """Refuse a path whose name is not UTF-8 (on Linux, bytes such as b'caf\\xe9.jsonl' come in
    as surrogates): DuckDB and the terminal take UTF-8 only. The error shows the bytes
    escaped (`caf\\xe9.jsonl`), so the line itself can be printed."""
    text = os.fspath(path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(text).decode("utf-8", "backslashreplace")
        raise InputError(
            "the name is not UTF-8 (bytes shown as \\xNN); relplan reads files and workspaces"
            " by UTF-8 names only: rename it, or link it under a UTF-8 name",
            shown,
        ) from None
