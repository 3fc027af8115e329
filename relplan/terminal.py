"""Text bound for the user's terminal, made inert.

Replica names, labels, call ids and paths come from the inputs; printed as they are, an ESC
sequence in one could retitle, recolour or clear the terminal, a CR could overwrite the line
before it and a NUL could hide the rest. `visible()` shows every control character (C0, DEL,
C1) and the Unicode line and paragraph separators as a Python-style escape (`\\x1b`,
`\\u2028`), and a backslash that would make such an escape ambiguous stays as it is: the
text is for reading, not for parsing back.
"""

from __future__ import annotations

import re

# C0 controls except tab, DEL and C1 controls, and the line/paragraph/bidi-override marks
# that a terminal or a log viewer would act on.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c <= 0xFF else f"\\u{c:04x}"


def visible(text: str) -> str:
    """`text` with control and escape characters shown as `\\xNN` / `\\uNNNN`."""
    return _CONTROL.sub(_escape, text)


def visible_lines(text: str) -> str:
    """Like `visible`, but keeps line breaks (for multi-line messages and tables)."""
    return "\n".join(visible(line) for line in text.split("\n"))
