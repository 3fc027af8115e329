"""vLLM's periodic stats log line -> metric samples under the vLLM metric names (docs/formats.md).

V1 (`vllm/v1/metrics/loggers.py`, every 5-10 s per engine):
    Engine 000: Avg prompt throughput: 10.8 tokens/s, Avg generation throughput: 34.3 tokens/s,
    Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, Prefix cache hit rate: 85.7%
V0 (`vllm/engine/metrics.py`, every 5 s, no engine index, trailing period):
    Avg prompt throughput: 605.5 tokens/s, Avg generation throughput: 61.0 tokens/s, Running: 2
    reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 7.4%, CPU KV cache usage: 0.0%.

Aggregated (`--aggregate-engine-logging` with data parallelism): `2 Engines Aggregated: Avg ...`.

Any subset of the fields, in any order, each `Name: number[unit]` (units tokens/s, reqs, %, ms,
s). Each known field becomes one gauge sample at the line's time; the engine index is the label
`engine` ("0", as vLLM's /metrics spells it); an aggregated line has none. `<device> KV cache
usage` is the KV-cache usage in V1 (`CPU KV cache usage` on a CPU build: vllm:kv_cache_usage_perc);
only in a V0 line (Swapped/Pending, or GPU and CPU side by side) is CPU the swap space
(vllm:cpu_cache_usage_perc). Fields newer releases add (`Preemptions: N`, `Deferred: N reqs`,
`External prefix cache hit rate: P%`, `MM cache hit rate`, `KV fetch: ...`, `MFU: ...`) and
fields whose value is not a number are counted in a note, not stored; a line is never refused
for them.

Iteration details (`--enable-logging-iteration-details`, vllm/v1/metrics/loggers.py):
    [Engine 000: ]Iteration(515): 0 context requests, 0 context tokens, 20 generation requests,
    20 generation tokens, iteration elapsed time: 10.99 ms[ (dummy)][, CPU KV cache usage: 0.5%]
become engine_stats rows (parse_iteration) and a vllm_log:iteration_elapsed_seconds sample.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from relplan.ingest.metrics import text as metrics_text
from relplan.ingest.outcome import say
from relplan.values import parse_number

if TYPE_CHECKING:
    import duckdb


_ENGINE = re.compile(r"^(?:Engine (\d+)|(\d+) Engines Aggregated): ")
_V0_PREFIX_RATE = re.compile(
    r"Prefix cache hit rate: GPU: ([^,%]+)%, CPU: ([^,%]+)%"
)  # later V0 releases
_NAME = re.compile(r"^([A-Za-z][A-Za-z ()/_-]*?):\s*(.*)$")
# A value: a number and an optional unit (vLLM writes tokens/s, reqs, %, ms, s).
_VALUE = re.compile(
    r"^(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|NaN|inf|-inf)\s*"
    r"(?P<unit>%|ms|s|tokens/s|tokens|reqs|req/s)?$"
)
_DEVICE_KV = re.compile(r"^([A-Z]+) KV cache usage$")  # V1: f"{kv_cache_device} KV cache usage"

# field -> (metric, divide by)
_GAUGES: dict[str, tuple[str, float]] = {
    "Avg prompt throughput": ("vllm:avg_prompt_throughput_toks_per_s", 1.0),
    "Avg generation throughput": ("vllm:avg_generation_throughput_toks_per_s", 1.0),
    "Running": ("vllm:num_requests_running", 1.0),
    "Waiting": ("vllm:num_requests_waiting", 1.0),
    "Pending": ("vllm:num_requests_waiting", 1.0),
    "Swapped": ("vllm:num_requests_swapped", 1.0),
    "Prefix cache hit rate": ("vllm:gpu_prefix_cache_hit_rate", 100.0),
    "GPU prefix cache hit rate": ("vllm:gpu_prefix_cache_hit_rate", 100.0),
    "CPU prefix cache hit rate": ("vllm:cpu_prefix_cache_hit_rate", 100.0),
}
_V0_FIELDS = ("Pending", "Swapped")

HELP: dict[str, str] = {
    "vllm:avg_prompt_throughput_toks_per_s": "prompt tokens/s over the logging interval",
    "vllm:avg_generation_throughput_toks_per_s": "generated tokens/s over the logging interval",
    "vllm:num_requests_running": "requests running at the last scheduler step",
    "vllm:num_requests_waiting": "requests waiting (V1 Waiting, V0 Pending)",
    "vllm:num_requests_swapped": "requests swapped to CPU (V0)",
    "vllm:kv_cache_usage_perc": "KV-cache usage, fraction (V1; `GPU`/`CPU`/... KV cache usage)",
    "vllm:gpu_cache_usage_perc": "GPU KV-cache usage, fraction (V0)",
    "vllm:cpu_cache_usage_perc": "CPU swap-space KV-cache usage, fraction (V0)",
    "vllm:gpu_prefix_cache_hit_rate": "prefix-cache hit rate, fraction (V1: recent requests)",
    "vllm:cpu_prefix_cache_hit_rate": "CPU prefix-cache hit rate, fraction (V0)",
    "vllm_log:iteration_elapsed_seconds": "elapsed time of one engine iteration"
    " (--enable-logging-iteration-details)",
    "vllm_log:iteration_context_requests": "context requests of one engine iteration"
    " (--enable-logging-iteration-details)",
    "vllm_log:iteration_context_tokens": "context tokens of one engine iteration"
    " (--enable-logging-iteration-details)",
    "vllm_log:iteration_generation_requests": "generation requests of one engine iteration"
    " (--enable-logging-iteration-details)",
    "vllm_log:iteration_generation_tokens": "generation tokens of one engine iteration"
    " (--enable-logging-iteration-details)",
}


# an iteration line's counts -> the metric samples that keep them apart (engine_stats holds the
# sums only); joined to the step by the line's source row (queries/sim/iteration_costs.sql)
ITERATION_COUNTS: dict[str, str] = {
    "context requests": "vllm_log:iteration_context_requests",
    "context tokens": "vllm_log:iteration_context_tokens",
    "generation requests": "vllm_log:iteration_generation_requests",
    "generation tokens": "vllm_log:iteration_generation_tokens",
}


def is_stats(msg: str) -> bool:
    """A stats line: vLLM's own opening field, else (any subset, any order) at least two
    fields of the stats line's own names (`Running: 3 reqs, GPU KV cache usage: 9.0%`)."""
    body = _ENGINE.sub("", msg, count=1)
    if body.startswith("Avg prompt throughput:") or _V0_PREFIX_RATE.match(body):
        return True  # V0 logs its prefix-cache rates on a line of their own (metrics.py:502)
    if ": " not in body or body.startswith("Iteration("):
        return False
    known = [n for n, _ in split_fields(body) if n in _GAUGES or _DEVICE_KV.match(n)]
    return len(known) >= 2


