"""`--capacity auto`: Ĉ from a staged closed-loop ramp (docs/drill.md, Capacity).

Level after level, `c` clients (c = 1, 2, 4, 8, ...) each send one call after another, every
call with a fresh prompt (the prefix cache cannot serve it), for `level_seconds`. A level's
throughput is the calls completed (delivered) inside the level's window divided by its
length; calls still running at the window's end are finished but not counted. Ĉ is the best
level's throughput. The ramp stops after the first level that raises the best by less than
`min_gain` (5 %), or at `max_concurrency`. Every attempt of the ramp is recorded too
(`capacity.jsonl`, call ids `r<level>-<n>`), kept apart from the drill's attempt log.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from relplan.drill.client import (
    Endpoint,
    Reading,
    Record,
    headers,
    make_client,
    outcome_of,
    read_attempt,
)
from relplan.drill.prompts import Lengths, make_prompt


@dataclass
class Level:
    concurrency: int
    seconds: float
    completed: int
    failed: int
    calls_per_s: float
    latency_median_s: float | None


@dataclass(frozen=True)
class RampStop:
    """Why the ramp stopped (worded by relplan/text/drill.py): a level at `concurrency` that
    raised the best throughput by less than `min_gain` (`small_gain`), or the next level
    would pass the highest concurrency `concurrency` (`highest`)."""

    reason: Literal["small_gain", "highest"]
    concurrency: int
    min_gain: float


@dataclass
class Ramp:
    levels: list[Level] = field(default_factory=list)
    capacity: float | None = None
    best_concurrency: int | None = None
    stopped: RampStop | None = None


async def _level(
    ep: Endpoint,
    c: int,
    seconds: float,
    prefix: list[str],
    prompts: Lengths,
    outputs: Lengths,
    rng: random.Random,
    sink: Callable[[Record], None],
    timeout: float,
) -> Level:
    done: list[float] = []
    failed = 0
    async with make_client(5.0, c + 1) as client:
        m0 = time.monotonic()
        t0 = time.time()
        end = m0 + seconds
        counter = 0

        def now() -> float:
            return t0 + time.monotonic() - m0

        async def worker() -> None:
            nonlocal counter, failed
            while time.monotonic() < end:
                counter += 1
                cid = f"r{c:03d}-{counter:05d}"
                length, out = prompts.draw(rng), outputs.draw(rng)
                r = Reading()
                sent_m, sent = time.monotonic(), now()
                task = asyncio.create_task(
                    read_attempt(
                        client,
                        ep,
                        headers(cid, 0),
                        ep.body(make_prompt(prefix, length, rng), out),
                        r,
                        now,
                    )
                )
                await asyncio.wait({task}, timeout=timeout)
                gave_up = not task.done()
                if gave_up:
                    task.cancel()
                    await asyncio.wait({task})
                outcome = outcome_of(r, gave_up)
                fin_m = time.monotonic()
                sink(
                    Record(
                        cid,
                        0,
                        sent,
                        sent,
                        now(),
                        outcome,
                        r.status,
                        ep.model,
                        r.prompt_tokens,
                        out,
                        r.execution_id if outcome != "shed" else None,
                    )
                )
                if outcome == "delivered":
                    if fin_m <= end:
                        done.append(fin_m - sent_m)
                else:
                    failed += 1
                    if r.status is None and not gave_up:
                        await asyncio.sleep(0.2)  # a refused connection: do not spin

        await asyncio.gather(*(worker() for _ in range(c)))
    return Level(
        concurrency=c,
        seconds=seconds,
        completed=len(done),
        failed=failed,
        calls_per_s=len(done) / seconds,
        latency_median_s=statistics.median(done) if done else None,
    )


def measure(
    ep: Endpoint,
    *,
    level_seconds: float,
    prefix: list[str],
    prompts: Lengths,
    outputs: Lengths,
    seed: int,
    sink: Callable[[Record], None],
    max_concurrency: int = 64,
    min_gain: float = 0.05,
    progress: Callable[[Level], None] | None = None,
) -> Ramp:
    rng = random.Random(seed * 7919 + 3)
    ramp = Ramp()
    c = 1
    best = 0.0
    while True:
        lv = asyncio.run(
            _level(
                ep,
                c,
                level_seconds,
                prefix,
                prompts,
                outputs,
                rng,
                sink,
                timeout=max(60.0, 4 * level_seconds),
            )
        )
        ramp.levels.append(lv)
        if progress is not None:
            progress(lv)
        if lv.calls_per_s > best * (1 + min_gain):
            best, ramp.best_concurrency = lv.calls_per_s, c
        else:
            ramp.stopped = RampStop("small_gain", c, min_gain)
            break
        if c * 2 > max_concurrency:
            ramp.stopped = RampStop("highest", max_concurrency, min_gain)
            break
        c *= 2
    ramp.capacity = best if best > 0 else None
    return ramp
