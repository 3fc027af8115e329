"""The spans of an OTLP JSON or Jaeger JSON text, in one shape (`Span`), with their lines.

OTLP JSON (opentelemetry-proto's JSON encoding; the Collector's file exporter):
    {"resourceSpans": [{"resource": {"attributes": [...]},
                        "scopeSpans": [{"scope": {...}, "spans": [span, ...]}]}]}
    span: name, traceId, spanId, startTimeUnixNano / endTimeUnixNano (unix ns, decimal
    strings or numbers), attributes [{key, value: {stringValue | intValue | doubleValue |
    boolValue | arrayValue | kvlistValue | bytesValue}}]. `instrumentationLibrarySpans`
    (OTLP before 0.15) is read like `scopeSpans`.
Jaeger JSON (the query service's `/api/traces` and the UI's "Download JSON"):
    {"data": [trace, ...]}, a bare trace, or an array of traces;
    trace: {traceID, spans: [span, ...], processes: {pid: {serviceName, tags}}}
    span: operationName, traceID, spanID, startTime and duration (microseconds), tags
    [{key, type, value}], processID (or an inline `process`).
Resource attributes (OTLP) and process tags (Jaeger) become `Span.resource`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from relplan.ingest.files import LineError
from relplan.ingest.otel.documents import (
    WALKED,
    Element,
    JsonShapeError,
    Text,
    scan_array,
    scan_object,
)

# What a walk hands on: a span, or a record that is not one (line, raw text, reason).
SpanOut = Callable[["Span"], None]
BadOut = Callable[[int, str, str], None]


@dataclass
class Span:
    line: int
    raw: str
    name: str | None
    trace_id: str | None
    span_id: str | None
    start: float | None  # epoch seconds
    end: float | None
    attrs: dict[str, Any] = field(default_factory=dict)
    resource: dict[str, Any] = field(default_factory=dict)


def _unix_int(value: Any) -> int | None:
    """A whole number given as a JSON number or a decimal string (OTLP's 64-bit encoding)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value == value and abs(value) < 1e300 else None
    if isinstance(value, str) and value.strip().lstrip("+-").isdigit():
        return int(value.strip())
    return None


def any_value(v: Any) -> Any:
    """An OTLP AnyValue as a Python value (intValue strings as int, kept as given when they are
    no whole number; unknown shapes as None)."""
    if not isinstance(v, dict):
        return None
    if "stringValue" in v:
        return v["stringValue"]
    if "intValue" in v:
        # one that is no whole number stays as given, for its reader to name
        n = _unix_int(v["intValue"])
        return v["intValue"] if n is None else n
    if "doubleValue" in v:
        d = v["doubleValue"]
        try:
            return float(d) if not isinstance(d, bool) else None  # "NaN", "Infinity" too
        except (TypeError, ValueError):
            return None
    if "boolValue" in v:
        return v["boolValue"]
    if "arrayValue" in v:
        values = v["arrayValue"].get("values") if isinstance(v["arrayValue"], dict) else None
        return [any_value(x) for x in values or []]
    if "kvlistValue" in v:
        kv = v["kvlistValue"].get("values") if isinstance(v["kvlistValue"], dict) else None
        return otlp_attributes(kv)
    return v.get("bytesValue")


def otlp_attributes(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = any_value(item.get("value"))
    return out


def jaeger_tags(items: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            value = item.get("value")
            if item.get("type") == "int64" and isinstance(value, str):
                value = _unix_int(value)
            out[item["key"]] = value
    return out


def _id(value: Any) -> str | None:
    return value.lower() if isinstance(value, str) and value else None


def _collect(t: Text, into: list[tuple[int, str, Any]]) -> Element:
    def element(pos: int) -> int:
        value, end = t.decode(pos)
        into.append((t.line(pos), t.raw(pos, end), value))
        return end

    return element


def _not_object(t: Text, pos: int, what: str, bad: BadOut) -> int:
    value, end = t.decode(pos)
    bad(
        t.line(pos),
        t.raw(pos, end),
        LineError(f"{what} is a JSON {type(value).__name__}, not an object"),
    )
    return end


def walk_otlp(t: Text, pos: int, out: SpanOut, bad: BadOut) -> int:
    """Hand on the spans of the OTLP export at `pos`; returns the offset after it."""
    start_line = t.line(t.skip_ws(pos))

    def resource_spans(p: int) -> int:
        if t.char(p) != "{":
            return _not_object(t, p, "a resourceSpans entry", bad)
        pending: list[tuple[int, str, Any]] = []
        collect = _collect(t, pending)

        def scope_spans(p2: int) -> int:
            if t.char(p2) != "{":
                return _not_object(t, p2, "a scopeSpans entry", bad)
            _, end2 = scan_object(t, p2, {"spans": collect})
            return end2

        obj, end = scan_object(
            t, p, {"scopeSpans": scope_spans, "instrumentationLibrarySpans": scope_spans}
        )
        res = obj.get("resource")
        resource = otlp_attributes(res.get("attributes")) if isinstance(res, dict) else {}
        for line, raw, span in pending:
            if not isinstance(span, dict):
                bad(line, raw, "a span that is not a JSON object")
                continue
            start = _unix_int(span.get("startTimeUnixNano"))
            end_ns = _unix_int(span.get("endTimeUnixNano"))
            out(
                Span(
                    line=line,
                    raw=raw,
                    name=span.get("name") if isinstance(span.get("name"), str) else None,
                    trace_id=_id(span.get("traceId")),
                    span_id=_id(span.get("spanId")),
                    start=start / 10**9 if start is not None else None,
                    end=end_ns / 10**9 if end_ns is not None else None,
                    attrs=otlp_attributes(span.get("attributes")),
                    resource=resource,
                )
            )
        return end

    if t.char(t.skip_ws(pos)) != "{":
        return _not_object(t, t.skip_ws(pos), "an OTLP export", bad)
    top, end = scan_object(t, pos, {"resourceSpans": resource_spans})
    if top.get("resourceSpans") is not WALKED:
        bad(
            start_line,
            t.raw(pos, end),
            LineError(
                'expected an OTLP JSON export: {"resourceSpans": [{"scopeSpans": [{"spans":'
                f" [...]}}]}}]}} (keys here: {', '.join(sorted(top)[:8]) or 'none'})"
            ),
        )
    return end


def walk_jaeger(t: Text, pos: int, out: SpanOut, bad: BadOut) -> int:
    """Hand on the spans of the Jaeger export at `pos` ({"data": [...]}, a trace, or an
    array of traces); returns the offset after it."""
    pos = t.skip_ws(pos)
    start_line = t.line(pos)
    if t.char(pos) == "[":
        return scan_array(t, pos, lambda p: _jaeger_object(t, p, out, bad, start_line))
    return _jaeger_object(t, pos, out, bad, start_line)


def _jaeger_object(t: Text, pos: int, out: SpanOut, bad: BadOut, start_line: int) -> int:
    if t.char(pos) != "{":
        return _not_object(t, pos, "a Jaeger trace", bad)
    pending: list[tuple[int, str, Any]] = []
    obj, end = scan_object(
        t,
        pos,
        {
            "data": lambda p: _jaeger_object(t, p, out, bad, start_line),
            "spans": _collect(t, pending),
        },
    )
    if obj.get("data") is not WALKED and obj.get("spans") is not WALKED:
        bad(
            t.line(pos) if pending else start_line,
            t.raw(pos, end),
            LineError(
                'expected a Jaeger JSON export: {"data": [{"traceID": ..., "spans": [...],'
                f' "processes": {{...}}}}]}} (keys here: {", ".join(sorted(obj)[:8]) or "none"})'
            ),
        )
    found = obj.get("processes")
    processes: dict[str, Any] = found if isinstance(found, dict) else {}
    for line, raw, span in pending:
        if not isinstance(span, dict):
            bad(line, raw, "a span that is not a JSON object")
            continue
        proc = span.get("process")
        if not isinstance(proc, dict):
            proc = processes.get(str(span.get("processID")))
        resource = jaeger_tags(proc.get("tags")) if isinstance(proc, dict) else {}
        if isinstance(proc, dict) and isinstance(proc.get("serviceName"), str):
            resource.setdefault("service.name", proc["serviceName"])
        start_us = _unix_int(span.get("startTime"))
        duration = _unix_int(span.get("duration"))
        name = span.get("operationName")
        out(
            Span(
                line=line,
                raw=raw,
                name=name if isinstance(name, str) else None,
                trace_id=_id(span.get("traceID")),
                span_id=_id(span.get("spanID")),
                start=start_us / 10**6 if start_us is not None else None,
                end=(start_us + duration) / 10**6
                if start_us is not None and duration is not None
                else None,
                attrs=jaeger_tags(span.get("tags")),
                resource=resource,
            )
        )
    return end


WALKS: dict[str, Callable[[Text, int, SpanOut, BadOut], int]] = {
    "otlp_json": walk_otlp,
    "jaeger_json": walk_jaeger,
}

__all__ = ["WALKS", "JsonShapeError", "Span", "walk_jaeger", "walk_otlp"]
