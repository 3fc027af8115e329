"""vLLM OpenTelemetry traces: OTLP JSON (Collector file exporter) and Jaeger JSON.

The two published files in tests/data/published (SOURCES.md there) are the container
examples of opentelemetry-proto and Jaeger: they hold no vLLM span (none has been published),
so their counts are checked by hand here and the `llm_request` spans below are HAND-MADE from
the attribute list of vLLM's `vllm/tracing.py` / `output_processor.py` quoted in SOURCES.md.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relplan.errors import InputError
from relplan.ingest.otel import documents as otel_json
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

PUBLISHED = Path(__file__).resolve().parent / "data" / "published"
OTLP_EXAMPLE = PUBLISHED / "otlp_json_trace_example_opentelemetry_proto.json"
JAEGER_EXAMPLE = PUBLISHED / "jaeger_json_trace_fixture_ui_01.json"
TALLY = re.compile(
    r"^(\d+) spans: (\d+) llm_request spans stored, (\d+) duplicate llm_request spans merged,"
    r" (\d+) other spans ignored.*, (\d+) records rejected; (\d+) events, (\d+) request ids$"
)
T0 = 1764460800.0  # 2025-11-30T00:00:00Z


# -- hand-made vLLM spans (attribute names from vLLM's SpanAttributes) ------------------------
def vllm_attrs(
    rid: str | None,
    *,
    queue: float | None = 0.25,
    ttft: float | None = 0.5,
    e2e: float | None = 2.0,
    prefill: float | None = 0.2,
    decode: float | None = 1.5,
    prompt: int | None = 120,
    completion: int | None = 40,
    finish: str = '["stop"]',
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "gen_ai.request.id": rid,
        "gen_ai.latency.time_in_queue": queue,
        "gen_ai.latency.time_to_first_token": ttft,
        "gen_ai.latency.e2e": e2e,
        "gen_ai.latency.time_in_model_prefill": prefill,
        "gen_ai.latency.time_in_model_decode": decode,
        "gen_ai.usage.prompt_tokens": prompt,
        "gen_ai.usage.completion_tokens": completion,
        "gen_ai.response.finish_reasons": finish,
    }
    return {k: v for k, v in out.items() if v is not None}


def _otlp_value(v: Any) -> dict[str, Any]:
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}  # 64-bit integers are decimal strings in OTLP JSON
    if isinstance(v, float):
        return {"doubleValue": v}
    return {"stringValue": str(v)}


def otlp_span(
    start: float,
    attrs: dict[str, Any],
    *,
    name: str = "llm_request",
    span_id: str = "00f067aa0ba902b7",
    trace_id: str = "4bf92f3577b34da6a3ce929d0e0e4736",
    length: float = 2.0,
) -> dict[str, Any]:
    return {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": 2,
        "startTimeUnixNano": str(round(start * 1e9)),
        "endTimeUnixNano": str(round((start + length) * 1e9)),
        "attributes": [{"key": k, "value": _otlp_value(v)} for k, v in attrs.items()],
    }


def otlp_request(spans: list[dict[str, Any]], resource: dict[str, str] | None = None) -> str:
    res = {"service.name": "vllm-server", **(resource or {})}
    return json.dumps(
        {
            "resourceSpans": [
                {
                    "resource": {
                        "attributes": [
                            {"key": k, "value": {"stringValue": v}} for k, v in res.items()
                        ]
                    },
                    "scopeSpans": [{"scope": {"name": "vllm.llm_engine"}, "spans": spans}],
                }
            ]
        }
    )


def _jaeger_tag(k: str, v: Any) -> dict[str, Any]:
    typ = "bool" if isinstance(v, bool) else "int64" if isinstance(v, int) else "string"
    typ = "float64" if isinstance(v, float) else typ
    return {"key": k, "type": typ, "value": v}


def jaeger_span(
    start: float, attrs: dict[str, Any], *, name: str = "llm_request", span_id: str = "1"
) -> dict[str, Any]:
    return {
        "traceID": "4bf92f3577b34da6",
        "spanID": span_id,
        "operationName": name,
        "references": [],
        "startTime": round(start * 1e6),
        "duration": 2_000_000,
        "tags": [_jaeger_tag(k, v) for k, v in attrs.items()],
        "logs": [],
        "processID": "p1",
        "warnings": None,
    }


def jaeger_doc(spans: list[dict[str, Any]], tags: dict[str, str] | None = None) -> str:
    trace = {
        "traceID": "4bf92f3577b34da6",
        "spans": spans,
        "processes": {
            "p1": {
                "serviceName": "vllm-server",
                "tags": [_jaeger_tag(k, v) for k, v in (tags or {}).items()],
            }
        },
        "warnings": None,
    }
    return json.dumps({"data": [trace], "total": 0, "limit": 0, "offset": 0}, indent=2)


def _events(db: Path) -> list[tuple[Any, ...]]:
    return rows(
        db,
        "select execution_id, event, round(t - $t0, 6), prompt_tokens, replica, source_row"
        " from events order by source_row, t, event",
        {"t0": T0},
    )


def _tally(note: str) -> tuple[int, ...]:
    m = TALLY.match(note)
    assert m, note
    return tuple(map(int, m.groups()))


# -- the published container examples ---------------------------------------------------------
def test_published_otlp_example_is_detected_and_its_one_span_counted(tmp_path: Path) -> None:
    """opentelemetry-proto examples/trace.json: one span, 'I'm a server span' (not vLLM's)."""
    rep = ingest(tmp_path / "w.duckdb", OTLP_EXAMPLE)
    src = rep.sources[0]
    assert (src.kind, src.format, src.rows, src.rejected) == ("engine", "otlp_json", 0, 0)
    assert _tally(src.notes[0]) == (1, 0, 0, 1, 0, 0, 0)
    assert "I'm a server span 1x" in src.notes[0]
    assert any(n.startswith("aborted requests may be missing") for n in src.notes)
    assert any(n.startswith("no llm_request span") for n in src.notes)


def test_published_jaeger_fixture_is_detected_and_its_five_spans_counted(tmp_path: Path) -> None:
    """Jaeger's ui_01.json: 5 spans (some-operation twice), a bare trace without "data"."""
    rep = ingest(tmp_path / "w.duckdb", JAEGER_EXAMPLE)
    src = rep.sources[0]
    assert (src.kind, src.format, src.rows) == ("engine", "jaeger_json", 0)
    assert _tally(src.notes[0]) == (5, 0, 0, 5, 0, 0, 0)
    assert "some-operation 2x" in src.notes[0]


