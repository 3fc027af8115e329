"""vLLM's periodic stats log line -> metric samples under the vLLM metric names (docs/formats.md).

V1 (`vllm/v1/metrics/loggers.py`, every 5-10 s per engine):
    Engine 000: Avg prompt throughput: 10.8 tokens/s, Avg generation throughput: 34.3 tokens/s,
    Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.1%, Prefix cache hit rate: 85.7%
V0 (`vllm/engine/metrics.py`, every 5 s, no engine index, trailing period):
    Avg prompt throughput: 605.5 tokens/s, Avg generation throughput: 61.0 tokens/s, Running: 2
    reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 7.4%, CPU KV cache usage: 0.0%.

Each known field becomes one gauge sample at the line's time; the engine index is the label
`engine` ("0", as vLLM's /metrics spells it). Fields newer releases add (`Preemptions: N`,
`Deferred: N reqs`, `External prefix cache hit rate: P%`, ...) are counted in a note, not stored.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import duckdb

from relplan.ingest.metrics import text as metrics_text
from relplan.values import parse_number

_ENGINE = re.compile(r"^Engine (\d+): ")
_V0_PREFIX_RATE = re.compile(
    r"Prefix cache hit rate: GPU: ([^,%]+)%, CPU: ([^,%]+)%"
)  # later V0 releases
_FIELD = re.compile(r"^([A-Za-z][A-Za-z ]*?):\s*(\S+?)\s*(tokens/s|reqs|%)?$")

# field -> (metric, divide by)
_GAUGES: dict[str, tuple[str, float]] = {
    "Avg prompt throughput": ("vllm:avg_prompt_throughput_toks_per_s", 1.0),
    "Avg generation throughput": ("vllm:avg_generation_throughput_toks_per_s", 1.0),
    "Running": ("vllm:num_requests_running", 1.0),
    "Waiting": ("vllm:num_requests_waiting", 1.0),
    "Pending": ("vllm:num_requests_waiting", 1.0),
    "Swapped": ("vllm:num_requests_swapped", 1.0),
    "CPU KV cache usage": ("vllm:cpu_cache_usage_perc", 100.0),
    "Prefix cache hit rate": ("vllm:gpu_prefix_cache_hit_rate", 100.0),
    "GPU prefix cache hit rate": ("vllm:gpu_prefix_cache_hit_rate", 100.0),
    "CPU prefix cache hit rate": ("vllm:cpu_prefix_cache_hit_rate", 100.0),
}
_V0_FIELDS = ("Pending", "Swapped", "CPU KV cache usage")

HELP: dict[str, str] = {
    "vllm:avg_prompt_throughput_toks_per_s": "prompt tokens/s over the logging interval",
    "vllm:avg_generation_throughput_toks_per_s": "generated tokens/s over the logging interval",
    "vllm:num_requests_running": "requests running at the last scheduler step",
    "vllm:num_requests_waiting": "requests waiting (V1 Waiting, V0 Pending)",
    "vllm:num_requests_swapped": "requests swapped to CPU (V0)",
    "vllm:kv_cache_usage_perc": "GPU KV-cache usage, fraction (V1)",
    "vllm:gpu_cache_usage_perc": "GPU KV-cache usage, fraction (V0)",
    "vllm:cpu_cache_usage_perc": "CPU KV-cache usage, fraction (V0)",
    "vllm:gpu_prefix_cache_hit_rate": "prefix-cache hit rate, fraction (V1: recent requests)",
    "vllm:cpu_prefix_cache_hit_rate": "CPU prefix-cache hit rate, fraction (V0)",
}


class StatsLineError(ValueError):
    """A stats line with a field whose value is not a number."""


def is_stats(msg: str) -> bool:
    return _ENGINE.sub("", msg, count=1).startswith("Avg prompt throughput:")


@dataclass
class StatsLine:
    labels: dict[str, str]
    samples: list[tuple[str, float]]
    unmapped: list[str] = field(default_factory=list)


def parse_stats(msg: str) -> StatsLine:
    """One stats message (after the log prefix) -> its labels and (metric, value) samples."""
    labels: dict[str, str] = {}
    m = _ENGINE.match(msg)
    if m:
        labels["engine"] = str(int(m.group(1)))
        msg = msg[m.end() :]
    body = _V0_PREFIX_RATE.sub(
        r"GPU prefix cache hit rate: \1%, CPU prefix cache hit rate: \2%", msg.strip()
    ).rstrip(".")
    fields: list[tuple[str, float]] = []
    unmapped: list[str] = []
    for part in body.split(", "):
        fm = _FIELD.match(part.strip())
        if not fm:
            raise StatsLineError(
                f"cannot read the stats field {part.strip()[:60]!r}; expected 'Name: number'"
            )
        name, text = fm.group(1), fm.group(2)
        value = parse_number(text)
        if value is None:
            raise StatsLineError(f"{name}: {text[:40]!r} is not a number")
        if name == "GPU KV cache usage" or name in _GAUGES:
            fields.append((name, value))
        else:
            unmapped.append(name)
    v0 = any(name in _V0_FIELDS for name, _ in fields)
    samples: list[tuple[str, float]] = []
    for name, value in fields:
        if name == "GPU KV cache usage":
            metric = "vllm:gpu_cache_usage_perc" if v0 else "vllm:kv_cache_usage_perc"
            samples.append((metric, value / 100.0))
        else:
            metric, scale = _GAUGES[name]
            samples.append((metric, value / scale))
    return StatsLine(labels, samples, unmapped)


@dataclass
class StatsTally:
    lines: int = 0
    samples: int = 0
    names: set[str] = field(default_factory=set)
    unmapped: Counter[str] = field(default_factory=Counter)

    def notes(self) -> list[str]:
        out: list[str] = []
        if self.lines:
            out.append(
                f"{self.lines} stats lines -> {self.samples} metric samples of"
                f" {len(self.names)} vllm: gauges (throughput: tokens/s over the interval)"
            )
        if self.unmapped:
            fields = ", ".join(f"{k} ({v}x)" for k, v in sorted(self.unmapped.items()))
            out.append(f"stats fields not stored: {fields}")
        return out


def meta_store(source_id: int, names: set[str]) -> Callable[[duckdb.DuckDBPyConnection], None]:
    """metric_meta rows for the gauges a log's stats lines gave (Staged.finish)."""
    meta: list[tuple[str, str | None, str | None, str | None]] = [
        (name, "gauge", f"from vLLM's stats log line: {HELP[name]}", None) for name in sorted(names)
    ]
    return metrics_text.meta_store(source_id, meta)
