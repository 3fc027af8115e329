"""Parse rate of the gateway and load-test adapters (docs/formats.md): one generated
file per format, ingested into a fresh workspace; prints records, attempts stored, file size,
wall time, records/s and MB/s.

    python bench/ingest_gateways.py                # 200,000 records per format
    python bench/ingest_gateways.py --rows 20000 --only nginx,kong

Records are synthetic but in each format's real layout (the published examples in
tests/data/published/ are the templates). Every figure is the best of --repeat runs. Files go
to bench/out/gateways/ unless --out says otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from relplan.ingest import IngestOptions, ingest_paths  # noqa: E402

T0 = 1764460800.0


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def envoy_text(n: int) -> Iterator[str]:
    for i in range(n):
        code, flags = (200, "-") if i % 10 else (0, "DC")
        yield (
            f'[{_iso(T0 + i * 0.01)}] "POST /v1/chat/completions HTTP/1.1" {code} {flags} 812 4096'
            f' {1000 + i % 5000} 998 "10.1.0.{i % 200}" "openai-python/1.40.0"'
            f' "req-{i}" "vllm.svc:8000" "10.0.0.{i % 8}:8000"'
        )


def envoy_json(n: int) -> Iterator[str]:
    for i in range(n):
        yield json.dumps(
            {
                "start_time": _iso(T0 + i * 0.01),
                "duration": 1000 + i % 5000,
                "response_code": 200 if i % 10 else 503,
                "response_flags": "-" if i % 10 else "UC",
                "upstream_host": f"10.0.0.{i % 8}:8000",
                "upstream_request_attempt_count": 1 if i % 10 else 2,
                "x-request-id": f"req-{i}",
            }
        )


def nginx(n: int) -> Iterator[str]:
    for i in range(n):
        stamp = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(T0 + i * 0.01))
        yield (
            f'10.1.0.{i % 200} - - [{stamp}] "POST /v1/chat/completions HTTP/1.1" 200 4096 "-"'
            f' "openai-python/1.40.0" 812 2.500 [default-vllm-8000] [] 10.0.0.1:8000,'
            f" 10.0.0.2:8000 0, 4096 0.500, 2.000 502, 200 req{i:032x}"
        )


def kong(n: int) -> Iterator[str]:
    for i in range(n):
        ms = int((T0 + i * 0.01) * 1000)
        yield json.dumps(
            {
                "started_at": ms,
                "latencies": {"request": 2500, "proxy": 2490, "kong": 10},
                "request": {"id": f"{i:032x}", "method": "POST"},
                "response": {"status": 200},
                "upstream_status": "200",
                "tries": [
                    {
                        "ip": "10.0.0.1",
                        "port": 8000,
                        "balancer_start": ms + 1,
                        "state": "failed",
                        "code": 502,
                    },
                    {"ip": "10.0.0.2", "port": 8000, "balancer_start": ms + 500},
                ],
            }
        )


def litellm(n: int) -> Iterator[str]:
    for i in range(n):
        t = T0 + i * 0.01
        meta = json.dumps({"attempted_retries": i % 3, "attempted_fallbacks": 0})
        yield json.dumps(
            {
                "request_id": f"chatcmpl-{i:032x}",
                "call_type": "acompletion",
                "spend": 0.0001,
                "startTime": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t)) + ".125000",
                "endTime": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(t + 2)) + ".625000",
                "api_base": "http://vllm-1:8000/v1",
                "model_group": "llama",
                "prompt_tokens": 812,
                "status": "success",
                "metadata": meta,
            }
        )


MAPPING = """format = "jsonl"
[fields]
call_id = "request_X-Request-Id"
start = "StartUTC"
duration = "Duration"
status = "DownstreamStatus"
replica = "ServiceAddr"
[time]
format = "rfc3339"
duration_unit = "ns"
"""


def mapped(n: int) -> Iterator[str]:
    for i in range(n):
        yield json.dumps(
            {
                "StartUTC": _iso(T0 + i * 0.01),
                "Duration": 2_500_000_000,
                "DownstreamStatus": 200,
                "ServiceAddr": f"10.0.0.{i % 8}:8000",
                "request_X-Request-Id": f"req-{i}",
            }
        )


def vllm_bench(n: int) -> Iterator[str]:
    yield json.dumps(
        {
            "date": "20251130-010000",
            "model_id": "llama",
            "completed": n,
            "failed": 0,
            "start_times": [353399.7 + i * 0.01 for i in range(n)],
            "latencies": [2.0] * n,
            "ttfts": [0.1] * n,
            "input_lens": [812] * n,
            "errors": [""] * n,
        }
    )


def guidellm(n: int) -> Iterator[str]:
    reqs = [
        {
            "request_id": f"r{i}",
            "response_id": f"chatcmpl-{i}",
            "prompt_tokens": 812,
            "info": {
                "timings": {
                    "targeted_start": T0 + i * 0.01,
                    "request_start": T0 + i * 0.01 + 0.001,
                    "request_end": T0 + i * 0.01 + 2,
                }
            },
        }
        for i in range(n)
    ]
    yield json.dumps({"benchmarks": [{"requests": {"successful": reqs, "errored": []}}]}, indent=1)


GENERATORS: dict[str, tuple[str, Callable[[int], Iterator[str]]]] = {
    "envoy_text": ("access.log", envoy_text),
    "envoy": ("access.jsonl", envoy_json),
    "nginx": ("nginx.log", nginx),
    "kong": ("kong.jsonl", kong),
    "litellm": ("spend.jsonl", litellm),
    "mapped": ("traefik.jsonl", mapped),
    "vllm_bench": ("bench.json", vllm_bench),
    "guidellm": ("benchmarks.json", guidellm),
}


def run(fmt: str, n: int, out: Path, repeat: int) -> dict[str, float | int | str]:
    name, gen = GENERATORS[fmt]
    src = out / name
    with src.open("w", encoding="utf-8") as f:
        for line in gen(n):
            f.write(line + "\n")
    opts = IngestOptions()
    if fmt == "mapped":
        (out / "traefik.toml").write_text(MAPPING)
        opts = IngestOptions(map_file=out / "traefik.toml")
    best = float("inf")
    attempts = 0
    for _ in range(repeat):
        db = out / f"{fmt}.duckdb"
        db.unlink(missing_ok=True)
        t = time.perf_counter()
        rep = ingest_paths(db, [src], opts)
        best = min(best, time.perf_counter() - t)
        attempts = rep.sources[0].rows
        if rep.sources[0].format != fmt:
            raise SystemExit(f"{fmt}: detected as {rep.sources[0].format}")
    mb = src.stat().st_size / 1e6
    return {
        "format": fmt,
        "records": n,
        "attempts": attempts,
        "mb": mb,
        "seconds": best,
        "records_per_s": n / best,
        "mb_per_s": mb / best,
    }


def main(argv: list[str] | None = None) -> list[dict[str, float | int | str]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000, help="records per format")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", default="", help="comma-separated formats")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "gateways")
    args = ap.parse_args(argv)
    fmts = [f for f in args.only.split(",") if f] or list(GENERATORS)
    args.out.mkdir(parents=True, exist_ok=True)
    results = [run(f, args.rows, args.out, args.repeat) for f in fmts]
    print(
        f"{'format':<11} {'records':>9} {'attempts':>9} {'MB':>7} {'s':>7} {'records/s':>10} {'MB/s':>6}"
    )
    for r in results:
        print(
            f"{r['format']:<11} {r['records']:>9,} {r['attempts']:>9,} {r['mb']:>7.1f}"
            f" {r['seconds']:>7.2f} {r['records_per_s']:>10,.0f} {r['mb_per_s']:>6.1f}"
        )
    return results


if __name__ == "__main__":
    main()
