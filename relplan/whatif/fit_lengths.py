"""Prompt and output lengths from vLLM's per-request histograms (relplan whatif fit).

When neither the proxy log nor the engine trace gives a call's prompt length, or no execution
is known to have finished with its generated length (a vLLM log without step records, as
vLLM 0.32 writes it), the lengths come from what Prometheus (or `/metrics` scrapes) holds:
`vllm:request_prompt_tokens` and `vllm:request_generation_tokens`, observed by vLLM when a
request finishes, with `vllm:request_params_max_tokens` beside them.

A histogram says how many requests fell in each bucket and their total (`_sum`), not where in
a bucket they lay. The distribution drawn from is therefore one value per bucket: the middle
of each bucket, except the bucket holding the most requests, which gets the value that makes
the total come out exactly (the `_sum` less the other buckets' middles, over its count,
clipped to the bucket). On the lab's drills (every prompt 500 tokens, every output 32) this
gives 500 and 32 exactly; a workload spread over many buckets keeps the spread between
buckets and loses the spread inside them. queries/whatif/length_histograms.sql reads them.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Literal

import duckdb

from relplan import sql
from relplan.analyses.wording import Words

__all__ = ["Histogram", "draw", "histograms"]


# A histogram's summary, worded by relplan/text/whatif.py.
Said = Literal["histogram"]
_say: Words[Said] = Words("relplan.text.whatif")


@dataclass(frozen=True)
class Histogram:
    metric: str  # prompt, generation, max_tokens
    buckets: list[tuple[float, float]]  # (upper bound, requests in the bucket), ascending
    total: float  # the _sum's increase
    count: float  # the _count's increase
    masses: list[tuple[int, float]]  # (value, requests) the draws come from

    @property
    def mean(self) -> float:
        return self.total / self.count

    def describe(self) -> str:
        top = max(self.buckets, key=lambda b: b[1])
        lo = max((b[0] for b in self.buckets if b[0] < top[0]), default=0.0)
        return _say(
            "histogram",
            metric=f"vllm:request_{self._name()}",
            requests=self.count,
            mean=self.mean,
            share=top[1] / self.count,
            low=lo,
            high=top[0],
        )

    def _name(self) -> str:
        return {
            "prompt": "prompt_tokens",
            "generation": "generation_tokens",
            "max_tokens": "params_max_tokens",
        }[self.metric]


def _le(text: str) -> float:
    return math.inf if text in ("+Inf", "Inf", "inf") else float(text)


def _masses(buckets: list[tuple[float, float]], total: float) -> list[tuple[int, float]]:
    bounds: list[tuple[float, float, float]] = []  # (lo, hi, requests)
    lo = 0.0
    for hi, n in buckets:
        if n > 0:
            bounds.append((lo, hi, n))
        lo = hi
    if not bounds:
        return []
    main = max(range(len(bounds)), key=lambda i: bounds[i][2])

    def middle(lo_: float, hi_: float) -> float:
        return 1.5 * lo_ if math.isinf(hi_) else (lo_ + hi_) / 2.0

    rest = sum(n * middle(a, b) for i, (a, b, n) in enumerate(bounds) if i != main)
    a, b, n = bounds[main]
    value = (total - rest) / n
    value = min(max(value, a + 1e-9), b if not math.isinf(b) else value)
    out: list[tuple[int, float]] = []
    for i, (a_, b_, n_) in enumerate(bounds):
        v = value if i == main else middle(a_, b_)
        out.append((max(1, round(v)), n_))
    return out


def histograms(con: duckdb.DuckDBPyConnection) -> dict[str, Histogram]:
    """The length histograms the workspace's metrics hold, by metric (prompt, generation,
    max_tokens); a histogram with no request in the span is left out."""
    rows = sql.rows(con, "whatif/length_histograms")
    out: dict[str, Histogram] = {}
    for metric in ("prompt", "generation", "max_tokens"):
        mine = [r for r in rows if r["metric"] == metric]
        cum = sorted(
            (_le(str(r["le"])), float(r["increase"]))
            for r in mine
            if r["part"] == "bucket" and r["le"] is not None
        )
        total = next((float(r["increase"]) for r in mine if r["part"] == "sum"), None)
        count = next((float(r["increase"]) for r in mine if r["part"] == "count"), None)
        if not cum or total is None or not count or count <= 0:
            continue
        buckets: list[tuple[float, float]] = []
        prev = 0.0
        for hi, c in cum:
            buckets.append((hi, max(0.0, c - prev)))
            prev = max(prev, c)
        out[metric] = Histogram(metric, buckets, total, count, _masses(buckets, total))
    return out


def draw(rng: random.Random, h: Histogram, above: int = 0, cap: int | None = None) -> int:
    """One length from the histogram's masses, more than `above` and at most `cap`."""
    values = [(v, n) for v, n in h.masses if v > above and (cap is None or v <= cap)]
    if not values:
        return above + 1 if cap is None else min(cap, above + 1)
    pick = rng.random() * sum(n for _, n in values)
    for v, n in values:
        pick -= n
        if pick <= 0:
            return v
    return values[-1][0]
