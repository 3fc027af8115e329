"""The engine's Prometheus metrics as OpenMetrics text (formats.md section 3).

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

# (family, type, help, sample index in a scrape tuple, extra labels)
_FAMILIES: tuple[tuple[str, str, str, int, str], ...] = (
    ("vllm:num_requests_running", "gauge", "Number of requests in model execution batches.", 1, ""),
    ("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.", 2, ""),
    ("vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.", 3, ""),
    ("vllm:prompt_tokens", "counter", "Number of prefill tokens processed.", 4, ""),
    ("vllm:generation_tokens", "counter", "Number of generation tokens processed.", 5, ""),
    (
        "vllm:prefix_cache_queries",
        "counter",
        "Prefix cache queries, in terms of number of queried tokens.",
        6,
        "",
    ),
    (
        "vllm:prefix_cache_hits",
        "counter",
        "Prefix cache hits, in terms of number of cached tokens.",
        7,
        "",
    ),
    ("vllm:num_preemptions", "counter", "Cumulative number of preemption from the engine.", 8, ""),
)
_SUCCESS_HELP = "Count of successfully processed requests."


def _fmt_value(v: float | int) -> str:
    if isinstance(v, int):
        return str(v)
    return repr(float(v))


def render_openmetrics(
    samples: Sequence[Sequence[float | int]], t0: float, model_name: str, engine: str = "0"
) -> str:
    """OpenMetrics text for the scrape tuples of `Simulation.samples`."""
    base = f'engine="{engine}",model_name="{_escape(model_name)}"'
    times = [f"{t0 + s[0]:.3f}" for s in samples]
    out: list[str] = []
    for family, kind, help_, idx, _ in _FAMILIES:
        out.append(f"# HELP {family} {help_}")
        out.append(f"# TYPE {family} {kind}")
        name = family + "_total" if kind == "counter" else family
        prefix = f"{name}{{{base}}} "
        out.extend(
            f"{prefix}{_fmt_value(s[idx])} {ts}" for s, ts in zip(samples, times, strict=False)
        )
    out.append(f"# HELP vllm:request_success {_SUCCESS_HELP}")
    out.append("# TYPE vllm:request_success counter")
    for reason, idx in (("abort", -1), ("length", 10), ("stop", 9)):
        prefix = (
            f'vllm:request_success_total{{engine="{engine}",finished_reason="{reason}",'
            f'model_name="{_escape(model_name)}"}} '
        )
        out.extend(
            f"{prefix}{0 if idx < 0 else _fmt_value(s[idx])} {ts}"
            for s, ts in zip(samples, times, strict=False)
        )
    out.append("# EOF")
    return "\n".join(out) + "\n"


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
