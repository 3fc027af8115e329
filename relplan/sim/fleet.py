"""A fleet of N replicas behind a load balancer, with crashes and drains (docs/planning.md,
checking the budget model by simulation).

This checks `relplan budget`'s model, not the engine: a replica here is a server of unbounded
concurrency (no queue, no batching; relplan/sim/engine.py models one engine in detail), so
the streams it holds at any moment are those that arrived and have not ended.

- Streams arrive as a Poisson process of rate `arrival_rate` for the whole fleet; each lasts
  an exponential time of mean `mean_stream_s`; the balancer sends each to a replica chosen
  uniformly among those accepting (up and not draining). With none accepting it is refused.
- Each accepting replica crashes at rate `crash_rate` per second: a crash kills every stream it
  holds, and the replica is down for `restart_s`.
- Each accepting replica starts a drain at rate `drain_rate`: it stops accepting, its streams
  run to their end (or are killed at `drain_timeout_s`, the termination grace), then it is
  down for `restart_s`.

Little's law gives the estimate the budget uses: with K = arrival_rate · mean_stream_s / N
streams per replica and C = crash_rate · duration_s crashes per replica, about C·N·K streams
die per run (`littles_estimate`). A crash at a random moment sees the replica's stationary
number of streams, Poisson with mean K (Poisson arrivals split at random into an M/M/∞
queue), so the number killed is compound Poisson with variance E[crashes]·(K + K²)
(`killed_sd`). A crash empties its replica, which refills over about one stream duration, so
the simulated count runs below the estimate by a fraction of order crash_rate · mean_stream_s.
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass, field

UP, DRAINING, DOWN = 0, 1, 2
ARRIVAL, END, CRASH, DRAIN, DRAIN_TIMEOUT, RESTARTED = range(6)


@dataclass(frozen=True)
class FleetConfig:
    replicas: int
    arrival_rate: float  # streams per second, whole fleet
    mean_stream_s: float
    crash_rate: float  # per accepting replica per second
    duration_s: float
    drain_rate: float = 0.0  # per accepting replica per second
    restart_s: float = 0.0  # down after a crash, or after a drain has emptied the replica
    drain_timeout_s: float = math.inf  # streams still running this long into a drain die
    seed: int = 0

    def __post_init__(self) -> None:
        if self.replicas < 1:
            raise ValueError(f"replicas must be at least 1, got {self.replicas}")
        for name in ("arrival_rate", "mean_stream_s", "duration_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be greater than zero, got {getattr(self, name)}")
        for name in ("crash_rate", "drain_rate", "restart_s"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be zero or more, got {getattr(self, name)}")


@dataclass
class FleetResult:
    streams: int = 0  # accepted
    refused: int = 0  # no replica accepting
    completed: int = 0
    crashes: int = 0
    drains: int = 0
    killed_by_crash: int = 0
    killed_by_drain: int = 0  # still running at the drain timeout
    stream_seconds: float = 0.0  # served, within the run
    per_crash: list[int] = field(default_factory=list)

    def concurrency_per_replica(self, cfg: FleetConfig) -> float:
        """K measured: stream-seconds over duration x replicas (Little's law)."""
        return self.stream_seconds / (cfg.duration_s * cfg.replicas)


def littles_estimate(cfg: FleetConfig) -> float:
    """C·N·K: crashes per replica x replicas x streams per replica."""
    k = cfg.arrival_rate * cfg.mean_stream_s / cfg.replicas
    return cfg.crash_rate * cfg.duration_s * cfg.replicas * k


def killed_sd(cfg: FleetConfig) -> float:
    """Standard deviation of the streams killed: compound Poisson, E[crashes]·(K + K²)."""
    k = cfg.arrival_rate * cfg.mean_stream_s / cfg.replicas
    return math.sqrt(cfg.crash_rate * cfg.duration_s * cfg.replicas * (k + k * k))


def simulate_fleet(cfg: FleetConfig) -> FleetResult:
    rng = random.Random(cfg.seed)
    res = FleetResult()
    state = [UP] * cfg.replicas
    epoch = [0] * cfg.replicas  # bumps on each state change: stale crash/drain events drop
    held: list[dict[int, float]] = [{} for _ in range(cfg.replicas)]  # stream -> start
    accepting = list(range(cfg.replicas))
    heap: list[tuple[float, int, int, int, int]] = []  # (t, kind, replica, epoch/stream, seq)
    seq = 0

    def push(t: float, kind: int, replica: int, tag: int) -> None:
        nonlocal seq
        if t <= cfg.duration_s:
            heapq.heappush(heap, (t, kind, replica, tag, seq))
            seq += 1

    def arm(r: int, now: float) -> None:
        if cfg.crash_rate > 0:
            push(now + rng.expovariate(cfg.crash_rate), CRASH, r, epoch[r])
        if cfg.drain_rate > 0:
            push(now + rng.expovariate(cfg.drain_rate), DRAIN, r, epoch[r])

    def go_down(r: int, now: float) -> None:
        state[r] = DOWN
        epoch[r] += 1
        push(now + cfg.restart_s, RESTARTED, r, epoch[r])

    def kill_all(r: int, now: float) -> int:
        n = len(held[r])
        res.stream_seconds += sum(now - t0 for t0 in held[r].values())
        held[r].clear()
        return n

    for r in range(cfg.replicas):
        arm(r, 0.0)
    push(rng.expovariate(cfg.arrival_rate), ARRIVAL, -1, 0)
    stream = 0
    while heap:
        now, kind, r, tag, _ = heapq.heappop(heap)
        if kind == ARRIVAL:
            push(now + rng.expovariate(cfg.arrival_rate), ARRIVAL, -1, 0)
            if not accepting:
                res.refused += 1
                continue
            target = accepting[rng.randrange(len(accepting))]
            held[target][stream] = now
            push(now + rng.expovariate(1.0 / cfg.mean_stream_s), END, target, stream)
            res.streams += 1
            stream += 1
        elif kind == END:
            start = held[r].pop(tag, None)
            if start is None:
                continue  # killed before its end
            res.completed += 1
            res.stream_seconds += now - start
            if state[r] == DRAINING and not held[r]:
                go_down(r, now)
        elif tag != epoch[r]:
            continue  # a crash, drain or timeout armed before the replica changed state
        elif kind == CRASH and state[r] == UP:
            res.crashes += 1
            n = kill_all(r, now)
            res.killed_by_crash += n
            res.per_crash.append(n)
            accepting.remove(r)
            go_down(r, now)
        elif kind == DRAIN and state[r] == UP:
            res.drains += 1
            accepting.remove(r)
            state[r] = DRAINING
            epoch[r] += 1
            if not held[r]:
                go_down(r, now)
            elif math.isfinite(cfg.drain_timeout_s):
                push(now + cfg.drain_timeout_s, DRAIN_TIMEOUT, r, epoch[r])
        elif kind == DRAIN_TIMEOUT and state[r] == DRAINING:
            res.killed_by_drain += kill_all(r, now)
            go_down(r, now)
        elif kind == RESTARTED and state[r] == DOWN:
            state[r] = UP
            epoch[r] += 1
            accepting.append(r)
            arm(r, now)
    for r in range(cfg.replicas):  # streams still running at the end: served until then
        res.stream_seconds += sum(cfg.duration_s - t0 for t0 in held[r].values())
    return res
