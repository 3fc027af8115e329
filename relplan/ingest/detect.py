"""Telling what a file holds from its content: every registered format scores the file's head
(relplan/ingest/registry.py; each format's recogniser sits beside its reader) and the
highest score wins.

`--kind` narrows the choice (e.g. `--kind engine` on a log file means a vLLM log) and
`--format` forces one. Detection reads only the first 64 KiB of the content (a JSON document
whose lines are no records is read whole). A file no format claims raises `UnknownContent`,
one message saying what the file looks like, the closest formats and a `--map` hint (a
directory walk skips it and lists it).
"""

from __future__ import annotations

from dataclasses import dataclass

from relplan.errors import InputError, UsageError
from relplan.ingest import registry
from relplan.ingest.adapter import never
from relplan.ingest.files import FileInfo, load_document, long_number
from relplan.ingest.outcome import say
from relplan.ingest.sniff import Head, envoy_key, kind_from_keys, parquet_columns

__all__ = [
    "Detected",
    "UnknownContent",
    "detect",
    "envoy_key",
    "parquet_columns",
]


def __getattr__(name: str) -> object:
    # Made from the registry on first use (a format registered later is seen by `detect`).
    if name == "FORMATS":
        return registry.formats()
    if name == "KINDS":
        return registry.kinds()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class UnknownContent(InputError):
    """The content is none of relplan's inputs (as opposed to a known input that is broken).
    `what` says what it looks like, for the ingest report."""

    def __init__(self, message: str, path: str, line: int | None = None, what: str = "") -> None:
        super().__init__(message, path, line)
        self.what = what or message


@dataclass(frozen=True)
class Detected:
    kind: str
    format: str


def detect(info: FileInfo, kind: str | None = None, fmt: str | None = None) -> Detected:
    path = str(info.path)
    kinds_known = registry.kinds()
    if kind is not None and kind not in kinds_known:
        raise UsageError(
            "--kind", f"unknown kind {kind!r}; expected one of {', '.join(kinds_known)}"
        )
    adapters = registry.adapters()
    if fmt is not None:
        if fmt not in adapters:
            raise UsageError(
                "--format", f"unknown format {fmt!r}; expected one of {', '.join(adapters)}"
            )
        kinds = adapters[fmt].kinds
        if kind is not None and kind not in kinds:
            raise UsageError("--format", f"format {fmt} holds {'/'.join(kinds)} data, not {kind}")
        if kind is None and len(kinds) > 1:
            kind = _detect_kind_of_canonical(info, fmt)
        return Detected(kind or kinds[0], fmt)
    found = _detect(Head(info), kind)
    if kind is not None and found.kind != kind:
        raise InputError(
            f"looks like {found.kind} data ({found.format}), not {kind}; drop --kind or pass --format",
            path,
        )
    return found


def scores(head: Head, kind: str | None = None) -> list[tuple[float, str]]:
    """(score, format) of every format that claims the head, best first."""
    out = []
    for name, adapter in registry.adapters().items():
        s = adapter.recognise(head, kind)
        if s > 0:
            out.append((s, name))
    return sorted(out, key=lambda p: -p[0])


def _detect_kind_of_canonical(info: FileInfo, fmt: str) -> str:
    head = Head(info)
    if fmt == "parquet":
        keys = set(parquet_columns(info))
    elif fmt == "csv":
        keys = {c.strip().strip('"') for c in head.first.split(",")}
    else:
        keys = head.keys
    k = kind_from_keys(keys)
    if k is None:
        raise InputError(
            "cannot tell proxy from engine records by the columns; pass --kind proxy or --kind engine",
            str(info.path),
        )
    return k


def _detect(head: Head, kind: str | None) -> Detected:
    if head.empty:
        raise UnknownContent("the file is empty; expected records", head.path, what="an empty file")
    ranked = scores(head, kind)
    if ranked:
        adapter = registry.adapters()[ranked[0][1]]
        k = adapter.kind_of(head, kind) if adapter.kind_of is not None else None
        return Detected(k or adapter.kinds[0], adapter.name)
    raise unknown(head)


def _closest(head: Head) -> list[str]:
    """Formats whose files look like this one (JSON, CSV, Parquet or text): first those that
    would take it if told its kind (`--kind`), surest first, then the others of its shape."""
    if head.parquet:
        shape = "parquet"
    elif head.jsonish:
        shape = "json"
    elif head.csv_header is not None and head.name.endswith(".csv"):
        shape = "csv"
    else:
        shape = "text"
    hinted: list[tuple[float, str]] = []
    for name, a in registry.adapters().items():
        best = max((a.recognise(head, k) for k in a.kinds), default=0.0)
        if best > 0:
            hinted.append((best, name))
    first = [name for _, name in sorted(hinted, key=lambda p: -p[0])]
    same = [
        name
        for name, a in registry.adapters().items()
        if a.shape == shape and a.recognise is not never and name not in first
    ]
    return first + same


def unknown(head: Head) -> InputError:
    """The one message for a file no format claims: what it looks like, the closest formats,
    and a `--map` hint naming the fields seen."""
    from relplan.ingest.sniff import text_fields

    if head.jsonish and not head.records and head.document_error is not None:
        exc = head.document_error
        if isinstance(exc, UnicodeDecodeError):
            # A JSON document (query_range, run.json) is one record: name where it breaks.
            load_document(exc.object, head.path, "JSON Lines or a JSON document")
        import json

        if not isinstance(exc, json.JSONDecodeError):
            exc = long_number(head.info.head.decode("utf-8", "replace")) or exc
        at = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        return InputError(
            f"not valid JSON ({why}); expected JSON Lines or a JSON document", head.path, at
        )
    what = head.describe()
    if head.parquet:
        return UnknownContent(
            say("unknown_parquet", columns=sorted(head.columns)), head.path, what=what
        )
    closest = ", ".join(_closest(head))
    fields = text_fields(head)
    hint = say("map_hint", fields=fields)
    if head.records:
        message = say("unknown_records", keys=sorted(head.keys), closest=closest)
    elif head.jsonish:
        shown = head.first_object
        keys = sorted(shown) if shown is not None else None
        message = say("unknown_document", keys=keys, closest=closest)
    elif head.csv_header is not None:
        message = say(
            "unknown_csv", csv=head.name.endswith(".csv"), first=head.first, closest=closest
        )
    else:
        message = say("unknown_text", starts=head.starts(), closest=closest)
    return UnknownContent(message + hint, head.path, None if head.is_document else 1, what=what)
