"""Every published vLLM server-log excerpt in tests/data/published (sources in SOURCES.md there)
ingests with each line stored, merged into another line's row, ignored with a note, or
rejected; expectations per file were checked by hand against the excerpt."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.helpers.ingest import ingest

PUBLISHED = Path(__file__).resolve().parent / "data" / "published"
LOGS = sorted(PUBLISHED.glob("vllm_v*_server_log_*.txt"))
TALLY = re.compile(
    r"^(\d+) lines: (\d+) stored.*?, (\d+) merged.*?, (\d+) ignored.*?, (\d+) rejected;"
    r" (\d+) events, (\d+) request ids$"
)

# file -> (events by kind, stats lines, metric samples, lines ignored)
EXPECTED: dict[str, tuple[dict[str, int], int, int, int]] = {
    "vllm_v0_server_log_issue12314.txt": ({"arrived": 1}, 5, 35, 0),
    "vllm_v0_server_log_issue2484.txt": ({"aborted": 9}, 0, 0, 0),
    "vllm_v0_server_log_issue9640.txt": ({"finished": 1}, 2, 14, 2),  # 2 uvicorn access lines
    "vllm_v0_server_log_kserve4470.txt": ({"arrived": 1}, 1, 7, 1),
    "vllm_v0_server_log_librechat5116.txt": ({"arrived": 1, "aborted": 1}, 0, 0, 1),
    "vllm_v0_server_log_pr9023.txt": ({"arrived": 2}, 0, 0, 0),
    "vllm_v1_server_log_issue16361.txt": ({"arrived": 1}, 2, 12, 0),
    "vllm_v1_server_log_issue34503.txt": ({"arrived": 1}, 0, 0, 4),  # uvicorn start-up, access
    "vllm_v1_server_log_pr37307.txt": ({}, 5, 30, 0),
    # issue 23: a viewer's dated prefix, iteration details, DP = 2 with MFU, stern's prefix
    "vllm_v1_server_log_issue18916.txt": ({"arrived": 1}, 1, 6, 1),  # 1 uvicorn access line
    # iteration lines: per line an elapsed-time sample and its four counts apart
    "vllm_v1_server_log_pr31193.txt": ({}, 3, 15, 0),
    "vllm_v1_server_log_pr30738.txt": ({}, 4, 24, 0),  # MFU noted, not stored
    "vllm_v1_server_log_pr39064.txt": ({}, 3, 18, 4),  # 4 /metrics access lines
    # issue 23 part 2: kubectl --timestamps stamps; Deferred and External prefix cache hit
    # rate (noted, not stored), 2 SpecDecoding lines and 1 uvicorn access line ignored
    "vllm_v1_server_log_kubectl_timestamps_tt3359.txt": ({}, 4, 24, 0),
    "vllm_v1_server_log_deferred_external_prefix_ascend11876.txt": ({}, 2, 12, 3),
    # two DEBUG stats lines with `MM cache hit rate` (noted, not stored)
    "vllm_v1_server_log_mm_cache_issue40856.txt": ({}, 2, 12, 0),
    # docker compose's `vllm-1  | `: 1 SpecDecoding and 1 uvicorn access line ignored
    "vllm_v1_server_log_docker_compose_strix_halo73.txt": ({}, 3, 18, 2),
    # V0's prefix-cache rates on a line of their own (`Prefix cache hit rate: GPU: .., CPU: ..`)
    "vllm_v0_server_log_cpu_prefix_rate_pr18674.txt": ({}, 6, 27, 0),
}
# Published logs with no line relplan stores, refused with the reason
# (tests/test_ingest_vllm_published_wave2.py checks the message).
NOTHING_TO_STORE = {"vllm_v1_server_log_journald_proxmoxved2047.txt"}


Query = Callable[..., list[tuple[Any, ...]]]
Ingested = Callable[[Path], tuple[Query, Any]]


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ingested]:
    """`ingested(log)`: a query function on the workspace holding that log alone and the
    log's source; each log is ingested once per module (the workspaces are only read)."""
    done: dict[Path, tuple[Query, Any]] = {}
    cons: list[duckdb.DuckDBPyConnection] = []

    def get(f: Path) -> tuple[Query, Any]:
        if f not in done:
            db = tmp_path_factory.mktemp("log") / "w.duckdb"
            src = ingest(db, f, year=2025).sources[0]
            con = duckdb.connect(str(db), read_only=True)
            cons.append(con)

            def query(sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
                return con.execute(sql, params or {}).fetchall()

            done[f] = (query, src)
        return done[f]

    yield get
    for con in cons:
        con.close()


def test_every_published_log_has_expectations() -> None:
    assert [f.name for f in LOGS] == sorted(set(EXPECTED) | NOTHING_TO_STORE)


@pytest.mark.parametrize("f", [f for f in LOGS if f.name in EXPECTED], ids=lambda f: f.name)
def test_published_log_every_line_accounted_for(ingested: Ingested, f: Path) -> None:
    rows, src = ingested(f)
    assert (src.kind, src.format, src.rejected) == ("engine", "vllm_log", 0)
    m = TALLY.match(src.notes[0])
    assert m, src.notes[0]
    total, stored, merged, ignored, rejected, events, ids = map(int, m.groups())
    assert total == len(f.read_text(encoding="utf-8").splitlines())
    assert stored + merged + ignored + rejected == total
    stored_lines = rows(
        "select count(distinct source_row) from (select source_row from events"
        " union all select source_row from metric_samples"
        " union all select source_row from request_ids"
        " union all select source_row from engine_stats)",
    )[0][0]
    assert stored_lines == stored
    by_kind, stats_lines, samples, ignored_want = EXPECTED[f.name]
    got = dict(rows("select event, count(*) from events group by event"))
    assert got == by_kind
    assert events == sum(by_kind.values())
    assert rows("select count(*) from metric_samples")[0][0] == samples
    assert rows("select count(distinct source_row) from metric_samples")[0][0] == stats_lines
    assert ignored == ignored_want
    assert rows("select count(*) from request_ids")[0][0] == ids
    stats_rows = rows("select count(*) from engine_stats")[0][0]
    assert src.rows == events + samples + ids + stats_rows


def test_v1_internal_id_keeps_external_and_client_id(
    ingested: Ingested,
) -> None:
    """Issue 34503: Received chatcmpl-a269fdcb7c6ce890, Added chatcmpl-a269fdcb7c6ce890-a8a65d16."""
    rows, _ = ingested(PUBLISHED / "vllm_v1_server_log_issue34503.txt")
    assert rows("select execution_id, event, t, source_row from events") == [
        ("chatcmpl-a269fdcb7c6ce890-a8a65d16", "arrived", 1739446413.0, 4)
    ]
    assert rows("select execution_id, external_id, client_id, source_row from request_ids") == [
        ("chatcmpl-a269fdcb7c6ce890-a8a65d16", "chatcmpl-a269fdcb7c6ce890", "a269fdcb7c6ce890", 5)
    ]


def test_v1_stats_lines_become_vllm_gauges(ingested: Ingested) -> None:
    """PR 37307: a loaded server, Waiting 90 -> 66 and KV 19.3 % -> 65.4 % over 40 s."""
    rows, src = ingested(PUBLISHED / "vllm_v1_server_log_pr37307.txt")
    t0 = 1742225890.0  # 2025-03-17T15:38:10Z (--year 2025)
    assert rows(
        "select t - $t0, value, labels from metric_samples"
        " where name = 'vllm:num_requests_waiting' order by t",
        {"t0": t0},
    ) == [(10.0 * i, float(90 - 6 * i), {"engine": "0"}) for i in range(5)]
    kv = rows("select value from metric_samples where name = 'vllm:kv_cache_usage_perc' order by t")
    assert [round(v, 4) for (v,) in kv] == [0.193, 0.309, 0.425, 0.542, 0.654]
    prompt = rows(
        "select value from metric_samples"
        " where name = 'vllm:avg_prompt_throughput_toks_per_s' order by t limit 1",
    )
    assert prompt == [(23998.2,)]
    assert rows("select distinct type from metric_meta") == [("gauge",)]
    assert any("5 stats lines -> 30 metric samples" in n for n in src.notes)


def test_v0_stats_line_uses_v0_names(ingested: Ingested) -> None:
    """Issue 12314: Running 2, Swapped 0, Pending 0, GPU KV 7.4 %, CPU KV 0.0 %."""
    rows, _ = ingested(PUBLISHED / "vllm_v0_server_log_issue12314.txt")
    first = rows(
        "select name, value, labels from metric_samples where source_row = 2 order by name",
    )
    assert first == [
        ("vllm:avg_generation_throughput_toks_per_s", 61.0, {}),
        ("vllm:avg_prompt_throughput_toks_per_s", 605.5, {}),
        ("vllm:cpu_cache_usage_perc", 0.0, {}),
        ("vllm:gpu_cache_usage_perc", pytest.approx(0.074), {}),
        ("vllm:num_requests_running", 2.0, {}),
        ("vllm:num_requests_swapped", 0.0, {}),
        ("vllm:num_requests_waiting", 0.0, {}),
    ]


def test_prompt_tokens_from_untruncated_token_ids(
    ingested: Ingested,
) -> None:
    """PR 9023: 'Who is afraid of the big bad wolf?' (34 characters) with 9 token ids."""
    rows, _ = ingested(PUBLISHED / "vllm_v0_server_log_pr9023.txt")
    assert rows("select execution_id, prompt_tokens from events order by source_row") == [
        ("cmpl-2cda52baff774a22ae96289bfe6633cf-0", None),  # Added only: no token ids
        ("cmpl-3ab8b1fe7d3946de8143ce0ae9ce9652-0", 9),
    ]
    assert rows("select client_id from request_ids order by source_row") == [
        ("2cda52baff774a22ae96289bfe6633cf",),
        ("3ab8b1fe7d3946de8143ce0ae9ce9652",),
    ]


def test_v0_bare_ids_have_no_client_id(ingested: Ingested) -> None:
    """Issue 2484 (vLLM 0.2): uuid-hex ids with no API prefix; nine aborts at one second."""
    rows, _ = ingested(PUBLISHED / "vllm_v0_server_log_issue2484.txt")
    assert rows("select count(distinct execution_id), count(client_id) from request_ids") == [
        (9, 0)
    ]
    assert rows("select count(distinct t) from events") == [(1,)]
