"""An optional number a log gives but no column can use (beyond 64 bits, negative, not whole)
is the record's error, named by file and line, never a silent unknown: issue 25's last three
silent losses (an OTLP span's token count, LiteLLM's `prompt_tokens`, an nginx
`$upstream_status` entry) and Kong's statuses, each on a published example with one field
changed. A field the log leaves out (`-`, absent) is still an unknown, not an error.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from relplan.cli import app
from tests.helpers.fast_cli import CliRunner
from tests.helpers.fast_read import rows

PUB = Path(__file__).resolve().parent / "data" / "published"
BIG = 2**64


def _otlp(value: Any) -> tuple[str, str]:
    doc = json.loads((PUB / "otlp_json_trace_example_opentelemetry_proto.json").read_text())
    sp = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    sp["name"] = "llm_request"  # the published span given vLLM's attributes
    sp["attributes"] = [
        {"key": "gen_ai.request.id", "value": {"stringValue": "chatcmpl-abc"}},
        {"key": "gen_ai.latency.e2e", "value": {"doubleValue": 1.0}},
        {"key": "gen_ai.usage.prompt_tokens", "value": {"intValue": str(value)}},
    ]
    return "t.json", json.dumps(doc)


def _litellm(value: Any) -> tuple[str, str]:
    doc = json.loads((PUB / "litellm_spend_logs_payload_fixture.json").read_text())
    doc["prompt_tokens"] = value
    return "spend.json", json.dumps(doc)


def _nginx(value: Any) -> tuple[str, str]:
    log = PUB / "nginx_ingress_upstreaminfo_issue4312_499_retries.log"
    line = log.read_text().splitlines()[0]
    tries = "504, 504, 504, 504, 504, 504, 504, -"
    assert tries in line
    return "access.log", line.replace(tries, f"{value}, 504, 504, 504, 504, 504, 504, -") + "\n"


def _kong_status(value: Any) -> tuple[str, str]:
    doc = json.loads((PUB / "kong_http_log_doc_sample_3.7plus.json").read_text())
    doc["response"]["status"] = value
    return "kong.json", json.dumps(doc)


CASES: list[tuple[str, Callable[[Any], tuple[str, str]], str]] = [
    ("otlp", _otlp, "gen_ai.usage.prompt_tokens"),
    ("litellm", _litellm, "prompt_tokens"),
    ("nginx", _nginx, "$upstream_status entry"),
    ("kong", _kong_status, "response.status"),
]


def _ingest(tmp_path: Path, make: Callable[[Any], tuple[str, str]], value: Any) -> Any:
    name, body = make(value)
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    db = tmp_path / "w.duckdb"
    args = ["ingest", str(path), "--db", str(db)]
    if name == "access.log":
        args += ["--format", "nginx"]
    return path, db, CliRunner().invoke(app, args)


@pytest.mark.parametrize("value", [BIG, -3, 1.5], ids=["2^64", "negative", "fraction"])
@pytest.mark.parametrize(("make", "field"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_an_unusable_number_is_the_records_error(
    tmp_path: Path, make: Callable[[Any], tuple[str, str]], field: str, value: Any
) -> None:
    path, db, got = _ingest(tmp_path, make, value)
    assert got.exit_code == 2, got.output
    lines = got.stderr.splitlines()
    assert len(lines) == 1, got.stderr
    assert lines[0].startswith(f"relplan: error: {path}:"), lines[0]
    assert field in lines[0], lines[0]
    assert "is not a whole number in" in lines[0], lines[0]
    assert not db.exists()  # a failed ingest into a new path leaves no file


@pytest.mark.parametrize(("make", "field"), [c[1:] for c in CASES[:2]], ids=["otlp", "litellm"])
def test_skip_mode_counts_the_record_as_a_reject(
    tmp_path: Path, make: Callable[[Any], tuple[str, str]], field: str
) -> None:
    name, body = make(BIG)
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    db = tmp_path / "w.duckdb"
    got = CliRunner().invoke(app, ["ingest", str(path), "--db", str(db), "--on-error", "skip"])
    assert got.exit_code == 0, got.output
    rejects = rows(db, "select path, line, reason from rejects")
    assert len(rejects) == 1
    assert rejects[0][0] == str(path)
    assert field in rejects[0][2], rejects
    assert "is not a whole number in" in rejects[0][2]


def test_a_status_the_log_leaves_out_is_unknown_not_an_error(tmp_path: Path) -> None:
    _, db, got = _ingest(tmp_path, _nginx, "-")
    assert got.exit_code == 0, got.output
    statuses = [r[0] for r in rows(db, "select status from attempts order by attempt")]
    # the first try's status left out ('-'), the six 504s and the last try's '-' as logged
    assert statuses == [None, 504, 504, 504, 504, 504, 504, None]
