"""The ingest's words live in relplan/text/ingest.py (issue 29): the ingest names each note by
a code of `relplan.ingest.outcome.Said` with its numbers and names, and the text module words
every code and no other. The words are the ones the ingest modules built in place before they
moved (the expected strings below are theirs, copied from the code they replaced); the notes
the output tests read (ingest, inspect, the docs examples) check the rest.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import get_args

import pytest

from relplan.errors import InputError
from relplan.ingest import foreign, outcome
from relplan.ingest.files import LineError
from relplan.text import ingest as words
from tests.helpers.ingest import ingest
from tests.test_ingest_otel import T0, otlp_request, otlp_span, vllm_attrs


def test_the_text_module_words_every_code_and_no_other() -> None:
    assert set(words.SENTENCES) == set(get_args(outcome.Said))


def test_say_reaches_the_words_by_name() -> None:
    assert outcome.say("repeated_in_ingest", path="a.jsonl") == (
        "same content as a.jsonl earlier in this ingest, nothing added"
    )


@pytest.mark.parametrize(
    ("code", "values", "said"),
    [
        (
            "already_stored",
            {"source": 3, "path": None},
            "already in the workspace as source 3: same content, nothing added",
        ),
        (
            "already_stored",
            {"source": 3, "path": "old/a.jsonl"},
            "already in the workspace as source 3 (old/a.jsonl): same content, nothing added",
        ),
        (
            "already_attached",
            {"source": 2},
            "already attached as source 2: same files, nothing added",
        ),
        (
            "whole_second_twin",
            {"n": 40, "fine": 1, "matched": 38},
            "its 40 attempts are the requests of source 1 told in whole seconds (38 pair by end"
            " second, status and outcome): source 1's finer times are kept, these are not stored",
        ),
        (
            "refined_times",
            {"n": 7, "coarse": 2, "fine": 1, "by_engine": False},
            "7 whole-second event times of source 2 set to the finer times of the same events"
            " inside that second, from the gateway attempts they joined (source 1)",
        ),
    ],
)
def test_the_words_are_the_ones_built_in_place_before(
    code: outcome.Said, values: dict[str, object], said: str
) -> None:
    assert outcome.say(code, **values) == said


def test_the_closing_lines_of_ingest_are_worded_by_the_text_module() -> None:
    # relplan/text/ingest.py's render_ingest: the Sources table, then each source's notes,
    # ignored columns and refused records, then the inputs skipped (the words outcome.py and
    # contents.py built before the tables moved, issue 29)
    src = outcome.SourceReport(
        source_id=4,
        path="/nowhere/a.jsonl",
        kind="proxy",
        format="canonical",
        rows=1200,
        rejected=12,
        t_min=1764460800.0,
        t_max=1764460860.5,
        unknown_columns=["x", "y"],
        notes=["a note"],
    )
    skipped = outcome.SkippedInput(path="b.log", reason="not a known input (text)")
    rep = outcome.IngestReport(sources=[src], skipped=[skipped], rows_by_table={})
    assert words.render_ingest(rep).splitlines() == [
        "source  kind   format      rows  rejected  span (UTC)                        path",
        "------  -----  ---------  -----  --------  --------------------------------  ----------------",
        "     4  proxy  canonical  1,200        12  2025-11-30T00:00:00.000Z +60.5 s  /nowhere/a.jsonl",
        "note: source 4: a note",
        "note: source 4: ignored columns x, y",
        "note: source 4: 12 records refused, kept in rejects (relplan inspect lists them)",
        "skipped b.log: not a known input (text)",
    ]
    empty = outcome.IngestReport(sources=[], skipped=[], rows_by_table={})
    assert words.render_ingest(empty) == "nothing new ingested"


def test_a_line_error_is_the_reason_itself() -> None:
    why = LineError("$status 'x' is not an HTTP status")
    assert isinstance(why, str)
    assert (why, f"{why}", str(why)) == ("$status 'x' is not an HTTP status",) * 3


@pytest.mark.slow  # about 1.3 s: a whole ingest of a trace file
def test_the_notes_of_a_trace_file_read_as_before(tmp_path: Path) -> None:
    """Every note a trace file can raise, for hand-made vLLM spans (tests/test_ingest_otel.py's
    helpers): the expected lines are what relplan said before the words moved (main at
    522a6f4, the same file ingested)."""
    spans = [
        otlp_span(T0, vllm_attrs("a", finish='["abort"]'), span_id="01"),
        otlp_span(T0 + 1, vllm_attrs("a"), span_id="02"),
        otlp_span(T0 + 2, vllm_attrs("b", ttft=None, queue=-1.0), span_id="03"),
        otlp_span(T0 + 3, vllm_attrs("c", finish='["length"]'), span_id="04"),
        *[otlp_span(T0 + 4 + i, {}, name=f"other{i % 7}", span_id=f"1{i}") for i in range(9)],
    ]
    f = tmp_path / "spans.otlp.jsonl"
    f.write_text(otlp_request(spans, {"k8s.pod.name": "vllm-0"}) + "\n")
    (src,) = ingest(tmp_path / "w.duckdb", f).sources
    assert src.notes == [
        "13 spans: 4 llm_request spans stored, 0 duplicate llm_request spans merged, 9 other"
        " spans ignored (other0 2x, other1 2x, other2 1x, other3 1x, other4 1x, 2 more names),"
        " 0 records rejected; 14 events, 4 request ids",
        "aborted requests may be missing: older vLLM releases export no llm_request span for a"
        " request the client abandoned (newer ones export one with finish reason abort: 1 here)",
        "finish reasons: abort 1x, length 1x, stop 2x (abort and error stored as aborted)",
        "spans without: time_to_first_token 1x (no event where a time is missing)",
        "negative or non-numeric latencies stored as NULL: gen_ai.latency.time_in_queue 1x",
        "1 spans repeat an earlier gen_ai.request.id (a resent X-Request-Id): stored as <id>#2,"
        " #3, ... so executions stay distinct",
        "gen_ai.usage.completion_tokens (160 output tokens on 4 spans) is not stored: the events"
        " table has no output-token column",
        "replica from resource attributes: k8s.pod.name 4x",
    ]


def test_a_parquet_file_of_other_columns_is_refused_in_the_same_words(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    f = tmp_path / "unknown.parquet"
    pq.write_table(pa.table({"foo": [1], "bar": [2]}), f)
    with pytest.raises(InputError) as e:
        ingest(tmp_path / "w.duckdb", f)
    assert e.value.reason == (
        "cannot tell what this Parquet file holds (columns: bar, foo); expected the proxy columns"
        " (call_id, attempt, t_sent, t_end, outcome, ...) or the engine columns (type, t,"
        " execution_id, step, ...)"
    )


def test_every_kind_of_file_that_is_no_input_is_worded() -> None:
    kinds = {k for _, k in foreign._MAGIC} | set(foreign._NAMED.values()) | {"text"}
    assert kinds == set(words.FILE_KINDS)


@pytest.mark.parametrize(
    ("name", "head", "said"),
    [
        ("a.png", b"\x89PNG\r\n\x1a\nxx", "a PNG image"),
        ("notes.zip", b"PK\x03\x04xx", "a zip archive (unpack it first)"),
        ("m.toml", b"a = 1", "a TOML file (a gateway mapping file is passed with --map)"),
        ("README", b"hello", "a text document"),
        ("x.foo", b"x", "a .foo file"),
        ("noext", b"x", "a file without a known extension"),
    ],
)
def test_a_file_that_is_no_input_is_named_as_before(name: str, head: bytes, said: str) -> None:
    """The words main (522a6f4) gave for these files in a folder (skipped, with why)."""
    assert foreign.describe(name, head) == said


def _says(root: Path) -> list[tuple[str, str, set[str]]]:
    """Each `say("code", name=...)` call under `root`: (where, code, the names it passes)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "say"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                names = {kw.arg for kw in node.keywords if kw.arg is not None}
                out.append((f"{path.name}:{node.lineno}", str(node.args[0].value), names))
    return out


def test_each_say_passes_the_values_its_words_take() -> None:
    """`say(code, **values)` is not type-checked against the function that words the code:
    here each call in the ingest names exactly that function's parameters, and every code is
    said somewhere."""
    said = _says(Path(outcome.__file__).parent)
    wrong = [
        (where, code, names)
        for where, code, names in said
        if names != set(inspect.signature(words.SENTENCES[code]).parameters)
    ]
    assert wrong == []
    assert {code for _, code, _ in said} == set(words.SENTENCES)
