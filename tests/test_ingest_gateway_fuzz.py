"""Garbage in any gateway/load-test format gives InputError (FILE:LINE) or a stored result,
never a crash (the same harness idea as test_ingest_fuzz.py, for the formats it does not list)."""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relplan.errors import InputError
from relplan.ingest import IngestOptions, ingest_paths

FORMATS = ["envoy_text", "nginx", "kong", "litellm", "guidellm", "vllm_bench"]
FRAGMENTS = [
    '{"tries": [',
    '"started_at": 1',
    '{"request_id": "x", "spend": 0, "startTime": "2025-01-01 00:00:00"}',
    '{"benchmarks": [{"requests": {"successful": [{}]}}]}',
    '{"date": "x", "completed": 1, "failed": 0, "start_times": [1, "a"]}',
    '[2025-11-30T00:00:00Z] "GET / HTTP/1.1" 200 - 1 2 3 - "-" "-" "-" "-" "-"',
    '1.2.3.4 - - [12/Jul/2019:14:28:22 +0000] "GET / HTTP/1.1" 499 0 "-" "-" 1 1 [a] [] -',
    "[",
    "]",
    ",",
    "null",
    "\xff",
]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", [*FORMATS, None])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=10)), max_size=8).map(
            lambda parts: "\n".join(parts).encode("utf-8", errors="surrogatepass")
        ),
        st.binary(max_size=100),
    ),
    st.sampled_from(["fail", "skip"]),
    st.sampled_from(["input.txt", "input.csv"]),
)
def test_garbage_gives_input_errors_only(
    fmt: str | None, data: bytes, on_error: str, name: str
) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name
        p.write_bytes(data)
        with contextlib.suppress(InputError):
            ingest_paths(Path(d) / "w.duckdb", [p], IngestOptions(fmt=fmt, on_error=on_error))
