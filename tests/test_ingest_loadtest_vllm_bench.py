"""`vllm bench serve --save-result --save-detailed` results (docs/formats.md).

No complete result JSON was published; the start_times below are the real ones of vLLM PR
32667 (tests/data/published/vllm_bench_serve_start_times_jq_pr32667.txt). The rest of the
file (latencies, errors, date, ...) is hand-made from the field list of
vllm/benchmarks/serve.py, and says so.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from relplan.errors import InputError
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

PUB = Path(__file__).resolve().parent / "data" / "published"
ATTEMPTS = (
    "select call_id, attempt, t_sent, t_end, outcome, prompt_tokens, model"
    " from attempts order by t_sent"
)


def _starts() -> list[float]:
    text = (PUB / "vllm_bench_serve_start_times_jq_pr32667.txt").read_text()
    return json.loads(text.rstrip().rstrip(",") + "]")


def _run(**extra: object) -> dict[str, object]:
    starts = _starts()
    n = len(starts)
    return {
        "date": "20260120-101500",
        "backend": "vllm",
        "label": None,
        "model_id": "meta-llama/Llama-3.1-8B-Instruct",
        "num_prompts": n,
        "duration": 12.0,
        "completed": n - 1,
        "failed": 1,
        "input_lens": [100 + i for i in range(n)],
        "output_lens": [50] * n,
        "ttfts": [0.1] * n,
        "itls": [[0.01] * 49] * n,
        "start_times": starts,
        "latencies": [2.0] * (n - 1) + [0.0],
        "errors": [""] * (n - 1) + ["ClientConnectorError: connection refused"],
        **extra,
    }


def test_requests_are_placed_so_the_last_end_is_the_run_date(tmp_path: Path) -> None:
    p = tmp_path / "vllm-inf-qps-20260120-101500.json"
    p.write_text(json.dumps(_run()))
    db = tmp_path / "w.duckdb"
    rep = ingest(db, p)
    src = rep.sources[0]
    starts = _starts()
    assert (src.format, src.rows, src.rejected) == ("vllm_bench", len(starts), 0)
    date = 1768904100.0  # 2026-01-20T10:15:00Z
    last_end = max(s + 2.0 for s in starts[:-1])  # the failed request has latency 0
    got = rows(db, ATTEMPTS)
    assert len(got) == 9
    for (cid, att, t_sent, t_end, outcome, ptoks, model), s, i in zip(
        got, starts, range(9), strict=True
    ):
        assert cid == f"vllm-bench-20260120-101500-{i}"
        assert att == 0
        assert t_sent == pytest.approx(date - (last_end - s), abs=1e-6)
        ok = i < 8
        assert outcome == ("delivered" if ok else "error")
        assert t_end - t_sent == pytest.approx(2.0 if ok else 0.0, abs=1e-6)
        assert (ptoks, model) == (100 + i, "meta-llama/Llama-3.1-8B-Instruct")
    assert any("placed by its date 20260120-101500" in n for n in src.notes)


def test_bench_start_places_the_first_request_at_a_given_time(tmp_path: Path) -> None:
    p = tmp_path / "r.json"
    p.write_text(json.dumps(_run()))
    db = tmp_path / "w.duckdb"
    ingest(db, p, bench_start=1764460800.0)
    first = rows(db, ATTEMPTS)[0]
    assert first[2] == pytest.approx(1764460800.0)


def test_appended_runs_are_one_per_line_and_a_run_without_start_times_is_refused(
    tmp_path: Path,
) -> None:
    old = _run(date="20250101-000000")
    del old["start_times"]
    p = tmp_path / "appended.json"
    p.write_text(json.dumps(_run()) + "\n" + json.dumps(old) + "\n")
    with pytest.raises(InputError, match=r"appended\.json:2: no start_times"):
        ingest(tmp_path / "w.duckdb", p)
    rep = ingest(tmp_path / "s.duckdb", p, on_error="skip")
    assert (rep.sources[0].rows, rep.sources[0].rejected) == (9, 1)


# A real result (tests/data/published/SOURCES.md, section 7): vLLM's
# benchmarks/benchmark_serving.py --save-result --request-rate inf --num-prompts=200, run
# 2025-04-20 against DeepSeek-V2.5, published in github.com/surajssd/llm-k8s. It has
# per-request ttfts/itls/input_lens/errors but no start_times and no `failed`.
REAL = PUB / "vllm_benchmark_serving_save_result_rate_inf_llm-k8s.json.gz"


def test_a_published_result_without_start_times_at_rate_inf_starts_every_request_at_once(
    tmp_path: Path,
) -> None:
    db = tmp_path / "w.duckdb"
    rep = ingest(db, REAL)
    src = rep.sources[0]
    assert (src.format, src.rows, src.rejected) == ("vllm_bench", 200, 0)
    assert any("every request starts at the run's start" in n for n in src.notes)
    got = rows(
        db,
        "select count(*), count(distinct t_sent), count(*) filter (where outcome = 'delivered'),"
        " sum(prompt_tokens), round(max(t_end) - min(t_sent), 3), round(min(t_end - t_sent), 3)"
        " from attempts",
    )
    # 200 completed, 0 errors; total_input_tokens 47195; the longest request (ttft + sum of
    # its itls) 126.682 s within the run's duration of 126.717 s; the shortest 0.557 s
    assert got == [(200, 1, 200, 47195, 126.682, 0.557)]
    # placed so the last end falls on the file's date, 20250420-190207 (taken as UTC)
    assert rows(db, "select max(t_end) from attempts") == [(pytest.approx(1745175727.0),)]


def test_a_result_without_start_times_at_a_finite_rate_is_refused(tmp_path: Path) -> None:
    run = json.loads(gzip.decompress(REAL.read_bytes()))
    run["request_rate"] = 1.0  # a Poisson run: its requests' start times are not in the file
    p = tmp_path / "rate1.json"
    p.write_text(json.dumps(run))
    with pytest.raises(InputError, match=r"rate1\.json:1: no start_times .* request_rate 1\.0"):
        ingest(tmp_path / "w.duckdb", p)
