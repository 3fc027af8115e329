"""Envoy text access logs (the default format, Istio's, or a format string) -> proxy attempts.

The format string (IngestOptions(log_format=...); by default Envoy's documented default, then
Istio's) is compiled into a regular expression: `%COMMAND%` fields become groups (a quoted
field matches up to the next quote, `[%START_TIME%]` up to the bracket, any other field up
to the next space), the text between them literally. Each field is named as in the JSON
form, so the records go through envoy.py's mapping unchanged:
  %START_TIME%                  START_TIME      %RESPONSE_CODE%   RESPONSE_CODE
  %REQ(X-REQUEST-ID)%           x-request-id    %REQ(:AUTHORITY)% :authority
  %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%  x-envoy-upstream-service-time
A line that fits no format is refused with the formats tried; a line that fits a format
only without its leading `[%START_TIME%]` (as pasted in issue reports) is refused because
its time is unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, LineError, faults_for, open_text_lines
from relplan.ingest.gateways.envoy_json import stage_envoy_records
from relplan.ingest.gateways.nginx import written_for
from relplan.ingest.gateways.options import ATTEMPT_FIELD, CALL_KEY, LOG_FORMAT

if TYPE_CHECKING:
    import duckdb


ENVOY_DEFAULT = (
    '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%"'
    " %RESPONSE_CODE% %RESPONSE_FLAGS% %BYTES_RECEIVED% %BYTES_SENT% %DURATION%"
    ' %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%"'
    ' "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%"'
)
ISTIO_DEFAULT = (
    '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%"'
    " %RESPONSE_CODE% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %CONNECTION_TERMINATION_DETAILS%"
    ' "%UPSTREAM_TRANSPORT_FAILURE_REASON%" %BYTES_RECEIVED% %BYTES_SENT% %DURATION%'
    ' %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" "%REQ(USER-AGENT)%"'
    ' "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%" %UPSTREAM_CLUSTER%'
    " %UPSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_LOCAL_ADDRESS% %DOWNSTREAM_REMOTE_ADDRESS%"
    " %REQUESTED_SERVER_NAME% %ROUTE_NAME%"
)

_COMMAND = re.compile(r"%([A-Z_]+)(?:\(([^)]*)\))?(?::\d+)?%")
_START = re.compile(r"^\[[^\]]*\]\s*")


def field_name(command: str, arg: str | None) -> str:
    """The record key of one format field: REQ/RESP headers by their (first) header name,
    lower case; other commands by their name (START_TIME(%s) -> START_TIME)."""
    if command in ("REQ", "RESP", "TRAILER") and arg:
        return arg.split("?")[-1].lower() if arg.startswith("X-ENVOY-ORIGINAL") else arg.lower()
    return command


def compile_format(fmt: str) -> tuple[re.Pattern[str], list[str]]:
    """The regular expression of a format string, and the record key of each group g0, g1..."""
    parts: list[str] = []
    names: list[str] = []
    pos = 0
    for m in _COMMAND.finditer(fmt):
        lit = fmt[pos : m.start()]
        parts.append(re.escape(lit))
        group = f"g{len(names)}"
        names.append(field_name(m.group(1), m.group(2)))
        after = fmt[m.end() : m.end() + 1]
        if lit.endswith('"') and after == '"':
            value = r'[^"]*'
        elif lit.endswith("[") and after == "]":
            value = r"[^\]]*"
        else:
            value = r"\S+"
        parts.append(f"(?P<{group}>{value})")
        pos = m.end()
    parts.append(re.escape(fmt[pos:].rstrip("\n")))
    return re.compile("^" + "".join(parts) + r"\s*$"), names


class EnvoyTextFormat:
    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.rx, self.names = compile_format(fmt)
        headless = _START.sub("", fmt, count=1)
        self.headless = compile_format(headless)[0] if headless != fmt else None

    def parse(self, line: str) -> dict[str, Any] | None:
        m = self.rx.match(line)
        if not m:
            return None
        rec: dict[str, Any] = {}
        for i, name in enumerate(self.names):
            rec.setdefault(name, m.group(f"g{i}"))
        return rec


def formats(opts: IngestOptions) -> list[EnvoyTextFormat]:
    log_format = LOG_FORMAT.of(opts)
    given = [log_format] if log_format else [ISTIO_DEFAULT, ENVOY_DEFAULT]
    return [EnvoyTextFormat(f) for f in given]


def looks_like_envoy_text(first_line: str) -> bool:
    return any(f.parse(first_line) for f in formats(IngestOptions()))


def stage_envoy_text(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    fmts = formats(opts)
    which = "the given format" if LOG_FORMAT.of(opts) else "Istio's or Envoy's default format"

    faults = faults_for(opts.skip)

    def records() -> Iterable[tuple[int, str, dict[str, Any] | str]]:
        for n, line in open_text_lines(info.path, faults):
            if not line.strip():
                continue
            for f in fmts:
                rec = f.parse(line)
                if rec is not None:
                    yield n, line, rec
                    break
            else:
                if any(f.headless and f.headless.match(line) for f in fmts):
                    yield (
                        n,
                        line,
                        (
                            "the line has no [START_TIME] (it starts at the request); the time of"
                            " the attempt is unknown"
                        ),
                    )
                else:
                    yield (
                        n,
                        line,
                        LineError(f"does not match {which}; give the format string (log_format)"),
                    )
        if faults is not None:
            yield from faults.drain()

    stage_envoy_records(con, staged, opts, records(), "envoy_text")
    staged.unknown_columns = []


_ENVOY_LOOSE = re.compile(r'^\[[0-9T:.\-+Z]+\] "[A-Z]+ ')
_METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS")


def _recognise(head: sniff.Head, kind: str | None) -> float:
    first = head.first
    if looks_like_envoy_text(first) or _ENVOY_LOOSE.match(first):
        # Beats the JSON view of a line that starts with `[`.
        return sniff.FIRST if first.startswith("[") else sniff.LIKELY + 0.1
    if head.jsonish:
        return 0.0
    if first.startswith(tuple(f'"{m} ' for m in _METHODS)) and any(
        f.headless and f.headless.match(first) for f in formats(IngestOptions())
    ):
        return (
            sniff.LIKELY + 0.08
        )  # pasted without its [START_TIME]: lines refused with that reason
    return 0.0


ADAPTERS = (
    Adapter(
        name="envoy_text",
        kinds=("proxy",),
        family="gateways",
        summary="Envoy's default or Istio's text access log",
        tables=("attempts",),
        recognise=_recognise,
        read=stage_envoy_text,
        options=(LOG_FORMAT, CALL_KEY, ATTEMPT_FIELD),
        chosen=lambda opts: written_for(LOG_FORMAT.of(opts)) == "envoy_text",
        examples=(
            Example(
                "tests/data/published/envoy_default_text_doc_example.log",
                "tests/data/published/SOURCES.md",
            ),
            Example(
                "tests/data/published/istio_envoy_text_issue45802_503_UC.log",
                "tests/data/published/SOURCES.md",
            ),
        ),
        doc="envoy-and-istio-access-logs-envoy-envoy_text",
    ),
)
