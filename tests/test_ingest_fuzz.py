"""Any bytes in -> either rows or a clean InputError, never another exception (every reader,
in fail and skip mode). Inputs mix random bytes with fragments of the real formats so the
parsers get past their first line."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from relplan.errors import InputError
from relplan.ingest import IngestOptions, ingest_paths

FRAGMENTS = [
    '{"call_id":"c","attempt":0,"t_sent":1,"t_end":2,"outcome":"delivered"}',
    '{"type":"step","step":1,"t_issue":1,"t_done":2,"execution_id":"e","prompt_computed":3}',
    '{"type":"event","t":"2025-11-30T00:00:00Z","execution_id":"e","event":"arrived"}',
    '{"start_time":"2025-11-30T00:00:00Z","duration":5,"response_code":200,"x-request-id":"r"}',
    '{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"a"},'
    '"values":[[1,"2"]]}]}}',
    '{"name":"run","phases":[{"name":"a","start":0,"end":1}]}',
    "call_id,attempt,t_sent,t_end,outcome",
    "c,0,1,2,delivered",
    "# TYPE a counter",
    "# EOF",
    "PAR1",
    "# SCRAPE 1764460800",
    'a_total{x="1"} 3 1764460800',
    'a{x="\\"} 1',
    "a_created 5",
    "INFO 11-30 00:00:01 [logger.py:49] Received request chatcmpl-x: params",
    "2025-11-30T00:00:01Z INFO 11-30 00:00:01 [async_llm.py:1] Added request chatcmpl-x-0a0b0c0d.",
    "INFO 11-30 00:00:02 [async_llm.py:2] Aborted request(s) chatcmpl-x-0a0b0c0d,y.",
    '"',
    "{",
    "}",
    ",",
    ":",
    "null",
    "true",
    "-1",
    "1e309",
    "NaN",
    "\x1f",
    "\x00",
    "\t",
    " ",
]
FORMATS = [
    "jsonl",
    "csv",
    "parquet",
    "openmetrics",
    "scrape",
    "query_range",
    "vllm_log",
    "envoy",
    "run_json",
    None,
]

text_input = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=12).map(
    lambda parts: "\n".join(parts).encode("utf-8", errors="surrogatepass")
)
any_input = st.one_of(text_input, st.binary(max_size=200))


def _run(data: bytes, fmt: str | None, on_error: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "input.txt"
        p.write_bytes(data)
        kind = "proxy" if fmt in ("jsonl", "csv", "parquet") else None
        with contextlib.suppress(InputError):
            ingest_paths(
                Path(d) / "w.duckdb",
                [p],
                IngestOptions(kind=kind, fmt=fmt, on_error=on_error, year=2025),
            )


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
@settings(
    max_examples=int(os.environ.get("RELPLAN_FUZZ_EXAMPLES", "20")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=any_input, skip=st.booleans())
@example(data=b"\r0", skip=False)  # once a csv.Error traceback from the header reader
def test_any_bytes_give_rows_or_a_clean_input_error(
    fmt: str | None, data: bytes, skip: bool
) -> None:
    _run(data, fmt, "skip" if skip else "fail")