@dataclass
class StatsLine:
    labels: dict[str, str]
    samples: list[tuple[str, float]]
    unmapped: list[str] = field(default_factory=list)
    # fields of a known name whose value could not be read (skipped, the rest is stored)
    unread: list[str] = field(default_factory=list)
    engines: int | None = None  # "N Engines Aggregated:"


def split_fields(body: str) -> list[tuple[str, str]]:
    """`Name: value, Name: value, ...` -> (name, value) pairs. A part without its own
    `Name:` continues the previous field (`KV fetch: 1 waiting to start, 0 in progress`)."""
    out: list[tuple[str, str]] = []
    for part in body.split(", "):
        m = _NAME.match(part.strip())
        if m:
            out.append((m.group(1).strip(), m.group(2).strip()))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + ", " + part.strip())
        else:
            out.append(("", part.strip()))
    return out


def read_value(text: str) -> tuple[float, str] | None:
    """A field value `10.8 tokens/s`, `57.9%`, `386.7 ms` -> (number, unit); None if none."""
    m = _VALUE.match(text.strip())
    if not m:
        return None
    value = parse_number(m.group("num"))
    return None if value is None else (value, m.group("unit") or "")


def engine_prefix(msg: str) -> tuple[dict[str, str], int | None, str]:
    """`Engine 000: ` -> labels {engine: "0"}; `2 Engines Aggregated: ` -> no label, N."""
    m = _ENGINE.match(msg)
    if not m:
        return {}, None, msg
    if m.group(1) is not None:
        return {"engine": str(int(m.group(1)))}, None, msg[m.end() :]
    return {}, int(m.group(2)), msg[m.end() :]


def parse_stats(msg: str) -> StatsLine:
    """One stats message (after the log prefix) -> its labels and (metric, value) samples.
    Any subset of the fields in any order; fields of unknown name, or whose value is not a
    number with a unit, are listed (unmapped / unread), never a refused line."""
    labels, engines, msg = engine_prefix(msg)
    body = _V0_PREFIX_RATE.sub(
        r"GPU prefix cache hit rate: \1%, CPU prefix cache hit rate: \2%", msg.strip()
    ).rstrip(".")
    pairs = split_fields(body)
    names = {n for n, _ in pairs}
    # V0 writes GPU and CPU (swap space) usage side by side, with Swapped/Pending; V1 writes
    # one `<device> KV cache usage` (CPU on a CPU build: the KV cache itself).
    v0 = bool(names & set(_V0_FIELDS)) or {"GPU KV cache usage", "CPU KV cache usage"} <= names
    samples: list[tuple[str, float]] = []
    unmapped: list[str] = []
    unread: list[str] = []
    for name, text in pairs:
        device = _DEVICE_KV.match(name)
        if device is not None:
            dev = device.group(1)
            metric = (
                "vllm:kv_cache_usage_perc"
                if not v0
                else "vllm:gpu_cache_usage_perc"
                if dev == "GPU"
                else "vllm:cpu_cache_usage_perc"
                if dev == "CPU"
                else None
            )
            scale = 100.0
        elif name in _GAUGES:
            metric, scale = _GAUGES[name]
        else:
            unmapped.append(name or text[:40])
            continue
        got = read_value(text)
        if metric is None or got is None:
            unread.append(name)
            continue
        samples.append((metric, got[0] / scale))
    return StatsLine(labels, samples, unmapped, unread, engines)


