"""Reading trace exports (OTLP JSON, Jaeger JSON) with the line of every span.

Two layouts:
- JSON Lines (the OpenTelemetry Collector's file exporter: one export request per line):
  read line by line, streaming; a line that does not decode is one bad record.
- One JSON document (a Jaeger "Download JSON" or `/api/traces` answer, a pretty-printed
  OTLP example): held whole as text, at most MAX_DOCUMENT_BYTES (an InputError
  otherwise), and walked with a small scanner that decodes one element of the arrays that
  matter at a time (a resourceSpans entry, a trace, a span), so the Python objects alive at
  once are one of those, and each span keeps the line it starts on.

JSON Lines is assumed when the first non-blank line holds a complete JSON value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from relplan.errors import InputError
from relplan.ingest.files import open_text_lines

MAX_DOCUMENT_BYTES = 256 * 1024 * 1024
MAX_DOCUMENT_TEXT = "256 MiB"

_OTLP = re.compile(r'^\s*\{\s*"resourceSpans"\s*:')
_JAEGER = re.compile(
    r'^\s*(?:\{\s*"data"\s*:\s*)?\[?\s*\{\s*"traceID"\s*:\s*"[^"]*"\s*,\s*"spans"\s*:'
)
_WS = " \t\r\n"
# scan_object's value for a key whose array was walked element by element.
WALKED: Any = object()


def trace_format(head: str) -> str | None:
    """`otlp_json` or `jaeger_json` when the text starts like one (detect.py)."""
    if _OTLP.match(head):
        return "otlp_json"
    if _JAEGER.match(head):
        return "jaeger_json"
    return None


class JsonShapeError(Exception):
    """The text is not valid JSON at `pos` (the caller names the line)."""

    def __init__(self, msg: str, pos: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.pos = pos


class Text:
    """One JSON text (a line, or the whole document) and the line each offset is on."""

    def __init__(self, s: str, first_line: int) -> None:
        self.s = s
        self._pos = 0
        self._line = first_line
        self._decoder = json.JSONDecoder()

    def line(self, pos: int) -> int:
        """The line of offset `pos`; offsets are asked in increasing order (counted once)."""
        if pos < self._pos:  # not expected; count afresh
            self._line -= self.s.count("\n", pos, self._pos)
        else:
            self._line += self.s.count("\n", self._pos, pos)
        self._pos = pos
        return self._line

    def skip_ws(self, pos: int) -> int:
        s = self.s
        while pos < len(s) and s[pos] in _WS:
            pos += 1
        return pos

    def char(self, pos: int) -> str:
        return self.s[pos] if pos < len(self.s) else ""

    def decode(self, pos: int) -> tuple[Any, int]:
        """The JSON value at `pos` (after whitespace) and the offset after it."""
        pos = self.skip_ws(pos)
        try:
            return self._decoder.raw_decode(self.s, pos)
        except json.JSONDecodeError as exc:
            raise JsonShapeError(f"malformed JSON ({exc.msg})", exc.pos) from None
        except RecursionError:
            raise JsonShapeError("JSON nested too deeply to read", pos) from None

    def raw(self, start: int, end: int, limit: int = 2000) -> str:
        """The text of a value on one line (for rejects), cut at `limit` characters."""
        text = " ".join(part.strip() for part in self.s[start:end].splitlines())
        return text if len(text) <= limit else text[:limit] + "..."


# An element handler: parse the element at this offset, return the offset after it.
Element = Callable[[int], int]


def scan_array(t: Text, pos: int, element: Element) -> int:
    """Walk the array at `pos`, calling `element` at each element's offset."""
    pos = t.skip_ws(pos)
    if t.char(pos) != "[":
        raise JsonShapeError("expected an array", pos)
    pos = t.skip_ws(pos + 1)
    if t.char(pos) == "]":
        return pos + 1
    while True:
        pos = t.skip_ws(element(t.skip_ws(pos)))
        c = t.char(pos)
        if c == ",":
            pos += 1
        elif c == "]":
            return pos + 1
        else:
            raise JsonShapeError("malformed JSON (expected ',' or ']' in an array)", pos)


def scan_object(t: Text, pos: int, arrays: Mapping[str, Element]) -> tuple[dict[str, Any], int]:
    """Decode the object at `pos`, except that an array under a key of `arrays` is walked
    element by element with that handler instead of being kept (its value is then WALKED)."""
    pos = t.skip_ws(pos)
    if t.char(pos) != "{":
        raise JsonShapeError("expected an object", pos)
    out: dict[str, Any] = {}
    pos = t.skip_ws(pos + 1)
    if t.char(pos) == "}":
        return out, pos + 1
    while True:
        pos = t.skip_ws(pos)
        if t.char(pos) != '"':
            raise JsonShapeError("malformed JSON (expected a key in an object)", pos)
        key, pos = t.decode(pos)
        pos = t.skip_ws(pos)
        if t.char(pos) != ":":
            raise JsonShapeError("malformed JSON (expected ':' after a key)", pos)
        pos = t.skip_ws(pos + 1)
        handler = arrays.get(key)
        if handler is not None and t.char(pos) == "[":
            pos = scan_array(t, pos, handler)
            out[key] = WALKED
        else:
            out[key], pos = t.decode(pos)
        pos = t.skip_ws(pos)
        c = t.char(pos)
        if c == ",":
            pos += 1
        elif c == "}":
            return out, pos + 1
        else:
            raise JsonShapeError("malformed JSON (expected ',' or '}' in an object)", pos)


def texts(path: Path) -> Iterator[tuple[Text, bool]]:
    """The JSON texts of a file and whether it is JSON Lines (one text per line, streaming)
    or one document (a single text, at most MAX_DOCUMENT_BYTES)."""
    lines = open_text_lines(path)
    first: tuple[int, str] | None = None
    for n, line in lines:
        if line.strip():
            first = (n, line)
            break
    if first is None:
        return
    try:
        json.loads(first[1])
        is_lines = True
    except (ValueError, RecursionError):
        is_lines = not first[1].lstrip().startswith(("{", "["))
    if is_lines:
        yield Text(first[1], first[0]), True
        for n, line in lines:
            if line.strip():
                yield Text(line, n), True
        return
    parts = [first[1]]
    size = len(first[1])
    for _, line in lines:
        size += len(line) + 1
        if size > MAX_DOCUMENT_BYTES:
            raise InputError(
                f"a JSON document larger than {MAX_DOCUMENT_TEXT} is not read (it is held whole"
                " in memory); write one trace per line instead (jq -c '.data[]' FILE for a"
                " Jaeger export; the OpenTelemetry Collector's file exporter writes JSON lines)",
                str(path),
            )
        parts.append(line)
    yield Text("\n".join(parts), first[0]), False
