"""The lab's capacity table (docs/lab.md, Capacity): calls/s at fixed concurrency levels.

Each level is one level of `relplan drill --capacity auto`'s staged ramp
(relplan/drill/capacity.py): `c` closed-loop clients, each sending one non-streaming completion
after another for `--seconds`, every prompt fresh random words after the drill's shared
64-word prefix (so the prefix cache serves only the prefix), `ignore_eos` with `--output-tokens`
out. A level's throughput is the calls delivered inside its window over its length; calls
still running at the window's end are finished but not counted. Unlike the ramp, every level
given runs (no stop on a small gain), so the table has the same rows on every machine.

When a call takes about as long as the level (2,000-token prompts at concurrency 16 on the
lab: the first calls end after about a minute), the window count says little; the table
also gives `c / mean latency`, Little's law for a closed loop without think time, over every
call the level sent (those that ended after the window too).

    python bench/lab_capacity.py http://127.0.0.1:8080 --prompt-tokens 500 --levels 1,4,8,16

With `--vocabulary MODEL_DIR` the prompts are words of that model's word-level tokenizer
instead of the drill's English words. Since commit 7bd7f58 the lab's tiny model knows every
drill word (relplan/lab/make_model.py), so the drill's own prompts are fresh there (vLLM's
stats line said "Prefix cache hit rate: 0.0 %" throughout the 2026-12-04 19:00 run); a model
written before knew only `w0`..`w2039`, every English word became `<unk>`, and the prefix cache
served 76 % of the prompt tokens (tests/data/lab/traced-no-retries). The option is for such a
model, or any other word-level one.

Prints a Markdown table. Talks to a live server only; nothing runs without one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from pathlib import Path

from relplan.drill import prompts as drill_prompts
from relplan.drill.capacity import Level, _level
from relplan.drill.client import Endpoint, Record
from relplan.drill.prompts import parse_lengths, prefix_words


def model_words(model: Path) -> list[str]:
    """The words of a WordLevel tokenizer (tokenizer.json), its special tokens left out."""
    vocab = json.loads((model / "tokenizer.json").read_text())["model"]["vocab"]
    return [w for w in vocab if w.isalnum()]


def table(
    rows: list[Level],
    prompt_tokens: str,
    output_tokens: str,
    levels: list[list[Record]] | None = None,
) -> str:
    """The Markdown table; `levels` holds each level's attempt records (all of its calls)."""
    out = [
        f"prompts {prompt_tokens} words (64 shared), {output_tokens} tokens out",
        "",
        "| concurrency | level | delivered in it | failed | calls/s | p50 latency | calls"
        " sent | c / mean latency |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for lv, recs in zip(rows, levels or [[] for _ in rows], strict=True):
        p50 = "-" if lv.latency_median_s is None else f"{lv.latency_median_s:.1f} s"
        ok = [r.t_end - r.t_sent for r in recs if r.outcome == "delivered"]
        little = f"{lv.concurrency / statistics.mean(ok):.2f}" if ok else "-"
        out.append(
            f"| {lv.concurrency} | {lv.seconds:.0f} s | {lv.completed} | {lv.failed} "
            f"| {lv.calls_per_s:.2f} | {p50} | {len(recs)} | {little} |"
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
    ap.add_argument("--vocabulary", type=Path, default=None, metavar="MODEL_DIR")
    a = ap.parse_args(argv)
    words = "the drill's English words"
    if a.vocabulary is not None:
        # make_prompt and prefix_words draw from this module global at each call
        drill_prompts.WORDS = model_words(a.vocabulary)
        words = f"words of {a.vocabulary}/tokenizer.json"
    ep = Endpoint(a.url.rstrip("/"), a.model, "completions", stream=False, ignore_eos=True)
    prompts = parse_lengths(a.prompt_tokens, "--prompt-tokens")
    outputs = parse_lengths(a.output_tokens, "--output-tokens")
    rng = random.Random(a.seed * 7919 + 3)  # one stream over the levels: fresh prompts each
    levels: list[list[Record]] = []
    rows = []
    for c in (int(x) for x in a.levels.split(",")):
        t0 = time.monotonic()
        records: list[Record] = []
        levels.append(records)
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
    print(table(rows, a.prompt_tokens, a.output_tokens, levels) + f"\n\nprompt words: {words}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
