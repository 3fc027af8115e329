"""Metrics vLLM added (issue 23), on a /metrics scrape of the lab's vLLM 0.32.0
(tests/data/ingest/lab/README.md): the `vllm:request_num_preemptions` histogram,
`vllm:admission_rejections_total{reason}`, `*_created` series dropped (scrapes and query_range
exports), and deprecated `gpu_*` aliases beside their new names counted once."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest, write_lines

LAB = Path(__file__).resolve().parent / "data" / "ingest" / "lab"
SCRAPE = LAB / "vllm-0.32-cpu-metrics-20261203T163354Z.prom"


def test_lab_scrape_of_vllm_0_32(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, SCRAPE)
    src = rep.sources[0]
    assert (src.format, src.rows, src.rejected) == ("exposition", 386, 0)
    assert any("49 _created samples dropped" in n for n in src.notes)
    assert rows(
        db, "select count(*) from metric_samples where name like '%\\_created' escape '\\'"
    ) == [(0,)]
    buckets = rows(
        db,
        "select labels['le'], value from metric_samples"
        " where name = 'vllm:request_num_preemptions_bucket'",
    )
    assert len(buckets) == 8
    assert dict(buckets)["+Inf"] == 2.0
    assert rows(
        db,
        "select labels['reason'], value from metric_samples"
        " where name = 'vllm:admission_rejections_total' order by 1",
    ) == [("max_num_queued_reqs", 0.0), ("max_num_queued_tokens", 0.0)]
    assert dict(
        rows(
            db,
            "select name, type from metric_meta where name in"
            " ('vllm:request_num_preemptions', 'vllm:admission_rejections_total')",
        )
    ) == {"vllm:request_num_preemptions": "histogram", "vllm:admission_rejections_total": "counter"}


def _matrix(series: list[tuple[dict[str, str], list[list[object]]]]) -> str:
    return json.dumps(
        {
            "status": "success",
            "data": {
                "resultType": "matrix",
                "result": [{"metric": m, "values": v} for m, v in series],
            },
        }
    )


def test_query_range_export_drops_created_series(tmp_path: Path) -> None:
    """A `query_range` of `{__name__=~"vllm:.*"}` returns the `_created` gauges
    prometheus_client exports beside each counter as series of their own (the lab scrape's
    names and labels; the values are its `_created` and counter values)."""
    labels = {"model_name": "tiny-llama", "reason": "max_num_queued_reqs", "job": "vllm"}
    doc = _matrix(
        [
            (
                {"__name__": "vllm:admission_rejections_total", **labels},
                [[1796315700, "0"], [1796315715, "3"]],
            ),
            (
                {"__name__": "vllm:admission_rejections_created", **labels},
                [[1796315700, "1796315609.874542"], [1796315715, "1796315609.874542"]],
            ),
            (
                {"__name__": "process_start_time_seconds", "job": "vllm"},
                [[1796315700, "1796315600"]],
            ),
        ]
    )
    f = write_lines(tmp_path / "range.json", [doc])
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f)
    assert rows(db, "select name, count(*) from metric_samples group by 1 order by 1") == [
        ("process_start_time_seconds", 1),
        ("vllm:admission_rejections_total", 2),
    ]
    assert (
        "dropped 1 `_created` series (2 samples: counter creation times, not samples of the counter)"
        in rep.sources[0].notes
    )


def test_deprecated_gpu_alias_beside_its_new_name_is_counted_once(tmp_path: Path) -> None:
    """HAND-MADE in the shape of a vLLM 0.9/0.10 scrape, which exports the deprecated
    `vllm:gpu_cache_usage_perc` and `vllm:gpu_prefix_cache_queries_total` beside
    `vllm:kv_cache_usage_perc` and `vllm:prefix_cache_queries_total` (same values;
    tests/data/published/SOURCES.md, V1 metric names). An old name alone is kept."""
    lab = '{engine="0",model_name="m"}'
    f = write_lines(
        tmp_path / "metrics-2025-11-30T00-00-05Z.prom",
        [
            "# TYPE vllm:gpu_cache_usage_perc gauge",
            f"vllm:gpu_cache_usage_perc{lab} 0.25",
            "# TYPE vllm:kv_cache_usage_perc gauge",
            f"vllm:kv_cache_usage_perc{lab} 0.25",
            "# TYPE vllm:gpu_prefix_cache_queries_total counter",
            f"vllm:gpu_prefix_cache_queries_total{lab} 32.0",
            "# TYPE vllm:prefix_cache_queries_total counter",
            f"vllm:prefix_cache_queries_total{lab} 32.0",
            "# TYPE vllm:gpu_prefix_cache_hits_total counter",
            f"vllm:gpu_prefix_cache_hits_total{lab} 8.0",
        ],
    )
    db = tmp_path / "w.duckdb"
    rep = ingest(db, f)
    assert rows(db, "select name from metric_samples order by 1") == [
        ("vllm:gpu_prefix_cache_hits_total",),
        ("vllm:kv_cache_usage_perc",),
        ("vllm:prefix_cache_queries_total",),
    ]
    assert rows(db, "select name from metric_meta where name like 'vllm:gpu%'") == [
        ("vllm:gpu_prefix_cache_hits_total",)
    ]
    notes = rep.sources[0].notes
    assert (
        "dropped 1 samples of the deprecated alias vllm:gpu_cache_usage_perc: the same source"
        " has vllm:kv_cache_usage_perc (same series, counted once)"
    ) in notes
    assert any("old vLLM metric name vllm:gpu_prefix_cache_hits_total stored" in n for n in notes)


def test_inspect_of_the_lab_scrape_fits_100_columns(tmp_path: Path) -> None:
    """The lab's vllm:cache_config_info has 37 labels: its keys are summarised, every other
    name keeps its keys, the shared span moves to the heading and notes wrap."""
    from relplan.ingest.contents import inspect_workspace
    from relplan.text.ingest import render_inspect

    db = tmp_path / "w.duckdb"
    ingest(db, SCRAPE)
    text = render_inspect(inspect_workspace(db))
    metrics = text[text.index("Metrics") :].splitlines()
    assert max(len(line) for line in metrics) <= 100
    assert metrics[0] == "Metrics (all 2026-12-03T16:33:54.000Z +0.0 s):"
    info = next(line for line in metrics if line.startswith("vllm:cache_config_info "))
    assert info.endswith("37 keys (see --json)")
    waiting = next(line for line in metrics if line.startswith("vllm:num_requests_waiting "))
    assert waiting.endswith("engine, model_name")
    notes = [line for line in text.splitlines() if line.startswith(("  source", "      "))]
    assert notes
    assert max(len(line) for line in notes) <= 100


def test_inspect_of_a_lab_operator_folder_fits_100_columns(tmp_path: Path) -> None:
    """The lab's retries-cancel operator files named by absolute path (nginx JSON and
    combined logs, a query_range export, the vLLM log): whole inspect output within 100
    columns (was 165: the paths and the metrics' spans). Spans that differ between metric
    names leave the table for --json; paths move under the Sources table, whole."""
    from relplan.ingest.contents import inspect_workspace
    from relplan.ingest.outcome import display_path
    from relplan.text.ingest import render_inspect

    folder = Path(__file__).resolve().parent / "data" / "lab" / "retries-cancel" / "operator"
    files = sorted(folder.iterdir())
    db = tmp_path / "w.duckdb"
    ingest(db, *files, year=2026)
    text = render_inspect(inspect_workspace(db))
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert "Metrics (each name's span: --json):" in lines
    for i, f in enumerate(files, start=1):
        assert f"  source {i}: {display_path(str(f))}" in lines
