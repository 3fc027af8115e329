"""Smoke test of bench/ingest_gateways.py: every adapter's generated file is detected as its
format and stores the attempts its records hold."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_gateway_bench_runs_every_adapter_on_a_small_file(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location(
        "ingest_gateways", ROOT / "bench" / "ingest_gateways.py"
    )
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    results = mod.main(["--rows", "30", "--out", str(tmp_path)])
    by = {r["format"]: r for r in results}
    assert set(by) == set(mod.GENERATORS)
    # Attempts per record as generated: Envoy JSON retries every 10th upstream (2 tries),
    # nginx and Kong log 2 tries each, LiteLLM retries i % 3 times.
    assert by["envoy"]["attempts"] == 30 + 3
    assert by["nginx"]["attempts"] == by["kong"]["attempts"] == 60
    assert by["litellm"]["attempts"] == 30 + sum(i % 3 for i in range(30))
    for fmt in ("envoy_text", "mapped", "vllm_bench", "guidellm"):
        assert by[fmt]["attempts"] == 30
    assert all(r["records_per_s"] > 0 and r["mb_per_s"] > 0 for r in results)
