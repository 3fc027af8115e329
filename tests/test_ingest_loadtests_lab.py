"""Load-test results written by the real tools against the lab (tests/data/lab/loadtests/README.md).

`vllm bench serve --save-result --save-detailed` (vLLM 0.32.0's own benchmark) and GuideLLM
0.8.1's `benchmarks.json`, each recorded beside nginx's JSON access log of the same requests and
vLLM's log of the same seconds. nginx is the independent witness: its `$msec` is when it wrote
the line (the end of the request) and `$request_time` how long the request took, so
`$msec - $request_time` is the start as the gateway saw it.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

LAB = Path(__file__).resolve().parent / "data" / "lab" / "loadtests"
BENCH = LAB / "vllm-bench-rate-6"
GUIDELLM = LAB / "guidellm-constant-3"


def _nginx(folder: Path) -> list[tuple[float, float, int]]:
    """(start, duration, status) of every completion nginx logged, in start order."""
    out = []
    for line in (folder / "access.json").read_text().splitlines():
        rec = json.loads(line)
        if rec["request"].startswith("POST /v1/completions"):
            took = float(rec["request_time"])
            out.append((float(rec["msec"]) - took, took, int(rec["status"])))
    return sorted(out)


def _attempts(db: Path) -> list[tuple[float, float, str]]:
    return rows(db, "select t_sent, t_end - t_sent, outcome from attempts order by t_sent")


def test_vllm_bench_detailed_result_gives_every_request_with_the_gateways_timing(
    tmp_path: Path,
) -> None:
    result = json.loads((BENCH / "bench.json").read_text())
    db = tmp_path / "w.duckdb"
    rep = ingest(db, BENCH / "bench.json")
    assert (rep.sources[0].format, rep.sources[0].rows, rep.sources[0].rejected) == (
        "vllm_bench",
        result["num_prompts"],
        0,
    )
    got = _attempts(db)
    gateway = _nginx(BENCH)
    assert len(got) == len(gateway) == result["completed"] == 40
    assert {o for _, _, o in got} == {"delivered"}
    assert {s for _, _, s in gateway} == {200}
    # The file's own e2e latencies, exactly.
    assert sorted(d for _, d, _ in got) == pytest.approx(sorted(result["latencies"]), abs=1e-6)
    # start_times are a monotonic clock: relative starts are exact, the run is placed by its
    # `date` (local time after the run, whole seconds; this machine runs on UTC).
    first_b, first_g = got[0][0], gateway[0][0]
    for (t_b, d_b, _), (t_g, d_g, _) in zip(got, gateway, strict=True):
        assert t_b - first_b == pytest.approx(t_g - first_g, abs=0.05)
        assert d_b == pytest.approx(d_g, abs=0.05)
    assert abs(first_b - first_g) < 3.0


def test_guidellm_report_gives_every_request_and_joins_vllms_executions(tmp_path: Path) -> None:
    with gzip.open(GUIDELLM / "benchmarks.json.gz", "rt") as f:
        report = json.load(f)
    successful = report["benchmarks"][0]["requests"]["successful"]
    db = tmp_path / "w.duckdb"
    rep = ingest(db, GUIDELLM / "benchmarks.json.gz", GUIDELLM / "vllm.log.gz")
    src = rep.sources[0]
    assert (src.format, src.rows, src.rejected) == ("guidellm", 24, 0)
    got = _attempts(db)
    gateway = _nginx(GUIDELLM)
    assert len(got) == len(gateway) == len(successful) == 24
    assert {o for _, _, o in got} == {"delivered"}
    # GuideLLM's times are unix seconds: each start is nginx's within 50 ms. Its end is when
    # the client had read the stream: never before nginx's, a median 4 ms after, but 0.07 to
    # 0.73 s later on 4 of 24 (GuideLLM itself warned of 0.39 s dispatch delays on this run).
    late = []
    for (t_b, d_b, _), (t_g, d_g, _) in zip(got, gateway, strict=True):
        assert t_b == pytest.approx(t_g, abs=0.05)
        assert d_b > d_g - 0.01
        late.append(d_b - d_g)
    assert sorted(late)[len(late) // 2] < 0.02
    # GuideLLM keeps vLLM's response id (`cmpl-<id>`); vLLM logs `cmpl-<id>-0-<8 hex>`.
    joined = rows(
        db,
        "select count(*) from attempts a"
        " where exists (select 1 from events e where e.execution_id = a.execution_id)",
    )
    assert joined == [(24,)]
    ids = {s["response_id"] for s in successful}
    assert {r[0] for r in rows(db, "select external_id from request_ids")} == {
        f"{i}-0" for i in ids
    }
