"""Regular expressions a user hands relplan (a mapping file's `pattern`, `ingest --match`),
compiled by RE2: matching takes time linear in the text, whatever the pattern, so no pattern
can hang an ingest (Python's `re` backtracks without bound on `(x+x+)+y`). RE2 has no
backreferences or lookaround; those are refused with the reason."""

from __future__ import annotations

from typing import Any


def compile_pattern(pattern: str) -> Any:
    """The compiled pattern (fullmatch, match and search as with `re`); ValueError naming why
    RE2 refuses it."""
    import re2

    options = re2.Options()
    options.log_errors = False  # the error goes into our message, not onto stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        why = exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
        raise ValueError(
            f"pattern is not a regular expression RE2 accepts ({why}); RE2 takes the"
            " syntax of Python's re without backreferences and lookaround"
        ) from exc
