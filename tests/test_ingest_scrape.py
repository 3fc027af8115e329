"""Single `/metrics` scrapes (text exposition: no timestamps, no `# EOF`): the published vLLM
fragments in tests/data/published (sources in SOURCES.md there) with a time from IngestOptions(at=...)
(`--at`) or from the file name, every line accounted for, and the error without a time."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from relplan.errors import InputError, UsageError
from relplan.ingest.metrics.scrape_time import parse_at, time_from_name
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest, write_lines

PUBLISHED = Path(__file__).resolve().parent / "data" / "published"
SCRAPES = sorted(PUBLISHED.glob("*.prom"))
T0 = 1764460800.0  # 2025-11-30T00:00:00Z
TALLY = re.compile(
    r"^(\d+) lines: (\d+) samples stored, (\d+) # HELP/# TYPE/# EOF lines \(metric_meta\),"
    r" (\d+) _created samples dropped, (\d+) blank or comment lines ignored, (\d+) rejected$"
)

# file -> (samples stored, metadata lines, _created dropped), counted by hand in the file
EXPECTED = {
    "dcgm_exporter_k8s_mode_lke_ai_conformance.prom": (7, 14, 0),
    "dcgm_xid_errors_active_injected_pr239.prom": (1, 2, 0),
    "dcgm_xid_errors_mig_issue317.prom": (6, 1, 0),
    "kubelet_prober_probe_result_gauge_issue75839.prom": (4, 2, 0),
    "ksm_restarts_last_terminated_pod_test.prom": (3, 4, 0),
    "vllm_metrics_v1_0.10.0_prodstack617_a.prom": (3, 10, 2),
    "vllm_metrics_v1_0.10.0_prodstack617_b.prom": (8, 6, 2),
    "vllm_metrics_v1_0.10.0_prodstack617_c.prom": (14, 0, 0),
    "vllm_metrics_v1_0.10_pr22227.prom": (13, 0, 0),
    "vllm_metrics_v1_prodstack318.prom": (7, 16, 0),
}


def test_every_published_scrape_has_expectations() -> None:
    assert [f.name for f in SCRAPES] == sorted(EXPECTED)


@pytest.mark.parametrize("f", SCRAPES, ids=lambda f: f.name)
def test_published_scrape_with_at(tmp_path: Path, f: Path) -> None:
    db = tmp_path / "w.duckdb"
    src = ingest(db, f, at=T0).sources[0]
    assert (src.kind, src.format, src.rejected) == ("metrics", "exposition", 0)
    assert "scrape time from --at" in src.notes
    m = next(m for n in src.notes if (m := TALLY.match(n)))
    total, stored, meta, created, ignored, rejected = map(int, m.groups())
    assert total == len(f.read_text(encoding="utf-8").splitlines())
    assert stored + meta + created + ignored + rejected == total
    assert (stored, meta, created) == EXPECTED[f.name]
    assert rows(db, "select count(*), min(t), max(t) from metric_samples") == [(stored, T0, T0)]
    assert rows(
        db, "select count(*) from metric_samples where name like '%\\_created' escape '\\'"
    ) == [(0,)]


def test_prodstack318_values_and_old_names(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    src = ingest(db, PUBLISHED / "vllm_metrics_v1_prodstack318.prom", at=T0).sources[0]
    assert rows(
        db, "select name, value, labels from metric_samples where name like 'vllm:%' order by name"
    ) == [
        ("vllm:gpu_cache_usage_perc", 0.0, {"model_name": "Qwen/Qwen2.5-Coder-32B-Instruct"}),
        ("vllm:num_requests_running", 0.0, {"model_name": "Qwen/Qwen2.5-Coder-32B-Instruct"}),
        ("vllm:num_requests_waiting", 0.0, {"model_name": "Qwen/Qwen2.5-Coder-32B-Instruct"}),
    ]
    assert rows(db, "select value from metric_samples where name = 'process_max_fds'") == [
        (1048576.0,)
    ]
    assert any("vllm:gpu_cache_usage_perc stored as exported" in n for n in src.notes)


def test_fragment_without_type_lines_is_noted(tmp_path: Path) -> None:
    src = ingest(
        tmp_path / "w.duckdb", PUBLISHED / "vllm_metrics_v1_0.10.0_prodstack617_c.prom", at=T0
    ).sources[0]
    assert any(
        "1 sample names without a # TYPE line" in n and "request_queue_time_seconds_bucket" in n
        for n in src.notes
    )


def test_no_time_is_an_error_naming_at_and_record(tmp_path: Path) -> None:
    f = PUBLISHED / "vllm_metrics_v1_prodstack318.prom"
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "w.duckdb", f)
    text = str(err.value)
    assert text.startswith(f"{f}:3: this /metrics scrape has no timestamps")
    assert "--at TIME" in text
    assert "relplan record" in text


def test_no_time_with_skip_keeps_every_sample_as_a_reject(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    src = ingest(db, PUBLISHED / "vllm_metrics_v1_prodstack318.prom", on_error="skip").sources[0]
    assert (src.rows, src.rejected) == (0, 7)
    reasons = rows(db, "select distinct reason from rejects")
    assert len(reasons) == 1
    assert "pass --at TIME" in reasons[0][0]


@pytest.mark.parametrize(
    ("name", "t"),
    [
        ("metrics-2025-11-30T00:00:05Z.prom", T0 + 5),
        ("metrics-2025-11-30T00-00-05Z.prom", T0 + 5),
        ("metrics-2025-11-30T02-00-05+02:00.prom", T0 + 5),
        ("metrics-20251130T000005.250Z.prom", T0 + 5.25),
        ("metrics-1764460805.prom", T0 + 5),
        ("metrics-1764460805250.prom", T0 + 5.25),
        ("metrics-2025-11-30T00-00-05.prom", None),  # no zone: not guessed
        ("vllm_metrics_v1_prodstack318.prom", None),
        ("metrics-2025-11-30T00-00-05+99:99.prom", None),  # no such offset (once a traceback)
        ("metrics-9999999999.prom", None),  # 2286: not a time relplan takes
    ],
)
def test_time_from_file_name(name: str, t: float | None) -> None:
    got = time_from_name(Path(name))
    assert (got[0] if got else None) == (pytest.approx(t) if t is not None else None)


def test_folder_of_named_scrapes_takes_each_name_time(tmp_path: Path) -> None:
    folder = tmp_path / "scrapes"
    folder.mkdir()
    src = PUBLISHED / "vllm_metrics_v1_0.10.0_prodstack617_a.prom"
    shutil.copy(src, folder / "metrics-2025-11-30T00-00-00Z.prom")
    later = src.read_text(encoding="utf-8").replace("} 32.0", "} 64.0")
    (folder / "metrics-2025-11-30T00-00-05Z.prom").write_text(later, encoding="utf-8")
    db = tmp_path / "w.duckdb"
    rep = ingest(db, folder, at=T0 + 999)  # a name's time wins over --at
    assert [s.format for s in rep.sources] == ["exposition", "exposition"]
    assert any("from the file name" in n for n in rep.sources[1].notes)
    assert rows(
        db,
        "select t - $t0, value from metric_samples"
        " where name = 'vllm:prefix_cache_queries_total' order by t",
        {"t0": T0},
    ) == [(0.0, 32.0), (5.0, 64.0)]


def test_openmetrics_scrape_with_eof_and_own_timestamps(tmp_path: Path) -> None:
    """A scrape negotiated as OpenMetrics ends with # EOF; a sample's own timestamp (ms in the
    text format) wins over the scrape time."""
    f = write_lines(
        tmp_path / "m.prom",
        [
            "# TYPE vllm:num_requests_waiting gauge",
            'vllm:num_requests_waiting{engine="0"} 3',
            'vllm:num_requests_running{engine="0"} 1 1764460810000',
            "# EOF",
        ],
    )
    db = tmp_path / "w.duckdb"
    src = ingest(db, f, at=T0).sources[0]
    assert src.format == "exposition"
    assert rows(db, "select name, t - $t0 from metric_samples order by name", {"t0": T0}) == [
        ("vllm:num_requests_running", 10.0),
        ("vllm:num_requests_waiting", 0.0),
    ]


def test_content_after_eof_is_refused_with_its_line(tmp_path: Path) -> None:
    f = write_lines(tmp_path / "m.prom", ["vllm:x 1", "# EOF", "vllm:y 2"])
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "w.duckdb", f, at=T0)
    assert str(err.value).startswith(f"{f}:3: content after # EOF")


def test_timestamped_dump_is_still_openmetrics(tmp_path: Path) -> None:
    f = write_lines(tmp_path / "d.om", ["# TYPE a gauge", "a 1 1764460800", "# EOF"])
    src = ingest(tmp_path / "w.duckdb", f).sources[0]
    assert src.format == "openmetrics"


def test_parse_at_takes_rfc3339_or_epoch_and_refuses_naive_times() -> None:
    assert parse_at("2025-11-30T00:00:05Z") == T0 + 5
    assert parse_at("1764460805") == T0 + 5
    with pytest.raises(UsageError) as err:
        parse_at("2025-11-30T00:00:05")
    assert str(err.value).startswith("--at: cannot read")


def test_at_outside_the_plausible_range_is_refused() -> None:
    with pytest.raises(UsageError, match=r"--at: '2200-01-01T00:00:00Z': .* is not between"):
        parse_at("2200-01-01T00:00:00Z")
