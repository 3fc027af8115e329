"""Bytes that are not UTF-8 and JSON nested too deeply, in every adapter: in skip mode a line
that is not UTF-8 is a reject with its line and the rest of the file is read; in fail mode it
is `FILE:LINE`. A JSON document (query_range, run.json) is one record: it is refused with the
line in both modes. JSON nested 10,000 deep on line 1 is a clean line-1 error or reject.

The line-based cases start from published files (tests/data/published/SOURCES.md) with one
byte of one line replaced by 0xFF."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from relplan.cli import app
from relplan.errors import InputError
from tests.helpers.fast_cli import CliRunner
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ADAPTERS, ingest

PUBLISHED = Path(__file__).resolve().parent / "data" / "published"
T0 = 1764460800

# (file, ingest options): one case per line-based adapter.
LINE_FILES: list[tuple[Path, dict[str, Any]]] = [
    (PUBLISHED / "vllm_v1_server_log_issue16361.txt", {"year": 2025}),
    (PUBLISHED / "vllm_metrics_v1_prodstack318.prom", {"at": float(T0)}),
    (ADAPTERS / "scrape.log", {}),
    (PUBLISHED / "envoy_json_format_doc_example.jsonl", {}),
    (PUBLISHED / "envoy_default_text_doc_example.log", {}),
    (PUBLISHED / "istio_envoy_text_issue45802_503_UC.log", {}),
    (PUBLISHED / "nginx_ingress_upstreaminfo_issue4312_499_retries.log", {}),
]


def _corrupt_last_line(src: Path, dst: Path) -> int:
    """Copy `src` to `dst` with one byte of its last non-blank line replaced by 0xFF; that
    line's number."""
    lines = src.read_bytes().split(b"\n")
    k = max(i for i, line in enumerate(lines) if line.strip())
    line = lines[k]
    mid = len(line) // 2
    lines[k] = line[:mid] + b"\xff" + line[mid + 1 :]
    dst.write_bytes(b"\n".join(lines))
    return k + 1


@pytest.mark.parametrize(("src", "opts"), LINE_FILES, ids=lambda v: getattr(v, "name", ""))
def test_a_line_that_is_not_utf8_is_a_reject_in_skip_mode_and_file_line_in_fail_mode(
    tmp_path: Path, src: Path, opts: dict[str, Any]
) -> None:
    path = tmp_path / src.name
    k = _corrupt_last_line(src, path)
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "fail.duckdb", path, **opts)
    assert err.value.line == k
    assert "not UTF-8" in err.value.reason
    db = tmp_path / "skip.duckdb"
    report = ingest(db, path, on_error="skip", **opts)
    got = rows(db, "select line, reason from rejects where reason like '%not UTF-8%'")
    assert [line for line, _ in got] == [k]
    assert sum(s.rejected for s in report.sources) >= 1


def _query_range(extra: bytes = b"") -> bytes:
    doc = {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [{"metric": {"__name__": "vllm:x"}, "values": [[T0, "1"]]}],
        },
    }
    return json.dumps(doc, indent=1).encode().replace(b'"vllm:x"', b'"vllm:x' + extra + b'"')


@pytest.mark.parametrize("on_error", ["fail", "skip"])
@pytest.mark.parametrize("name", ["range.json", "run.json"])
def test_a_json_document_that_is_not_utf8_is_refused_naming_line_and_column(
    tmp_path: Path, name: str, on_error: str
) -> None:
    if name == "range.json":
        data = _query_range(b"\xff")
        line = next(i for i, s in enumerate(data.split(b"\n"), 1) if b"\xff" in s)
    else:
        data = b'{"name": "r",\n "t0": 1764460800,\n "x": "\xff",\n "phases": []}'
        line = 3
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "w.duckdb", path, on_error=on_error)
    assert err.value.line == line
    assert err.value.reason.startswith("bytes that are not UTF-8 at column")


