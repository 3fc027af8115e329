"""What Prometheus alone tells (no trace, no gateway log), over the analysed window.

From vLLM's counters, gauges and histograms (names as in tests/data/published/SOURCES.md):
completions by `request_success_total{finished_reason}`, preemptions, the KV-cache peak, the
waiting gauge against arrival rate × mean `request_queue_time_seconds` (Little's law from
metrics), the share of executions whose `e2e_request_latency_seconds` exceeded the client
deadline (bounded by the histogram's bucket bounds), the mean TTFT, and admissions estimated
from `prefix_cache_queries` ÷ the mean prompt length.

Aborted requests appear in no per-request histogram in current vLLM (vLLM issues #31503 and
#55634): the latency shares below are of requests that finished, and understate an incident
in which clients gave up.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import duckdb

from relplan import sql
from relplan.analyses.context import RunContext
from relplan.analyses.evidence import Figure, Unit, estimated, measured, missing
from relplan.analyses.wording import Words

# The figures' labels and notes, worded by relplan/text/metrics_figures.py (one per code).
Said = Literal[
    "finished_with", "mean_prompt_note", "one_scrape", "no_rise", "littles_note", "deadline_bucket"
]
_say: Words[Said] = Words("relplan.text.metrics_figures")

ABORT_NOTE = (
    "aborted requests appear in no per-request histogram in current vLLM"
    " (vLLM issues #31503 and #55634): this counts only requests that finished"
)
M = "metrics"


def window_rises(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> list[dict[str, Any]]:
    """Every counter's rise over the analysed window (queries/analyses/metric_rises_in_window
    .sql): read once per verdict, by these figures, Ĉ from throughput and aborted prefill."""
    return sql.rows(
        con, "analyses/metric_rises_in_window", {"a": ctx.window_start, "b": ctx.window_end}
    )


def _rise(rows: list[dict[str, Any]], name: str, reason: str | None = None) -> float | None:
    hit = [
        r for r in rows if r["name"] == name and (reason is None or r["finished_reason"] == reason)
    ]
    return sum(float(r["rise"]) for r in hit) if hit else None


def _buckets(rows: list[dict[str, Any]], base: str) -> list[tuple[float, float]]:
    out = []
    for r in rows:
        if r["name"] == f"{base}_bucket" and r["le"] is not None:
            le = math.inf if r["le"] in ("+Inf", "Inf", "inf") else float(r["le"])
            out.append((le, float(r["rise"])))
    return sorted(out)


def _mean(rows: list[dict[str, Any]], base: str) -> float | None:
    s, n = _rise(rows, f"{base}_sum"), _rise(rows, f"{base}_count")
    return s / n if s is not None and n else None


def figures(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    mean_prompt: float | None,
    present: dict[str, bool] | None = None,
    rises: list[dict[str, Any]] | None = None,
) -> list[Figure]:
    """The metric figures; `present` (the verdict's evidence table) decides how a figure
    that gave no value is explained: a missing input is named only when it is missing.
    `rises`: window_rises(con, ctx) when the caller has it already."""
    if not ctx.has_metrics:
        return []
    held = present or {}
    rows = window_rises(con, ctx) if rises is None else rises
    span = ctx.window_end - ctx.window_start
    out: list[Figure] = []
    once = _one_scrape(rows, "vllm:request_success_total")
    if once is not None:  # a count of 0 from one scrape would say nothing finished
        out.append(once)
    for reason in ("stop", "length", "abort", "error"):
        v = _rise(rows, "vllm:request_success_total", reason)
        if v is not None and once is None:
            out.append(
                measured(
                    f"completions_{reason}",
                    _say("finished_with", reason=reason),
                    v,
                    "count",
                    ["vllm:request_success_total"],
                )
            )
    pre = _rise(rows, "vllm:num_preemptions_total")
    if pre is not None and _instants(rows, "vllm:num_preemptions_total") >= 2:
        out.append(
            measured("preemptions", "preemptions", pre, "count", ["vllm:num_preemptions_total"])
        )
    kv = [r for r in rows if r["name"] in ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")]
    if kv:
        out.append(
            measured(
                "kv_peak",
                "peak KV-cache usage",
                max(float(r["max_value"]) for r in kv),
                "share",
                [kv[0]["name"]],
            )
        )
    queries = _rise(rows, "vllm:prefix_cache_queries_total")
    if (
        queries is not None
        and mean_prompt
        and _instants(rows, "vllm:prefix_cache_queries_total") >= 2
    ):
        out.append(
            estimated(
                "admissions",
                "admissions (prefix-cache queries ÷ mean prompt length)",
                queries / mean_prompt,
                "count",
                [
                    "vllm:prefix_cache_queries_total",
                    "vllm:prompt_tokens_total",
                    "vllm:request_success_total",
                ],
                note=_say("mean_prompt_note", mean_prompt=mean_prompt),
                needs="an engine trace or a vLLM log (admissions counted)",
            )
        )
    out.append(_littles(rows, span, held))
    out.append(_over_deadline(rows, ctx, held))
    ttft = _mean(rows, "vllm:time_to_first_token_seconds")
    if ttft is not None:
        out.append(
            measured(
                "ttft_mean",
                "mean time to first token",
                ttft,
                "s",
                ["vllm:time_to_first_token_seconds"],
                note=ABORT_NOTE,
            )
        )
    elif held.get("hist_ttft"):
        out.append(
            _no_rise(
                "ttft_mean", "mean time to first token", "s", "vllm:time_to_first_token_seconds"
            )
        )
    else:
        out.append(
            missing(
                "ttft_mean",
                "mean time to first token",
                "s",
                "the vllm:time_to_first_token_seconds histogram",
            )
        )
    return out


def _instants(rows: list[dict[str, Any]], name: str) -> int:
    """Distinct sample times of `name` in the window (0 when absent)."""
    return max((int(r["instants"]) for r in rows if r["name"] == name), default=0)


def _one_scrape(rows: list[dict[str, Any]], name: str) -> Figure | None:
    """A counter sampled at one instant in the window: its rise is unknown, not 0."""
    n = _instants(rows, name)
    if n != 1:
        return None
    return Figure(
        key="completions",
        label="requests finished",
        value=None,
        unit="count",
        status="not available",
        inputs=[name],
        note=_say("one_scrape", name=name),
    )


def _no_rise(key: str, label: str, unit: Unit, metric: str) -> Figure:
    """A figure whose histogram is present but did not rise in the window (one scrape, or
    no request finished): not available, and the note says so instead of asking for it."""
    return Figure(
        key=key,
        label=label,
        value=None,
        unit=unit,
        status="not available",
        inputs=[metric],
        note=_say("no_rise", metric=metric),
    )


def _littles(rows: list[dict[str, Any]], span: float, held: dict[str, bool]) -> Figure:
    label = "waiting gauge ÷ (arrival rate × mean queue time), Little's law from metrics"
    wq = _mean(rows, "vllm:request_queue_time_seconds")
    n = _rise(rows, "vllm:request_queue_time_seconds_count")
    waiting = [r for r in rows if r["name"] == "vllm:num_requests_waiting"]
    if (wq is None or not n or span <= 0) and held.get("hist_queue") and waiting:
        return _no_rise("littles_law_metrics", label, "count", "vllm:request_queue_time_seconds")
    if wq is None or not n or not waiting or span <= 0:
        lacking = []
        if not held.get("hist_queue"):
            lacking.append("the vllm:request_queue_time_seconds histogram")
        if not waiting:
            lacking.append("vllm:num_requests_waiting")
        if not lacking:
            return _no_rise(
                "littles_law_metrics", label, "count", "vllm:request_queue_time_seconds"
            )
        return missing(
            "littles_law_metrics", label, "count", " and ".join(lacking), note=ABORT_NOTE
        )
    # One series per quantity: metric_rises_in_window reads the waiting gauge from the
    # scrapes when they hold it (never the stats line added to it); summed over replicas.
    L = sum(float(r["mean_value"]) for r in waiting)
    lam = n / span
    return measured(
        "littles_law_metrics",
        label,
        L / (lam * wq) if lam * wq else None,
        "count",
        ["vllm:num_requests_waiting", "vllm:request_queue_time_seconds"],
        note=_say("littles_note", waiting=L, arrivals=lam, queue_time=wq, caveat=ABORT_NOTE),
    )


def _over_deadline(rows: list[dict[str, Any]], ctx: RunContext, held: dict[str, bool]) -> Figure:
    key, label = "e2e_over_deadline", "finished requests whose end-to-end latency exceeded D"
    b = _buckets(rows, "vllm:e2e_request_latency_seconds")
    if (not b or not b[-1][1]) and held.get("hist_e2e"):
        return _no_rise(key, label, "share", "vllm:e2e_request_latency_seconds")
    if not b:
        return missing(
            key, label, "share", "the vllm:e2e_request_latency_seconds histogram", note=ABORT_NOTE
        )
    if ctx.deadline_s is None:
        return missing(
            key,
            label,
            "share",
            "the client deadline (--deadline or a run.json"
            + (")" if held.get("gateway") else ", or a gateway log)"),
        )
    total = b[-1][1]
    if not total:
        return missing(key, label, "share", "finished requests in the window")
    d = ctx.deadline_s
    below = max(((le, c) for le, c in b if le <= d), default=(0.0, 0.0))
    above = min(((le, c) for le, c in b if le >= d), default=b[-1])
    high, low = 1 - below[1] / total, 1 - above[1] / total
    return measured(
        key,
        label,
        (high + low) / 2,
        "share",
        ["vllm:e2e_request_latency_seconds"],
        low=low,
        high=high,
        note=_say("deadline_bucket", below=below[0], above=above[0], deadline=d, caveat=ABORT_NOTE),
    )