def test_published_otlp_envelope_with_a_vllm_span_inside(tmp_path: Path) -> None:
    """The real envelope (numbers for the nanos, uppercase hex ids), the published span renamed
    to llm_request with hand-made vLLM attributes: t0 = 1544712660000000000 ns."""
    doc = json.loads(OTLP_EXAMPLE.read_text(encoding="utf-8"))
    span = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["name"] = "llm_request"
    span["attributes"] += [
        {"key": "gen_ai.request.id", "value": {"stringValue": "chatcmpl-abc"}},
        {"key": "gen_ai.latency.time_in_queue", "value": {"doubleValue": 0.125}},
        {"key": "gen_ai.latency.time_to_first_token", "value": {"doubleValue": 0.5}},
        {"key": "gen_ai.latency.e2e", "value": {"doubleValue": 1.0}},
        {"key": "gen_ai.usage.prompt_tokens", "value": {"intValue": 7}},
    ]
    f = tmp_path / "trace.json"
    f.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    ingest(tmp_path / "w.duckdb", f)
    got = rows(tmp_path / "w.duckdb", "select event, t, prompt_tokens from events order by t")
    assert got == [
        ("arrived", 1544712660.0, 7),
        ("scheduled", 1544712660.125, None),
        ("first_token", 1544712660.5, None),
        ("finished", 1544712661.0, None),
    ]
    line = next(
        i for i, ln in enumerate(f.read_text().splitlines(), 1) if '"traceId"' in ln
    )  # the span's first line is the one before its traceId
    assert rows(tmp_path / "w.duckdb", "select distinct source_row from events") == [(line - 1,)]


# -- hand-made spans ---------------------------------------------------------------------------
def _two_lines() -> list[str]:
    return [
        otlp_request(
            [
                otlp_span(T0, vllm_attrs("chatcmpl-a1")),
                otlp_span(T0 + 0.1, {"http.route": "/v1/chat"}, name="POST /v1/chat", span_id="1"),
            ],
            {"k8s.pod.name": "vllm-0"},
        ),
        otlp_request(
            [otlp_span(T0 + 1, vllm_attrs("cmpl-b2-0", queue=0.0, prompt=5), span_id="2")]
        ),
    ]


