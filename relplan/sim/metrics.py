"""The engine's Prometheus metrics as OpenMetrics text (docs/formats.md, Metrics).

The simulator scrapes the engine every `scrape_interval_s` (5 s) from t0 and keeps vLLM's
counting rules (the engine implements them; see engine.py):
- `vllm:prompt_tokens_total`: + prompt length when an execution produces its first output
  token; never for a prefill aborted before it, not again after a preemption;
- `vllm:prefix_cache_queries_total` / `vllm:prefix_cache_hits_total` (tokens): + prompt
  length / + cached tokens when an execution is first admitted from the waiting queue
  (re-admissions after a preemption are not exported);
- `vllm:generation_tokens_total`: output tokens, counted when their step is done (tokens of
  an execution aborted while its step was in flight are discarded, as vLLM drops them);
- `vllm:num_preemptions_total`; `vllm:request_success_total{finished_reason}` for `stop` and
  `length` (an abort moves no per-request metric, so `abort` stays 0);
- gauges `vllm:num_requests_running`, `vllm:num_requests_waiting`, `vllm:kv_cache_usage_perc`.
Every series has the labels `engine="0"` and `model_name`. The text is grouped by metric
family, series by series, every sample with its timestamp in epoch seconds, and ends with
`# EOF`, which is what `promtool tsdb create-blocks-from openmetrics` reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from relplan.sim.simulator import Sample

# (family, type, help, the Sample field it reports)
_FAMILIES: tuple[tuple[str, str, str, str], ...] = (
    (
        "vllm:num_requests_running",
        "gauge",
        "Number of requests in model execution batches.",
        "running",
    ),
    (
        "vllm:num_requests_waiting",
        "gauge",
        "Number of requests waiting to be processed.",
        "waiting",
    ),
    ("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", "kv_usage"),
    ("vllm:prompt_tokens", "counter", "Number of prefill tokens processed.", "prompt_tokens"),
    (
        "vllm:generation_tokens",
        "counter",
        "Number of generation tokens processed.",
        "generation_tokens",
    ),
    (
        "vllm:prefix_cache_queries",
        "counter",
        "Prefix cache queries, in terms of number of queried tokens.",
        "prefix_cache_queries",
    ),
    (
        "vllm:prefix_cache_hits",
        "counter",
        "Prefix cache hits, in terms of number of cached tokens.",
        "prefix_cache_hits",
    ),
    (
        "vllm:num_preemptions",
        "counter",
        "Cumulative number of preemption from the engine.",
        "preemptions",
    ),
)
_SUCCESS = ("vllm:request_success", "counter")
_SUCCESS_HELP = "Count of successfully processed requests."
# finished_reason -> the Sample field counting it (None: always 0, as an abort moves nothing)
_SUCCESS_REASONS: tuple[tuple[str, str | None], ...] = (
    ("abort", None),
    ("length", "success_length"),
    ("stop", "success_stop"),
)


def _fmt_value(v: float | int) -> str:
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


def render_openmetrics(
    samples: Sequence[Sample], t0: float, model_name: str, engine: str = "0"
) -> str:
    """OpenMetrics text for the scrapes of `Simulation.samples`."""
    base = _labels(("engine", engine), ("model_name", model_name))
    times = [f"{t0 + s.t:.3f}" for s in samples]
    out: list[str] = []
    for family, kind, help_, field in _FAMILIES:
        out += _head(family, kind, help_)
        out += _series(_name(family, kind), base, [getattr(s, field) for s in samples], times)
    family, kind = _SUCCESS
    out += _head(family, kind, _SUCCESS_HELP)
    for reason, counted in _SUCCESS_REASONS:
        labels = _labels(
            ("engine", engine), ("finished_reason", reason), ("model_name", model_name)
        )
        values = [0 if counted is None else getattr(s, counted) for s in samples]
        out += _series(_name(family, kind), labels, values, times)
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _head(family: str, kind: str, help_: str) -> list[str]:
    return [f"# HELP {family} {help_}", f"# TYPE {family} {kind}"]


def _name(family: str, kind: str) -> str:
    """A sample's metric name: a counter's family with `_total`."""
    return family + "_total" if kind == "counter" else family


def _labels(*pairs: tuple[str, str]) -> str:
    """A label set's inside, `name="value",...`, values escaped."""
    return ",".join(f'{name}="{_escape(value)}"' for name, value in pairs)


def _series(name: str, labels: str, values: list[float | int], times: list[str]) -> list[str]:
    prefix = f"{name}{{{labels}}} "
    return [f"{prefix}{_fmt_value(v)} {ts}" for v, ts in zip(values, times, strict=False)]


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
