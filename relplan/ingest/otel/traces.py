"""vLLM's OpenTelemetry `llm_request` spans (OTLP JSON lines, Jaeger JSON) -> engine
lifecycle events and request ids (docs/formats.md).

One span (vLLM, `--otlp-traces-endpoint`) is one execution; its attributes (names from
vLLM's `vllm/tracing.py` SpanAttributes) give, with t0 = the span's start (vLLM's
arrival_time):
    arrived      t0, prompt_tokens = gen_ai.usage.prompt_tokens
    scheduled    t0 + gen_ai.latency.time_in_queue            (admitted by the scheduler)
    first_token  t0 + gen_ai.latency.time_to_first_token
                 (without it: t0 + time_in_queue + gen_ai.latency.time_in_model_prefill)
    finished     t0 + gen_ai.latency.e2e (without it: the span's end, else first_token +
                 gen_ai.latency.time_in_model_decode); `aborted` instead when
                 gen_ai.response.finish_reasons holds "abort" or "error"
A latency that is negative or not a number is NULL (no event), counted in a note; on an
aborted span a time_to_first_token of 0 means "no token" (vLLM's default). The execution id
is gen_ai.request.id, vLLM's external id (`chatcmpl-<X-Request-Id>`); the engine's internal
suffix is not in the span. A repeated id (a resent X-Request-Id) on another span becomes
`<id>#2`, `#3`, ... in file order; request_ids keeps the id as sent and the client id in it.
The replica is the resource attribute (Jaeger: process tag) k8s.pod.name,
service.instance.id or host.name, the first present. gen_ai.usage.completion_tokens has no
column in the events table: its total is given in a note.

Spans named otherwise are counted in a note by name; a span repeated with the same trace
and span id is merged. Older vLLM releases export no span for an aborted request: a note
says so on every source.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import TYPE_CHECKING, Any

from relplan.errors import InputError
from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, LineError
from relplan.ingest.gateway_rows import as_float, as_int, logged_tokens, text
from relplan.ingest.otel.documents import JsonShapeError, texts, trace_format
from relplan.ingest.otel.spans import WALKS, BadOut, Span
from relplan.ingest.outcome import say
from relplan.ingest.stage import StageWriter
from relplan.ingest.vllm.ids import RequestIds
from relplan.values import misread_unit

if TYPE_CHECKING:
    import duckdb


SPAN_NAME = "llm_request"
REPLICA_KEYS = ("k8s.pod.name", "service.instance.id", "host.name")
_ENDING = {"abort": "aborted", "error": "aborted"}
_START_FIELD = {"otlp_json": "startTimeUnixNano", "jaeger_json": "startTime"}
_START_UNIT = {"otlp_json": "ns", "jaeger_json": "us"}
_START_SCALE = {"ns": 1e9, "us": 1e6}
_LAT = "gen_ai.latency."
# Token counts a span gives: a value given but not a whole number in range is the span's error.
_TOKEN_ATTRS = ("gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens")


def finish_reasons(value: Any) -> list[str]:
    """gen_ai.response.finish_reasons: vLLM writes a JSON string (`["stop"]`); accept an
    OTLP array or a bare string too."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return [] if value is None else [str(value)]