def test_otlp_json_lines_map_each_span_to_lifecycle_events(tmp_path: Path) -> None:
    f = tmp_path / "otel.json"
    f.write_text("\n".join(_two_lines()) + "\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    src = ingest(db, f).sources[0]
    assert src.format == "otlp_json"
    assert _events(db) == [
        ("chatcmpl-a1", "arrived", 0.0, 120, "vllm-0", 1),
        ("chatcmpl-a1", "scheduled", 0.25, None, "vllm-0", 1),
        ("chatcmpl-a1", "first_token", 0.5, None, "vllm-0", 1),
        ("chatcmpl-a1", "finished", 2.0, None, "vllm-0", 1),
        ("cmpl-b2-0", "arrived", 1.0, 5, None, 2),
        ("cmpl-b2-0", "scheduled", 1.0, None, None, 2),
        ("cmpl-b2-0", "first_token", 1.5, None, None, 2),
        ("cmpl-b2-0", "finished", 3.0, None, None, 2),
    ]
    assert rows(db, "select execution_id, external_id, client_id from request_ids") == [
        ("chatcmpl-a1", "chatcmpl-a1", "a1"),
        ("cmpl-b2-0", "cmpl-b2-0", "b2"),
    ]
    assert _tally(src.notes[0]) == (3, 2, 0, 1, 0, 8, 2)
    assert "POST /v1/chat 1x" in src.notes[0]
    assert src.rows == 8 + 2
    assert any("80 output tokens on 2 spans" in n for n in src.notes)


def test_jaeger_export_gives_the_same_events_as_otlp(tmp_path: Path) -> None:
    f = tmp_path / "jaeger.json"
    f.write_text(
        jaeger_doc(
            [
                jaeger_span(T0, vllm_attrs("chatcmpl-a1")),
                jaeger_span(T0 + 1, vllm_attrs("cmpl-b2-0", queue=0.0, prompt=5), span_id="2"),
            ],
            {"k8s.pod.name": "vllm-0"},
        ),
        encoding="utf-8",
    )
    db = tmp_path / "w.duckdb"
    src = ingest(db, f).sources[0]
    assert src.format == "jaeger_json"
    got = [(e, ev, t, p, r) for e, ev, t, p, r, _ in _events(db)]
    assert got == [
        (e, ev, t, p, "vllm-0")
        for e, ev, t, p in [
            ("chatcmpl-a1", "arrived", 0.0, 120),
            ("chatcmpl-a1", "scheduled", 0.25, None),
            ("chatcmpl-a1", "first_token", 0.5, None),
            ("chatcmpl-a1", "finished", 2.0, None),
            ("cmpl-b2-0", "arrived", 1.0, 5),
            ("cmpl-b2-0", "scheduled", 1.0, None),
            ("cmpl-b2-0", "first_token", 1.5, None),
            ("cmpl-b2-0", "finished", 3.0, None),
        ]
    ]
    lines = f.read_text().splitlines()
    span_lines = [i for i, ln in enumerate(lines, 1) if '"traceID"' in ln][1:3]
    assert [r[0] for r in rows(db, "select distinct source_row from events order by 1")] == [
        n - 1 for n in span_lines
    ]  # each span's opening brace


def test_jaeger_traces_one_per_line_stream(tmp_path: Path) -> None:
    """`jq -c '.data[]'` of an export: one trace per line."""
    doc = json.loads(jaeger_doc([jaeger_span(T0, vllm_attrs("chatcmpl-x"))]))
    f = tmp_path / "traces.jsonl"
    f.write_text(json.dumps(doc["data"][0]) + "\n" + json.dumps(doc["data"][0]) + "\n")
    src = ingest(tmp_path / "w.duckdb", f).sources[0]
    assert src.format == "jaeger_json"
    assert _tally(src.notes[0]) == (2, 1, 1, 0, 0, 4, 1)  # the second is the same span


def test_an_aborted_span_has_no_first_token_and_ends_aborted(tmp_path: Path) -> None:
    """Newer vLLM: finish reason abort, first_token_latency left at 0, prefill negative."""
    f = tmp_path / "otel.json"
    attrs = vllm_attrs(
        "chatcmpl-gone", ttft=0.0, prefill=-1764460800.5, e2e=3.0, finish='["abort"]'
    )
    f.write_text(otlp_request([otlp_span(T0, attrs)]) + "\n")
    db = tmp_path / "w.duckdb"
    src = ingest(db, f).sources[0]
    assert [(ev, t) for _, ev, t, *_ in _events(db)] == [
        ("arrived", 0.0),
        ("scheduled", 0.25),
        ("aborted", 3.0),
    ]
    assert "finish reason abort: 1 here" in src.notes[1]
    assert any("gen_ai.latency.time_in_model_prefill 1x" in n for n in src.notes)


def test_missing_latencies_fall_back_and_say_so(tmp_path: Path) -> None:
    f = tmp_path / "otel.json"
    attrs = vllm_attrs("chatcmpl-q", ttft=None, e2e=None)
    f.write_text(otlp_request([otlp_span(T0, attrs, length=4.0)]) + "\n")
    db = tmp_path / "w.duckdb"
    src = ingest(db, f).sources[0]
    assert [(ev, t) for _, ev, t, *_ in _events(db)] == [
        ("arrived", 0.0),
        ("scheduled", 0.25),
        ("first_token", 0.45),  # queue + prefill
        ("finished", 4.0),  # the span's end
    ]
    note = next(n for n in src.notes if n.startswith("spans without"))
    assert "first_token from time_in_queue + time_in_model_prefill 1x" in note
    assert "end from the span's end time 1x" in note


def test_a_resent_request_id_makes_a_distinct_execution(tmp_path: Path) -> None:
    f = tmp_path / "otel.json"
    spans = [
        otlp_span(T0, vllm_attrs("chatcmpl-r"), span_id="a"),
        otlp_span(T0 + 5, vllm_attrs("chatcmpl-r"), span_id="b"),
    ]
    f.write_text(otlp_request(spans) + "\n")
    db = tmp_path / "w.duckdb"
    ingest(db, f)
    assert rows(db, "select execution_id, external_id, client_id from request_ids") == [
        ("chatcmpl-r", "chatcmpl-r", "r"),
        ("chatcmpl-r#2", "chatcmpl-r", "r"),
    ]


def test_a_span_without_request_id_stops_with_file_and_line(tmp_path: Path) -> None:
    f = tmp_path / "otel.json"
    lines = _two_lines()
    lines.append(otlp_request([otlp_span(T0 + 9, vllm_attrs(None), span_id="9")]))
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        InputError, match=r"otel\.json:3: an llm_request span without gen_ai\.request\.id"
    ):
        ingest(tmp_path / "w.duckdb", f)
    assert not (tmp_path / "w.duckdb").exists() or rows(
        tmp_path / "w.duckdb", "select count(*) from events"
    ) == [(0,)]


