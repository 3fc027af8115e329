"""Kong http-log / file-log JSON (docs/formats.md).

Published: the Kong docs' log sample (Kong 3.8, one try) and the real `tries` array of Kong
issue 6820 (two failed tries, 504), which is a fragment: the object around it here is
hand-made from the docs' field list, and says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relplan.errors import InputError
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest, write_lines

PUB = Path(__file__).resolve().parent / "data" / "published"
ATTEMPTS = (
    "select call_id, attempt, t_sent, t_end, outcome, status, replica, source_row"
    " from attempts order by call_id, attempt"
)


def test_kong_docs_sample_is_one_call_with_one_delivered_try(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "kong_http_log_doc_sample_3.7plus.json")
    assert (rep.sources[0].format, rep.sources[0].rows, rep.sources[0].rejected) == ("kong", 1, 0)
    assert rows(db, ATTEMPTS) == [
        (
            "2f6946328ffc4946b8c9120704a4a155",
            0,
            pytest.approx(1726783839.5395),  # balancer_start_ns
            pytest.approx(1726783839.538 + 0.173),  # started_at + latencies.request
            "delivered",
            200,
            "34.237.204.224:80",
            1,
        )
    ]


def _issue6820_object() -> dict[str, object]:
    """The published tries (issue 6820) inside a hand-made request object; a third try, the
    one that answered the client with 504, is hand-made too (the excerpt was cut there)."""
    text = (PUB / "kong_tries_fragment_issue6820.txt").read_text()
    tries = json.loads("{" + text.rstrip().rstrip(",") + "]}")["tries"]
    tries.append(
        {"balancer_latency": 0, "port": 80, "ip": "172.20.0.4", "balancer_start": 1612821180458}
    )
    return {
        "started_at": 1612821178452,
        "latencies": {"request": 3007, "proxy": 3000, "kong": 7},
        "request": {"id": "6820", "headers": {"idempotency-key": "ik-1"}},
        "response": {"status": 504},
        "tries": tries,
    }


def test_published_tries_with_failed_states_become_attempts(tmp_path: Path) -> None:
    obj = _issue6820_object()
    no_tries = {**obj, "request": {"id": "r2"}, "response": {"status": 429}, "tries": []}
    # A batch as http-log sends it: a JSON array.
    p = tmp_path / "batch.json"
    p.write_text(json.dumps([obj, no_tries], indent=2))
    db = tmp_path / "w.duckdb"
    ingest(db, p)
    got = rows(db, ATTEMPTS)
    assert [g[:2] + g[4:7] for g in got] == [
        ("6820", 0, "error", 504, "172.20.0.4:80"),
        ("6820", 1, "error", 504, "172.20.0.4:80"),
        ("6820", 2, "error", 504, "172.20.0.4:80"),
        ("r2", 0, "shed", 429, None),
    ]
    assert got[0][2:4] == (pytest.approx(1612821178.453), pytest.approx(1612821179.456))
    assert got[2][3] == pytest.approx(1612821178.452 + 3.007)


def test_call_key_header_groups_requests_and_a_missing_one_names_the_record(
    tmp_path: Path,
) -> None:
    obj = _issue6820_object()
    p = write_lines(tmp_path / "kong.jsonl", [json.dumps(obj), json.dumps({**obj, "request": {}})])
    with pytest.raises(
        InputError,
        match=r"kong\.jsonl:2: request header Idempotency-Key \(the call key\) is missing",
    ):
        ingest(tmp_path / "w.duckdb", p, call_key="Idempotency-Key")
    db = tmp_path / "s.duckdb"
    rep = ingest(db, p, call_key="Idempotency-Key", on_error="skip")
    assert (rep.sources[0].rows, rep.sources[0].rejected) == (3, 1)
    assert {r[0] for r in rows(db, ATTEMPTS)} == {"ik-1"}
