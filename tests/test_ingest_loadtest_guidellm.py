"""GuideLLM `benchmarks.json` (docs/formats.md).

No GuideLLM report was published: the report here is hand-made from the 0.4 schema
(GenerativeBenchmark, GenerativeRequestStats, RequestInfo.timings), and says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

T0 = 1764460800.0


def _req(rid: str, start: float | None, end: float | None, **info: object) -> dict[str, object]:
    timings = {"targeted_start": T0, "request_start": start, "request_end": end}
    return {
        "type_": "generative_request_stats",
        "request_id": rid,
        "response_id": f"chatcmpl-{rid}",
        "prompt_tokens": 128,
        "output_tokens": 64,
        "info": {"request_id": rid, "timings": timings, **info},
    }


def _report() -> dict[str, object]:
    return {
        "benchmarks": [
            {
                "type_": "generative_benchmark",
                "metrics": {
                    "request_totals": {"successful": 3, "incomplete": 1, "errored": 1, "total": 5}
                },
                "requests": {
                    "successful": [
                        _req("a", T0 + 0.1, T0 + 2.1, status="completed"),
                        _req("b", T0 + 1.0, T0 + 3.5, status="completed"),
                    ],
                    "incomplete": [
                        _req("c", T0 + 4.0, None, status="in_progress"),
                        _req("q", None, None, status="queued"),
                    ],
                    "errored": [_req("d", T0 + 1.5, T0 + 1.6, status="errored", error="500")],
                    "total": None,
                },
            }
        ]
    }


def test_requests_become_calls_with_planned_and_sent_times(tmp_path: Path) -> None:
    p = tmp_path / "benchmarks.json"
    p.write_text(json.dumps(_report(), indent=2))
    db = tmp_path / "w.duckdb"
    rep = ingest(db, p)
    src = rep.sources[0]
    assert (src.format, src.rows, src.rejected) == ("guidellm", 4, 0)
    got = rows(
        db,
        "select call_id, t_planned, t_sent, t_end, outcome, execution_id, prompt_tokens"
        " from attempts order by call_id",
    )
    a = pytest.approx
    assert got == [
        ("a", T0, a(T0 + 0.1), a(T0 + 2.1), "delivered", "chatcmpl-a", 128),
        ("b", T0, a(T0 + 1.0), a(T0 + 3.5), "delivered", "chatcmpl-b", 128),
        ("c", T0, a(T0 + 4.0), a(T0 + 4.0), "client_gone", "chatcmpl-c", 128),
        ("d", T0, a(T0 + 1.5), a(T0 + 1.6), "error", "chatcmpl-d", 128),
    ]
    notes = " ".join(src.notes)
    assert "1 requests were never sent" in notes
    assert "lists 5 of 5" not in notes


def test_a_sampled_request_list_is_said_to_be_a_sample(tmp_path: Path) -> None:
    report = _report()
    report["benchmarks"][0]["metrics"]["request_totals"]["total"] = 50  # type: ignore[index]
    p = tmp_path / "benchmarks.json"
    p.write_text(json.dumps(report))
    rep = ingest(tmp_path / "w.duckdb", p)
    assert any("lists 5 of 50 requests (a sample)" in n for n in rep.sources[0].notes)
