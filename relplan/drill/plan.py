"""The drill's plan: phases of open-loop Poisson arrivals, seeded (docs/drill.md, The plan).

A phase is `NAME=SECONDS@RATE`: RATE is a multiple of Ĉ (`0.6`) or an absolute rate
(`0.45/s`); a phase without `@RATE` sends nothing (a drain). Arrivals of a phase are a
Poisson process of its rate: exponential gaps drawn from `random.Random(seed)`, phase after
phase, so the same phases, Ĉ and seed give the same calls at the same offsets. The overload
phase is the phase called `pulse`, else the phase with the highest rate.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from relplan.errors import UsageError

_PHASE = re.compile(
    r"(?P<name>[A-Za-z][\w-]*)=(?P<secs>\d+(?:\.\d+)?)s?(?:@(?P<rate>\d+(?:\.\d+)?)(?P<abs>/s)?)?"
)


@dataclass(frozen=True)
class PhaseSpec:
    name: str
    seconds: float
    rate_x: float | None = None  # multiple of Ĉ
    rate_per_s: float | None = None  # absolute calls/s

    def rate(self, capacity: float | None) -> float:
        if self.rate_per_s is not None:
            return self.rate_per_s
        if self.rate_x is None or self.rate_x == 0:
            return 0.0
        if capacity is None:
            raise UsageError("--capacity", f"phase {self.name} is a multiple of Ĉ; give Ĉ")
        return self.rate_x * capacity

    def text(self) -> str:
        rate = ""
        if self.rate_per_s is not None:
            rate = f"@{self.rate_per_s:g}/s"
        elif self.rate_x:
            rate = f"@{self.rate_x:g}"
        return f"{self.name}={self.seconds:g}s{rate}"


def default_phases(
    *,
    base: float = 0.6,
    base_seconds: float = 60.0,
    pulse: float = 2.7,
    pulse_seconds: float = 9.0,
    hold: float | None = None,
    hold_seconds: float = 180.0,
    drain_seconds: float = 60.0,
) -> list[PhaseSpec]:
    """The paper's shape: base at 0.6 Ĉ, a pulse at 2.7 Ĉ, a hold at the base rate, a drain."""
    out = [
        PhaseSpec("base", base_seconds, rate_x=base),
        PhaseSpec("pulse", pulse_seconds, rate_x=pulse),
        PhaseSpec("hold", hold_seconds, rate_x=base if hold is None else hold),
        PhaseSpec("drain", drain_seconds),
    ]
    return [p for p in out if p.seconds > 0]


def parse_phases(text: str) -> list[PhaseSpec]:
    """`base=60s@0.6,pulse=9s@2.7,hold=180s@0.6,drain=60s` into phases, in order."""
    out: list[PhaseSpec] = []
    for item in (s.strip() for s in text.split(",")):
        m = _PHASE.fullmatch(item)
        if m is None:
            raise UsageError(
                "--phases",
                f"{item!r}: expected NAME=SECONDS[@RATE] such as pulse=9s@2.7 (× Ĉ),"
                " base=60s@0.45/s (calls/s) or drain=60s",
            )
        secs = float(m["secs"])
        if secs <= 0:
            raise UsageError("--phases", f"{item!r}: a phase lasts more than 0 s")
        rate = None if m["rate"] is None else float(m["rate"])
        if any(p.name == m["name"] for p in out):
            raise UsageError("--phases", f"phase {m['name']!r} is given twice")
        out.append(
            PhaseSpec(
                m["name"],
                secs,
                rate_x=None if m["abs"] else rate,
                rate_per_s=rate if m["abs"] else None,
            )
        )
    return out


@dataclass(frozen=True)
class Span:
    name: str
    start: float  # seconds from t0
    end: float
    rate_per_s: float


@dataclass(frozen=True)
class Plan:
    spans: list[Span]
    arrivals: list[tuple[float, str]]  # (seconds from t0, phase name), in time order
    capacity: float | None
    seed: int

    @property
    def duration(self) -> float:
        return self.spans[-1].end if self.spans else 0.0

    @property
    def peak_rate(self) -> float:
        return max((s.rate_per_s for s in self.spans), default=0.0)

    @property
    def overload_phase(self) -> str | None:
        names = [s.name for s in self.spans]
        if "pulse" in names:
            return "pulse"
        busy = max(self.spans, key=lambda s: s.rate_per_s, default=None)
        return None if busy is None or busy.rate_per_s == 0 else busy.name

    def calls_in(self, phase: str) -> int:
        return sum(1 for _, p in self.arrivals if p == phase)


def build_plan(phases: list[PhaseSpec], capacity: float | None, seed: int) -> Plan:
    """Spans and the Poisson arrival times of every phase, from one seeded generator."""
    rng = random.Random(seed)
    spans: list[Span] = []
    arrivals: list[tuple[float, str]] = []
    t = 0.0
    for p in phases:
        rate = p.rate(capacity)
        span = Span(p.name, t, t + p.seconds, rate)
        spans.append(span)
        if rate > 0:
            at = span.start + rng.expovariate(rate)
            while at < span.end:
                arrivals.append((at, p.name))
                at += rng.expovariate(rate)
        t = span.end
    return Plan(spans=spans, arrivals=arrivals, capacity=capacity, seed=seed)


def call_id(index: int) -> str:
    """`c000000`, `c000001`, ...: the call ids the headers and the attempt log carry."""
    return f"c{index:06d}"