def test_a_start_in_milliseconds_is_refused_naming_the_unit(tmp_path: Path) -> None:
    """startTimeUnixNano written in milliseconds would read as 1970-01-21: refused."""
    f = tmp_path / "otel.json"
    lines = _two_lines()
    span = otlp_span(T0 + 9, vllm_attrs("cmpl-ms"), span_id="9")
    span["startTimeUnixNano"] = str(round((T0 + 9) * 1e3))
    lines.append(otlp_request([span]))
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(
        InputError,
        match=r"otel\.json:3: startTimeUnixNano: \d+ is not between 1973-03-03 and 2100-01-01 as"
        r" epoch nanoseconds; as milliseconds it is 2025-11-30",
    ):
        ingest(tmp_path / "w.duckdb", f)


def test_skip_mode_keeps_bad_spans_and_cut_lines_in_rejects(tmp_path: Path) -> None:
    f = tmp_path / "otel.json"
    lines = _two_lines()
    lines.insert(1, otlp_request([otlp_span(T0 + 9, vllm_attrs(None), span_id="9")]))
    lines.append(lines[0][: len(lines[0]) // 2])  # a batch cut while being written
    f.write_text("\n".join(lines) + "\n")
    db = tmp_path / "w.duckdb"
    src = ingest(db, f, on_error="skip").sources[0]
    assert src.rejected == 2
    got = rows(db, "select line, reason from rejects order by line")
    assert [g[0] for g in got] == [2, 4]
    assert got[0][1].startswith("an llm_request span without gen_ai.request.id")
    assert got[1][1].startswith("malformed JSON")
    assert rows(db, "select count(distinct execution_id) from events") == [(2,)]


def test_a_malformed_jaeger_document_names_its_line(tmp_path: Path) -> None:
    text = jaeger_doc([jaeger_span(T0, vllm_attrs("chatcmpl-a"))]).replace('"duration"', "duration")
    f = tmp_path / "jaeger.json"
    f.write_text(text)
    bad = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip().startswith("duration"))
    with pytest.raises(InputError, match=rf"jaeger\.json:{bad}: malformed JSON"):
        ingest(tmp_path / "w.duckdb", f)


def test_a_document_over_the_size_bound_is_refused_with_the_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(otel_json, "MAX_DOCUMENT_BYTES", 200)
    f = tmp_path / "jaeger.json"
    f.write_text(jaeger_doc([jaeger_span(T0, vllm_attrs("chatcmpl-a"))]))
    with pytest.raises(InputError, match=r"jq -c '\.data\[\]'"):
        ingest(tmp_path / "w.duckdb", f)


def test_gzipped_lines_and_a_forced_format_read_the_same(tmp_path: Path) -> None:
    f = tmp_path / "otel.json.gz"
    f.write_bytes(gzip.compress(("\n".join(_two_lines()) + "\n").encode()))
    src = ingest(tmp_path / "a.duckdb", f).sources[0]
    forced = ingest(tmp_path / "b.duckdb", f, fmt="otlp_json", kind="engine").sources[0]
    assert src.format == forced.format == "otlp_json"
    assert src.rows == forced.rows == 10


def test_a_forced_format_on_another_file_rejects_its_records(tmp_path: Path) -> None:
    f = tmp_path / "x.jsonl"
    f.write_text('{"call_id": "c", "attempt": 0}\n')
    with pytest.raises(InputError, match=r"x\.jsonl:1: expected an OTLP JSON export"):
        ingest(tmp_path / "w.duckdb", f, fmt="otlp_json")


def test_a_binary_collector_file_is_refused_with_what_to_configure(tmp_path: Path) -> None:
    f = tmp_path / "traces.pb"
    f.write_bytes(b"\x00\x00\x00\x20\x28\xb5\x2f\xfd" + bytes(range(40)))
    with pytest.raises(InputError, match="format: json"):
        ingest(tmp_path / "w.duckdb", f)


# -- property: what is written is read back ---------------------------------------------------
latency = st.one_of(st.none(), st.floats(0, 100, allow_nan=False).map(lambda x: round(x, 3)))


@pytest.mark.slow
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    queue=latency,
    ttft=latency,
    e2e=st.floats(0.001, 200).map(lambda x: round(x, 3)),
    prompt=st.integers(0, 100_000),
    jaeger=st.booleans(),
)
def test_written_span_latencies_come_back_as_event_times(
    tmp_path_factory: pytest.TempPathFactory,
    queue: float | None,
    ttft: float | None,
    e2e: float,
    prompt: int,
    jaeger: bool,
) -> None:
    d = tmp_path_factory.mktemp("prop")
    attrs = vllm_attrs("chatcmpl-p", queue=queue, ttft=ttft, e2e=e2e, prefill=None, prompt=prompt)
    f = d / "t.json"
    f.write_text(
        jaeger_doc([jaeger_span(T0, attrs)]) if jaeger else otlp_request([otlp_span(T0, attrs)])
    )
    db = d / "w.duckdb"
    ingest(db, f)
    want = [("arrived", 0.0, prompt)]
    want += [("scheduled", queue, None)] if queue is not None else []
    want += [("first_token", ttft, None)] if ttft is not None else []
    want += [("finished", e2e, None)]
    got = rows(
        db,
        "select event, round(t - $t0, 6), prompt_tokens from events order by t, event",
        {"t0": T0},
    )
    assert sorted(got, key=repr) == sorted(want, key=repr)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["otlp_json", "jaeger_json", None])
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.lists(
        st.sampled_from(
            [
                '{"resourceSpans": [',
                '{"data": [{"traceID": "1", "spans": [',
                "]",
                "}",
                ",",
                "{",
                '"startTimeUnixNano": "x"',
                '{"name": "llm_request"}',
                "null",
                "\xff",
            ]
        ),
        max_size=10,
    ).map(lambda p: "\n".join(p).encode("utf-8", errors="surrogatepass")),
    skip=st.booleans(),
)
def test_garbage_traces_give_input_errors_only(
    tmp_path_factory: pytest.TempPathFactory, fmt: str | None, data: bytes, skip: bool
) -> None:
    d = tmp_path_factory.mktemp("fuzz")
    p = d / "t.json"
    p.write_bytes(data)
    with contextlib.suppress(InputError):
        ingest(d / "w.duckdb", p, fmt=fmt, on_error="skip" if skip else "fail")


def test_the_example_line_in_the_docs_ingests_as_written(tmp_path: Path) -> None:
    doc = (Path(__file__).resolve().parent.parent / "docs" / "formats.md").read_text()
    doc = doc.split("## vLLM OpenTelemetry traces", 1)[1]
    block = re.search(r"```json\n(.*?)\n```", doc, re.DOTALL)
    assert block is not None
    f = tmp_path / "otel.json"
    f.write_text(block.group(1) + "\n")
    db = tmp_path / "w.duckdb"
    ingest(db, f)
    assert [(ev, t, p) for _, ev, t, p, *_ in _events(db)] == [
        ("arrived", 0.0, 120),
        ("scheduled", 0.25, None),
        ("first_token", 0.5, None),
        ("finished", 2.0, None),
    ]
