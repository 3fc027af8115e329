"""Parse rate of the vLLM-log adapter and the single-scrape adapter (issue 12): rows/s and MB/s.

    python bench/ingest_vllm.py                      # 200,000 requests, a 200,000-sample scrape
    python bench/ingest_vllm.py --requests 20000 --samples 20000 --repeat 3

The log is built from vLLM's V1 templates (the lines of tests/data/published, with new ids):
per request a Received, an Added and, for one in ten, the abort pair; a stats line every 20
requests. The scrape is one text-exposition dump (HELP/TYPE per family, no timestamps). Each
figure is the best of --repeat ingests into a fresh workspace, timed around ingest_paths only
(in this process: the machine is shared, keep the sizes small). Files go to bench/out/.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from relplan.ingest import IngestOptions, ingest_paths  # noqa: E402

_P = "(APIServer pid=7) INFO 11-30 {hms} [{where}] "
_STATS = (
    "Engine 000: Avg prompt throughput: 2400.5 tokens/s, Avg generation throughput: 83.7"
    " tokens/s, Running: 34 reqs, Waiting: 66 reqs, GPU KV cache usage: 65.4%, Prefix cache hit"
    " rate: 12.5%"
)


def write_log(path: Path, requests: int) -> None:
    with path.open("w", encoding="utf-8") as f:
        for i in range(requests):
            s = i // 10
            hms = f"{s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}"
            ext = f"chatcmpl-{i:016x}"
            f.write(
                _P.format(hms=hms, where="logger.py:49")
                + f"Received request {ext}: params: SamplingParams(n=1, temperature=0.7,"
                " max_tokens=100), lora_request: None.\n"
            )
            f.write(
                _P.format(hms=hms, where="async_llm.py:382") + f"Added request {ext}-a8a65d16.\n"
            )
            if i % 10 == 9:
                f.write(
                    _P.format(hms=hms, where="async_llm.py:431")
                    + f"Aborted request(s) {ext}-a8a65d16.\n"
                )
                f.write(_P.format(hms=hms, where="async_llm.py:402") + f"Request {ext} aborted.\n")
            if i % 20 == 19:
                f.write(_P.format(hms=hms, where="loggers.py:259") + _STATS + "\n")


def write_scrape(path: Path, samples: int) -> None:
    per_family = 50
    with path.open("w", encoding="utf-8") as f:
        for fam in range(max(1, samples // per_family)):
            name = f"vllm:bench_family_{fam}_total"
            f.write(f"# HELP {name} A counter.\n# TYPE {name} counter\n")
            for k in range(per_family):
                f.write(f'{name}{{engine="0",model_name="m",slot="{k}"}} {fam * k}.0\n')


def best(path: Path, opts: IngestOptions, repeat: int) -> tuple[float, int]:
    times: list[float] = []
    rows = 0
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            rep = ingest_paths(Path(tmp) / "w.duckdb", [path], opts)
            times.append(time.perf_counter() - t0)
            rows = rep.sources[0].rows
    return min(times), rows


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=200_000)
    ap.add_argument("--samples", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    log, scrape = args.out / "vllm_v1_bench.log", args.out / "metrics-1764460800.prom"
    write_log(log, args.requests)
    write_scrape(scrape, args.samples)
    results: dict[str, dict[str, float]] = {}
    for label, path, opts in (
        ("vllm_log", log, IngestOptions(year=2025)),
        ("exposition", scrape, IngestOptions()),
    ):
        secs, rows = best(path, opts, args.repeat)
        mb = path.stat().st_size / 1e6
        # three significant digits, not a fixed number of decimals: a small file on a loaded
        # machine reads at well under 0.01 MB/s and must not print as 0
        results[label] = {
            "rows": rows,
            "mb": float(f"{mb:.3g}"),
            "seconds": float(f"{secs:.3g}"),
            "rows_per_s": float(f"{rows / secs:.3g}"),
            "mb_per_s": float(f"{mb / secs:.3g}"),
        }
    print(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
