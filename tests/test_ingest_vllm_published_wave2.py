"""Forms of issue 23 part 2 in published vLLM logs (tests/data/published/SOURCES.md, section 1):
the RFC 3339 stamp of `kubectl logs --timestamps` as the line's clock (with the year), and
stats fields relplan does not store (`Deferred`, `External prefix cache hit rate`) kept out
with a note, never a refused line, in an `Engine 001` line."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.helpers.ingest import ingest, rows

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