class SpanReader:
    """Turns the spans of one file into staged events and request ids; counts for the notes."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, staged: Staged, opts: IngestOptions, origin: str
    ) -> None:
        self.staged = staged
        self.opts = opts
        self.origin = origin
        self.engine = StageWriter(con, "stage_engine")
        self.ids = RequestIds(staged.source_id)
        self.spans = 0
        self.stored = 0
        self.merged = 0
        self.rejected = 0
        self.events = 0
        self.other = Counter[str]()
        self.seen: set[str] = set()
        self.repeats = Counter[str]()  # gen_ai.request.id -> spans with it
        self.nulled = Counter[str]()  # attribute -> spans where it was negative/not a number
        self.missing = Counter[str]()  # what a span lacked, for the notes
        self.endings = Counter[str]()
        self.replicas = Counter[str]()
        self.completion = [0, 0]  # output tokens, spans that give them

    def reject(self, line: int, raw: str, reason: str) -> None:
        self.rejected += 1
        self.engine.add(
            source_id=self.staged.source_id, ln=line, raw=raw, perr=reason, origin=self.origin
        )

    def latency(self, attrs: dict[str, Any], name: str) -> float | None:
        key = _LAT + name
        if key not in attrs or attrs[key] is None:
            self.missing[name] += 1
            return None
        v = as_float(attrs[key])
        if v is None or v < 0 or not math.isfinite(v):
            self.nulled[key] += 1
            return None
        return v

    def span(self, sp: Span) -> None:
        self.spans += 1
        if sp.name != SPAN_NAME:
            self.other[sp.name or "(no name)"] += 1
            return
        if sp.trace_id and sp.span_id:
            key = sp.trace_id + "/" + sp.span_id
            if key in self.seen:
                self.merged += 1
                return
            self.seen.add(key)
        rid = text(sp.attrs.get("gen_ai.request.id"))
        if rid is None:
            self.reject(
                sp.line,
                sp.raw,
                "an llm_request span without gen_ai.request.id; expected vLLM's request id",
            )
            return
        t0 = sp.start
        field = _START_FIELD[self.origin]
        if t0 is None or not math.isfinite(t0) or t0 <= 0:
            self.reject(
                sp.line,
                sp.raw,
                LineError(f"{field} is missing or not a whole number; expected the span start"),
            )
            return
        unit = _START_UNIT[self.origin]
        why = misread_unit(t0 * _START_SCALE[unit], unit)
        if why is not None:
            self.reject(sp.line, sp.raw, f"{field}: {why}")
            return
        for key in _TOKEN_ATTRS:
            _, why = logged_tokens(sp.attrs.get(key), key)
            if why is not None:
                self.reject(sp.line, sp.raw, why)
                return
        self.stored += 1
        self.emit_span(sp, rid, t0)

    def emit_span(self, sp: Span, rid: str, t0: float) -> None:
        a = sp.attrs
        reasons = finish_reasons(a.get("gen_ai.response.finish_reasons"))
        ending = next((_ENDING[r] for r in reasons if r in _ENDING), "finished")
        self.endings[",".join(reasons) or "(none)"] += 1
        queue = self.latency(a, "time_in_queue")
        ttft = self.latency(a, "time_to_first_token")
        e2e = self.latency(a, "e2e")
        prefill = self.latency(a, "time_in_model_prefill")
        decode = self.latency(a, "time_in_model_decode")
        if ending == "aborted" and ttft == 0:
            ttft = None
        first = t0 + ttft if ttft is not None else None
        if first is None and queue is not None and prefill is not None:
            first = t0 + queue + prefill
            self.missing["first_token from time_in_queue + time_in_model_prefill"] += 1
        if e2e is not None:
            end: float | None = t0 + e2e
        elif sp.end is not None and math.isfinite(sp.end) and sp.end >= t0:
            end = sp.end
            self.missing["end from the span's end time"] += 1
        elif first is not None and decode is not None:
            end = first + decode
            self.missing["end from first_token + time_in_model_decode"] += 1
        else:
            end = None
            self.missing["no end time: no terminal event"] += 1
        self.repeats[rid] += 1
        k = self.repeats[rid]
        exec_id = rid if k == 1 else f"{rid}#{k}"
        self.ids.note(exec_id, rid, sp.line)
        replica = next((text(sp.resource.get(r)) for r in REPLICA_KEYS if sp.resource.get(r)), None)
        if replica is not None:
            self.replicas[next(r for r in REPLICA_KEYS if sp.resource.get(r))] += 1
        tokens = as_int(a.get("gen_ai.usage.prompt_tokens"))
        out = as_int(a.get("gen_ai.usage.completion_tokens"))
        if out is not None:
            self.completion[0] += out
            self.completion[1] += 1
        self.add(sp, t0, exec_id, "arrived", replica, tokens)
        if queue is not None:
            self.add(sp, t0 + queue, exec_id, "scheduled", replica)
        if first is not None:
            self.add(sp, first, exec_id, "first_token", replica)
        if end is not None:
            self.add(sp, end, exec_id, ending, replica)

    def add(
        self,
        sp: Span,
        t: float,
        exec_id: str,
        event: str,
        replica: str | None,
        tokens: int | None = None,
    ) -> None:
        self.events += 1
        self.engine.add(
            source_id=self.staged.source_id,
            ln=sp.line,
            raw=sp.raw if self.opts.skip else None,
            perr=None,
            origin=self.origin,
            type="event",
            t=t,
            execution_id=exec_id,
            event=event,
            prompt_tokens=tokens,
            replica=replica,
        )

    def close(self) -> None:
        self.engine.flush()
        self.staged.finish.append(self.ids.store())
        self.staged.extra_rows += len(self.ids.rows)
        self.staged.notes.extend(self.notes())

    def notes(self) -> list[str]:
        out = [
            say(
                "span_counts",
                spans=self.spans,
                name=SPAN_NAME,
                stored=self.stored,
                merged=self.merged,
                other=dict(self.other.most_common()),
                rejected=self.rejected,
                events=self.events,
                ids=len(self.ids.rows),
            ),
            say("aborts_may_miss", name=SPAN_NAME, aborted=self.endings["abort"]),
        ]
        if not self.stored and not self.rejected:
            out.append(say("no_request_span", name=SPAN_NAME))
        if self.endings:
            out.append(say("finish_reasons", endings=self.endings))
        if self.missing:
            out.append(say("spans_without", missing=self.missing))
        if self.nulled:
            out.append(say("latencies_nulled", nulled=self.nulled))
        repeated = sum(k - 1 for k in self.repeats.values() if k > 1)
        if repeated:
            out.append(say("request_ids_repeated", n=repeated))
        if self.stored:
            out.append(
                say("completion_unstored", tokens=self.completion[0], spans=self.completion[1])
            )
            out.append(say("span_replicas", replicas=self.replicas))
        return out


def _holder(into: list[tuple[int, str, str]]) -> BadOut:
    def hold(line: int, raw: str, reason: str) -> None:
        into.append((line, raw, reason))

    return hold


def _stage(
    con: duckdb.DuckDBPyConnection,
    info: FileInfo,
    staged: Staged,
    opts: IngestOptions,
    fmt: str,
) -> None:
    reader = SpanReader(con, staged, opts, fmt)
    walk = WALKS[fmt]
    path = str(info.path)
    for t, is_lines in texts(info.path):
        # A JSON line's spans are kept only when the whole line reads: a cut line is one
        # rejected record, not a few spans and a reject.
        spans: list[Span] = []
        bad: list[tuple[int, str, str]] = []
        try:
            end = walk(
                t,
                0,
                spans.append if is_lines else reader.span,
                _holder(bad) if is_lines else reader.reject,
            )
            if t.skip_ws(end) != len(t.s):
                raise JsonShapeError("malformed JSON (more text after the value)", end)
        except RecursionError:
            exc = JsonShapeError("JSON nested too deeply to read", 0)
            if not is_lines:
                raise InputError(exc.msg, path, t.line(0)) from None
            reader.reject(t.line(0), t.raw(0, len(t.s), 20_000), exc.msg)
            continue
        except JsonShapeError as exc:
            if not is_lines:
                raise InputError(exc.msg, path, t.line(exc.pos)) from None
            reader.reject(t.line(0), t.raw(0, len(t.s), 20_000), exc.msg)
            continue
        for sp in spans:
            reader.span(sp)
        for b in bad:
            reader.reject(*b)
    reader.close()


def stage_otlp_json(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    _stage(con, info, staged, opts, "otlp_json")


def stage_jaeger_json(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    _stage(con, info, staged, opts, "jaeger_json")


def _otlp(head: sniff.Head, kind: str | None) -> float:
    return sniff.CERTAIN - 0.01 if trace_format(head.text[:4096]) == "otlp_json" else 0.0


def _jaeger(head: sniff.Head, kind: str | None) -> float:
    return sniff.CERTAIN - 0.01 if trace_format(head.text[:4096]) == "jaeger_json" else 0.0


_TABLES = ("events", "request_ids", "attempts")
ADAPTERS = (
    Adapter(
        name="otlp_json",
        shape="json",
        kinds=("engine",),
        family="otel",
        summary="vLLM's OpenTelemetry spans as OTLP JSON",
        tables=_TABLES,
        recognise=_otlp,
        read=stage_otlp_json,
        examples=(
            Example(
                "tests/data/published/otlp_json_trace_example_opentelemetry_proto.json",
                "tests/data/published/SOURCES.md",
            ),
        ),
        doc="vllm-opentelemetry-traces-otlp_json-jaeger_json",
        lines=False,
    ),
    Adapter(
        name="jaeger_json",
        shape="json",
        kinds=("engine",),
        family="otel",
        summary="the same spans as Jaeger's JSON export",
        tables=_TABLES,
        recognise=_jaeger,
        read=stage_jaeger_json,
        examples=(
            Example(
                "tests/data/published/jaeger_json_trace_fixture_ui_01.json",
                "tests/data/published/SOURCES.md",
            ),
        ),
        doc="vllm-opentelemetry-traces-otlp_json-jaeger_json",
        lines=False,
    ),
)
