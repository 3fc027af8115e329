"""Smoke test of bench/ingest_vllm.py on tiny inputs: it runs and reports what it ingested."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_ingest_vllm_smoke(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("ingest_vllm", ROOT / "bench" / "ingest_vllm.py")
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    res = mod.main(["--requests", "40", "--samples", "100", "--out", str(tmp_path)])
    # 40 requests: 40 arrivals, 4 aborts, 40 request ids; 2 stats lines of 6 gauges.
    assert res["vllm_log"]["rows"] == 40 + 4 + 40 + 2 * 6
    assert res["exposition"]["rows"] == 100
    assert all(r["rows_per_s"] > 0 and r["mb_per_s"] > 0 for r in res.values())