DEEP_ARRAY = "[" * 10_000 + "]" * 10_000
DEEP_OBJECT = '{"a":' + DEEP_ARRAY + "}"
JSON_FORMATS = [
    None,
    "jsonl",
    "query_range",
    "run_json",
    "envoy",
    "kong",
    "litellm",
    "otlp_json",
    "jaeger_json",
    "guidellm",
    "vllm_bench",
]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", JSON_FORMATS, ids=lambda f: f or "detected")
@pytest.mark.parametrize("text", [DEEP_ARRAY, DEEP_OBJECT], ids=["array", "object"])
def test_json_nested_10000_deep_on_line_1_is_a_clean_line_1_error_or_reject(
    tmp_path: Path, fmt: str | None, text: str
) -> None:
    path = tmp_path / "in.json"
    path.write_text(text + "\n")
    for on_error in ("fail", "skip"):
        db = tmp_path / f"{on_error}.duckdb"
        args = ["ingest", str(path), "--db", str(db), "--on-error", on_error, "--kind", "proxy"]
        if fmt is not None:
            args[-2:] = ["--format", fmt] + (["--kind", "proxy"] if fmt == "jsonl" else [])
        res = CliRunner().invoke(app, args)
        assert "Traceback" not in res.output
        assert not (res.exception and not isinstance(res.exception, SystemExit)), res.exception
        if res.exit_code == 2:
            assert "in.json:1:" in res.output, res.output
        else:
            assert res.exit_code == 0, res.output
            assert on_error == "skip"
            assert rows(db, "select line from rejects") == [(1,)]


# A label name twice in one sample: which value is meant cannot be told, so it is an error
# naming the line (a reject in skip mode), never one value silently kept.
DUP_TEXT = {
    "m.om": "# TYPE vllm:num_requests_running gauge\n"
    f'vllm:num_requests_running{{replica="r0"}} 1 {T0}\n'
    f'vllm:num_requests_running{{replica="r0",replica="r1"}} 2 {T0}\n'
    "# EOF\n",
    "metrics-1764460800.prom": "# TYPE vllm:num_requests_running gauge\n"
    'vllm:num_requests_running{replica="r0"} 1\n'
    'vllm:num_requests_running{replica="r0",replica="r1"} 2\n',
}


@pytest.mark.parametrize("name", sorted(DUP_TEXT))
def test_a_label_name_twice_in_one_text_sample_is_an_error_naming_the_line(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    path.write_text(DUP_TEXT[name])
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "fail.duckdb", path)
    assert err.value.line == 3
    assert "label 'replica' appears twice in one sample" in err.value.reason
    db = tmp_path / "skip.duckdb"
    ingest(db, path, on_error="skip")
    assert [r[0] for r in rows(db, "select line from rejects")] == [3]
    assert rows(db, "select value from metric_samples") == [(1.0,)]


@pytest.mark.parametrize("on_error", ["fail", "skip"])
def test_a_label_name_twice_in_a_query_range_series_is_an_error_naming_the_line(
    tmp_path: Path, on_error: str
) -> None:
    text = _query_range().decode().replace('"vllm:x"', '"vllm:x",\n    "a": "1",\n    "a": "2"')
    path = tmp_path / "range.json"
    path.write_text(text)
    line = next(i for i, s in enumerate(text.split("\n"), 1) if '"a": "2"' in s)
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "w.duckdb", path, on_error=on_error)
    assert (err.value.line, err.value.reason) == (
        line,
        "the key 'a' appears twice in one object; expected each key (each label name) once",
    )


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (
            "p.csv",
            "call_id,attempt,t_sent,t_end,outcome\n"
            f"c1,0,{T0},{T0 + 1},\x1b]0;owned\x07\x1b[2Jdelivered\n",
        ),
        (
            "p.jsonl",
            json.dumps(
                {"call_id": "c1", "attempt": 0, "t_sent": T0, "t_end": T0 + 1}
                | {"outcome": "\x1b]0;owned\x07\x1b[2J"}
            )
            + "\n",
        ),
    ],
)
def test_free_text_from_a_record_echoed_in_an_error_is_escaped(
    tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    res = CliRunner().invoke(app, ["ingest", str(path), "--db", str(tmp_path / "w.duckdb")])
    assert res.exit_code == 2
    assert "outcome '" in res.output
    assert "\x1b" not in res.output
    assert "\x07" not in res.output
    assert "\\x1b]0;owned\\x07" in res.output
