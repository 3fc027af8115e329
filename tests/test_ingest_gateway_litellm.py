"""LiteLLM spend logs and the standard logging payload (docs/formats.md).

Published: LiteLLM's own test fixtures (one SpendLogs row, one StandardLoggingPayload; both
with null retry counts). No published export has attempted_retries > 0: the rows with
retries here are hand-made from the documented columns, and say so.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from relplan.errors import InputError
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest, write_lines

PUB = Path(__file__).resolve().parent / "data" / "published"
ATTEMPTS = (
    "select call_id, attempt, t_sent, t_end, outcome, status, replica, model, prompt_tokens"
    " from attempts order by call_id, attempt"
)
START = 1737710446.847371  # 2025-01-24 09:20:46.847371, taken as UTC
END = 1737710446.851954


@pytest.mark.parametrize(
    ("name", "call_id", "replica"),
    [
        (
            "litellm_spend_logs_payload_fixture.json",
            "chatcmpl-2283081b-dc89-41f6-93e6-d4f914774027",
            None,
        ),
        (
            "litellm_standard_logging_payload_fixture.json",
            "chatcmpl-2299b6a2-82a3-465a-b47c-04e685a2227f",
            "https://api.openai.com",
        ),
    ],
)
def test_published_fixture_is_one_call_and_amplification_is_not_measurable(
    tmp_path: Path, name: str, call_id: str, replica: str | None
) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / name)
    src = rep.sources[0]
    assert (src.format, src.rows, src.rejected) == ("litellm", 1, 0)
    assert rows(db, ATTEMPTS) == [
        (
            call_id,
            0,
            pytest.approx(START),
            pytest.approx(END),
            "delivered",
            200,
            replica,
            "gpt-4o",
            10,
        )
    ]
    assert any("not measurable for 1 of 1 calls" in n for n in src.notes)


def _row(
    rid: str, retries: int | None, fallbacks: int | None, status: str, code: str
) -> dict[str, object]:
    meta = {
        "attempted_retries": retries,
        "attempted_fallbacks": fallbacks,
        "error_information": {"error_code": code} if code else None,
    }
    return {
        "request_id": rid,
        "call_type": "acompletion",
        "spend": 0.0,
        "startTime": "2025-11-30 00:00:00.000",
        "endTime": "2025-11-30 00:00:09.500",
        "api_base": "http://vllm-1:8000/v1",
        "model_group": "llama",
        "model": "llama",
        "prompt_tokens": 100,
        "status": status,
        "metadata": json.dumps(meta),
    }


def test_retry_counts_become_attempts_known_by_count_only(tmp_path: Path) -> None:
    """Hand-made rows: 2 retries; 1 retry + 1 fallback; a rate-limited failure."""
    recs = [
        _row("c1", 2, None, "success", ""),
        _row("c2", 1, 1, "success", ""),
        _row("c3", 0, 0, "failure", "429"),
    ]
    p = write_lines(tmp_path / "spend.jsonl", [json.dumps(r) for r in recs])
    db = tmp_path / "w.duckdb"
    rep = ingest(db, p)
    t0 = 1764460800.0
    got = rows(db, ATTEMPTS)
    assert [g[:2] + g[4:7] for g in got] == [
        ("c1", 0, "error", None, None),
        ("c1", 1, "error", None, None),
        ("c1", 2, "delivered", 200, "http://vllm-1:8000/v1"),
        ("c2", 0, "error", None, None),
        ("c2", 1, "error", None, None),
        ("c2", 2, "delivered", 200, "http://vllm-1:8000/v1"),
        ("c3", 0, "shed", 429, "http://vllm-1:8000/v1"),
    ]
    assert got[0][2:4] == (t0, t0)  # placed at startTime, zero length
    assert got[2][2:4] == (t0, t0 + 9.5)
    assert any("4 attempts are known by count only" in n for n in rep.sources[0].notes)


@pytest.mark.parametrize(
    ("retries", "said"),
    [
        (-1, "metadata.attempted_retries (-1) is not a whole number >= 0"),
        (10**9, "metadata.attempted_retries (1000000000) is 1000000000, more than 1000 tries"),
        (10**30, "metadata.attempted_retries (1000000000000000000000000000000) is not a whole"),
    ],
)
def test_impossible_retry_counts_are_refused_with_their_line(
    tmp_path: Path, retries: int, said: str
) -> None:
    recs = [_row("c1", 1, 0, "success", ""), _row("c2", retries, 0, "success", "")]
    p = write_lines(tmp_path / "spend.jsonl", [json.dumps(r) for r in recs])
    with pytest.raises(InputError, match=rf"spend\.jsonl:2: {re.escape(said)}"):
        ingest(tmp_path / "w.duckdb", p)


def test_spend_logs_csv_export_reads_like_the_json(tmp_path: Path) -> None:
    recs = [_row("c1", 1, 0, "success", ""), _row("c2", None, None, "failure", "500")]
    p = tmp_path / "LiteLLM_SpendLogs.csv"
    with p.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(recs[0]))
        w.writeheader()
        w.writerows(recs)
    db = tmp_path / "w.duckdb"
    rep = ingest(db, p)
    assert rep.sources[0].format == "litellm"
    assert [g[:2] + g[4:6] for g in rows(db, ATTEMPTS)] == [
        ("c1", 0, "error", None),
        ("c1", 1, "delivered", 200),
        ("c2", 0, "error", 500),
    ]
    assert any("not measurable for 1 of 2 calls" in n for n in rep.sources[0].notes)
