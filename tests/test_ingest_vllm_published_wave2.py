"""Forms of issue 23 part 2 in published vLLM logs (tests/data/published/SOURCES.md, section 1):
the RFC 3339 stamp of `kubectl logs --timestamps` as the line's clock (with the year), stats
fields relplan does not store (`Deferred`, `External prefix cache hit rate`) kept out with a
note, never a refused line, in an `Engine 001` line; docker compose's `vllm-1  | ` and
journald's `Aug 19 18:30:11 host unit[pid]: ` prefixes in front of `(APIServer pid=N)`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from relplan.errors import InputError
from relplan.ingest.detect import detect
from relplan.ingest.files import FileInfo, digest, peek
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

PUB = Path(__file__).resolve().parent / "data" / "published"
SERIES = (
    "select name, list(value order by t), list(t order by t) from metric_samples"
    " where name in ('vllm:num_requests_running', 'vllm:num_requests_waiting',"
    " 'vllm:kv_cache_usage_perc') group by 1 order by 1"
)


def _t(stamp: str) -> float:
    return dt.datetime.fromisoformat(stamp).timestamp()


def test_kubectl_timestamps_are_the_lines_clock_and_give_the_year(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "vllm_v1_server_log_kubectl_timestamps_tt3359.txt")  # no --year
    src = rep.sources[0]
    assert (src.format, src.rejected) == ("vllm_log", 0)
    assert src.notes[0].startswith("4 lines: 4 stored (4 stats)")
    times = [
        _t("2026-05-12T08:01:39.331095+00:00"),
        _t("2026-05-12T08:01:49.332184+00:00"),
        _t("2026-05-12T08:01:59.333055+00:00"),
        _t("2026-05-12T08:02:09.334253+00:00"),
    ]
    got = rows(db, SERIES)
    assert [(n, v) for n, v, _ in got] == [
        ("vllm:kv_cache_usage_perc", [0.628, 0.688, 0.745, 0.799]),
        ("vllm:num_requests_running", [9.0, 9.0, 10.0, 10.0]),
        ("vllm:num_requests_waiting", [0.0, 1.0, 0.0, 0.0]),
    ]
    for _, _, ts in got:
        assert ts == pytest.approx(times, abs=1e-6)
    assert not any("year" in n for n in src.notes)


def test_fields_not_stored_are_noted_and_the_engine_is_a_label(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "vllm_v1_server_log_deferred_external_prefix_ascend11876.txt", year=2026)
    src = rep.sources[0]
    assert src.rejected == 0
    assert src.notes[0].startswith("5 lines: 2 stored (2 stats), 0 merged, 3 ignored")
    assert (
        "stats fields not stored: Deferred (1x), External prefix cache hit rate (2x)" in src.notes
    )
    got = rows(db, SERIES)
    assert [(n, v) for n, v, _ in got] == [
        ("vllm:kv_cache_usage_perc", [0.01, 0.005]),
        ("vllm:num_requests_running", [2.0, 0.0]),
        ("vllm:num_requests_waiting", [0.0, 1.0]),
    ]
    assert rows(db, "select distinct labels['engine'] from metric_samples") == [("1",)]


def test_docker_compose_prefix_before_the_process_tag(tmp_path: Path) -> None:
    """kyuz0/amd-strix-halo-vllm-toolboxes issue 73: three `Engine 000:` stats lines behind
    `vllm-1  | (APIServer pid=1) `, a SpecDecoding line and a uvicorn line passed over."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "vllm_v1_server_log_docker_compose_strix_halo73.txt", year=2025)
    src = rep.sources[0]
    assert (src.format, src.rows, src.rejected) == ("vllm_log", 18, 0)
    assert src.notes[0].startswith("5 lines: 3 stored (3 stats), 0 merged, 2 ignored")
    got = rows(db, SERIES)
    assert [(n, v) for n, v, _ in got] == [
        ("vllm:kv_cache_usage_perc", [0.0, 0.0, 0.031]),
        ("vllm:num_requests_running", [0.0, 0.0, 1.0]),
        ("vllm:num_requests_waiting", [0.0, 0.0, 0.0]),
    ]
    assert got[0][2] == [
        _t("2025-07-02T08:34:45+00:00"),
        _t("2025-07-02T08:34:55+00:00"),
        _t("2025-07-02T08:35:55+00:00"),
    ]
    assert rows(
        db,
        "select value from metric_samples where name = 'vllm:avg_prompt_throughput_toks_per_s'"
        " order by t",
    ) == [(2564.1,), (0.0,), (2564.4,)]


def test_journald_prefix_is_read_as_a_vllm_log(tmp_path: Path) -> None:
    """community-scripts/ProxmoxVED issue 2047: start-up lines behind journald's
    `Aug 19 18:30:11 vllm vllm[8707]: (APIServer pid=8707) `. The file is a vLLM log (not
    "cannot tell what this file holds"); holding no request or stats line, it is refused
    with that reason, naming the flag that makes vLLM log requests."""
    f = PUB / "vllm_v1_server_log_journald_proxmoxved2047.txt"
    size, gz, head = peek(f)
    assert detect(FileInfo(f, size, gz, head, digest(f))).format == "vllm_log"
    with pytest.raises(InputError, match=r"no request-lifecycle lines .* --enable-log-requests"):
        ingest(tmp_path / "w.duckdb", f, year=2025)
    # The same lines with a stats line of that build appended (HAND-MADE from the V1
    # template of SOURCES.md section 1, in the journald prefix of the file) are read.
    g = tmp_path / "journal.log"
    g.write_text(
        f.read_text() + "Aug 19 18:30:21 vllm vllm[8707]: (APIServer pid=8707) INFO 08-19 18:30:21"
        " [loggers.py:271] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation"
        " throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage:"
        " 0.0%, Prefix cache hit rate: 0.0%\n"
    )
    rep = ingest(tmp_path / "w2.duckdb", g, year=2025)
    assert (rep.sources[0].rows, rep.sources[0].rejected) == (6, 0)
    assert rep.sources[0].notes[0].startswith("6 lines: 1 stored (1 stats), 0 merged, 5 ignored")
    assert rows(tmp_path / "w2.duckdb", "select distinct t from metric_samples") == [
        (_t("2025-08-19T18:30:21+00:00"),)
    ]


def test_v0_prefix_cache_rates_on_a_line_of_their_own(tmp_path: Path) -> None:
    """vLLM PR 18674 (V0 on CPU): `[metrics.py:502] Prefix cache hit rate: GPU: 0.00%, CPU:
    90.00%` after each stats line is stored as the GPU and CPU prefix-cache hit rates (it
    was passed over as "other vLLM line"); V0's `CPU KV cache usage` stays V0's own name."""
    db = tmp_path / "w.duckdb"
    rep = ingest(db, PUB / "vllm_v0_server_log_cpu_prefix_rate_pr18674.txt", year=2025)
    assert rep.sources[0].notes[0].startswith("6 lines: 6 stored (6 stats), 0 merged, 0 ignored")
    got = dict(
        rows(
            db,
            "select name, list(value order by t) from metric_samples where name in"
            " ('vllm:gpu_prefix_cache_hit_rate', 'vllm:cpu_prefix_cache_hit_rate',"
            " 'vllm:cpu_cache_usage_perc', 'vllm:kv_cache_usage_perc') group by 1",
        )
    )
    assert got == {
        "vllm:gpu_prefix_cache_hit_rate": [0.0, 0.0, 0.0],
        "vllm:cpu_prefix_cache_hit_rate": [0.9, 0.9, 0.9],
        "vllm:cpu_cache_usage_perc": [0.001, 0.001, 0.002],
    }