_ITERATION = re.compile(r"^Iteration\((\d+)\): (.*)$")
_COUNT = re.compile(r"^(\d+) ([a-z][a-z ]*)$")


def is_iteration(msg: str) -> bool:
    return _ITERATION.match(_ENGINE.sub("", msg, count=1)) is not None


@dataclass
class Iteration:
    labels: dict[str, str]
    step: int
    running: int | None  # context + generation requests
    batched_tokens: int | None  # context + generation tokens
    elapsed_s: float | None
    kv_usage: float | None
    dummy: bool
    # the line's own counts by name ("context requests", "context tokens", "generation
    # requests", "generation tokens"): stored as vllm_log:iteration_* samples (ITERATION_COUNTS)
    counts: dict[str, int] = field(default_factory=dict)


def parse_iteration(msg: str) -> Iteration | None:
    """One iteration-detail message -> its counts; None when it is not one. Fields in any
    order and any subset (older releases log no KV cache usage, no engine prefix)."""
    labels, _, rest = engine_prefix(msg)
    m = _ITERATION.match(rest)
    if m is None:
        return None
    counts: dict[str, int] = {}
    elapsed: float | None = None
    kv: float | None = None
    dummy = False
    for part in m.group(2).rstrip(".").split(", "):
        cm = _COUNT.match(part.strip())
        if cm:
            counts[cm.group(2)] = int(cm.group(1))
            continue
        nm = _NAME.match(part.strip())
        if nm is None:
            continue
        name, text = nm.group(1).strip(), nm.group(2).strip()
        if name == "iteration elapsed time":
            dummy = text.endswith("(dummy)")
            got = read_value(text.removesuffix("(dummy)").strip())
            if got is not None:
                elapsed = got[0] / 1000.0 if got[1] == "ms" else got[0]
        elif _DEVICE_KV.match(name):
            got = read_value(text)
            kv = got[0] / 100.0 if got is not None else None

    def total(a: str, b: str) -> int | None:
        return counts[a] + counts[b] if a in counts and b in counts else None

    return Iteration(
        labels,
        int(m.group(1)),
        total("context requests", "generation requests"),
        total("context tokens", "generation tokens"),
        elapsed,
        kv,
        dummy,
        counts,
    )


@dataclass
class StatsTally:
    lines: int = 0
    samples: int = 0
    names: set[str] = field(default_factory=set)
    unmapped: Counter[str] = field(default_factory=Counter)
    unread: Counter[str] = field(default_factory=Counter)
    aggregated: Counter[int] = field(default_factory=Counter)  # N engines -> lines
    iterations: int = 0
    dummy_iterations: int = 0

    def add(self, parsed: StatsLine) -> None:
        self.lines += 1
        self.samples += len(parsed.samples)
        self.names.update(name for name, _ in parsed.samples)
        self.unmapped.update(parsed.unmapped)
        self.unread.update(parsed.unread)
        if parsed.engines is not None:
            self.aggregated[parsed.engines] += 1

    def notes(self) -> list[str]:
        out: list[str] = []
        if self.lines:
            out.append(
                say("stats_lines", lines=self.lines, samples=self.samples, names=len(self.names))
            )
        if self.unmapped:
            out.append(say("stats_fields_unmapped", fields=self.unmapped))
        if self.unread:
            out.append(say("stats_fields_unread", fields=self.unread))
        for n, k in sorted(self.aggregated.items()):
            out.append(say("engines_aggregated", engines=n, lines=k))
        if self.iterations or self.dummy_iterations:
            out.append(say("iteration_lines", n=self.iterations, dummy=self.dummy_iterations))
        return out


def meta_store(source_id: int, names: set[str]) -> Callable[[duckdb.DuckDBPyConnection], None]:
    """metric_meta rows for the gauges a log's stats lines gave (Staged.finish)."""
    meta: list[tuple[str, str | None, str | None, str | None]] = [
        (name, "gauge", say("stats_metric_help", help=HELP[name]), None) for name in sorted(names)
    ]
    return metrics_text.meta_store(source_id, meta)
