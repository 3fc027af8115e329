"""The lab's capacity table (docs/lab.md, Capacity): calls/s at fixed concurrency levels.

Each level is one level of `relplan drill --capacity auto`'s staged ramp
(relplan/drill/capacity.py): `c` closed-loop clients, each sending one non-streaming completion
after another for `--seconds`, every prompt fresh random words after the drill's shared
64-word prefix (so the prefix cache serves only the prefix), `ignore_eos` with `--output-tokens`
out. A level's throughput is the calls delivered inside its window over its length; calls
still running at the window's end are finished but not counted. Unlike the ramp, every level
given runs (no stop on a small gain), so the table has the same rows on every machine.

    python bench/lab_capacity.py http://127.0.0.1:8080 --prompt-tokens 500 --levels 1,4,8,16

Prints a Markdown table. Talks to a live server only; nothing runs without one.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time

from relplan.drill.capacity import Level, _level
from relplan.drill.client import Endpoint, Record
from relplan.drill.prompts import parse_lengths, prefix_words


def table(rows: list[Level], prompt_tokens: str, output_tokens: str) -> str:
    out = [
        f"prompts {prompt_tokens} words (64 shared), {output_tokens} tokens out",
        "",
        "| concurrency | level | delivered | failed | calls/s | p50 latency |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for lv in rows:
        p50 = "-" if lv.latency_median_s is None else f"{lv.latency_median_s:.1f} s"
        out.append(
            f"| {lv.concurrency} | {lv.seconds:.0f} s | {lv.completed} | {lv.failed} "
            f"| {lv.calls_per_s:.2f} | {p50} |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("url")
    ap.add_argument("--model", default="tiny-llama")
    ap.add_argument("--prompt-tokens", default="500")
    ap.add_argument("--output-tokens", default="32")
    ap.add_argument("--levels", default="1,4,8,16")
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)
    ep = Endpoint(a.url.rstrip("/"), a.model, "completions", stream=False, ignore_eos=True)
    prompts = parse_lengths(a.prompt_tokens, "--prompt-tokens")
    outputs = parse_lengths(a.output_tokens, "--output-tokens")
    rng = random.Random(a.seed * 7919 + 3)  # one stream over the levels: fresh prompts each
    records: list[Record] = []
    rows = []
    for c in (int(x) for x in a.levels.split(",")):
        t0 = time.monotonic()
        lv = asyncio.run(
            _level(
                ep,
                c,
                a.seconds,
                prefix_words(64),
                prompts,
                outputs,
                rng,
                records.append,
                timeout=max(60.0, 4 * a.seconds),
            )
        )
        rows.append(lv)
        print(
            f"concurrency {c}: {lv.calls_per_s:.2f} calls/s "
            f"({time.monotonic() - t0:.0f} s with the drain)",
            file=sys.stderr,
        )
    print(table(rows, a.prompt_tokens, a.output_tokens))
    return 0


if __name__ == "__main__":
    sys.exit(main())
