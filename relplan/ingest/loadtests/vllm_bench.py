"""`vllm bench serve --save-result --save-detailed` JSON -> proxy attempts (one per request).

The file is one JSON object per run (`--append-result` adds more, one per line). Each request
i of a run is one call `<label or vllm-bench>-<date>-<i>` with one attempt (the benchmark client does not retry):
  t_sent      start_times[i], placed in time (below)
  t_end       t_sent + latencies[i] (else ttfts[i] + sum(itls[i]), the e2e of older files)
  outcome     delivered when errors[i] is "", else error (then latency 0 means unknown:
              t_end = t_sent)
  prompt_tokens  input_lens[i];  model  model_id
status, replica and execution_id are not in the file (NULL).

Placing in time: start_times come from `time.perf_counter()`, a monotonic clock whose zero
is arbitrary; only differences are meaningful. The run is anchored so that its last
request end falls on `date` (`%Y%m%d-%H%M%S`, written after the run, in the local time of
the machine that ran it, taken as UTC), i.e. t = date - (max end - start_times[i]). The
absolute time is then right to a second plus that machine's UTC offset; relative times are
exact. IngestOptions(bench_start=...) (the wall-clock time of the first request) overrides it.

Files without start_times (before 2026-01; `benchmarks/benchmark_serving.py --save-result`
wrote the per-request lists without them): a run with `request_rate` inf and no
`max_concurrency` sent every request at once (vLLM's request generator waits 0 between
requests at an infinite rate), so each starts at the run's start, placed as above; any other
run cannot place its requests and is refused.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NamedTuple

from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example, InputOption
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, LineError
from relplan.ingest.gateway_rows import AttemptSink, as_float, as_int, json_records, text
from relplan.ingest.outcome import say
from relplan.values import parse_instant

if TYPE_CHECKING:
    import duckdb


BENCH_KEYS = {"date", "start_times", "num_prompts", "duration", "completed"}


def is_bench(keys: set[str]) -> bool:
    """Per-request results: `failed` since 2025, the lists `ttfts`/`start_times` (older
    files have no `failed`, but `input_lens` and `ttfts`)."""
    return {"date", "completed"} <= keys and (
        ("failed" in keys and bool(keys & {"ttfts", "start_times"}))
        or {"input_lens", "ttfts"} <= keys
    )


def _all_at_once(run: dict[str, Any]) -> int | None:
    """The number of requests of a run without start_times that sent them all at once
    (`request_rate` inf, no `max_concurrency`), None for any other run."""
    rate = run.get("request_rate")
    inf = rate == "inf" or (isinstance(rate, float) and rate == float("inf"))
    ttfts = run.get("ttfts")
    if not inf or run.get("max_concurrency") is not None or not isinstance(ttfts, list):
        return None
    return len(ttfts) or None


def _item(values: Any, i: int) -> Any:
    return values[i] if isinstance(values, list) and i < len(values) else None


def _bench_start(text: str) -> float:
    return parse_instant(text, "--bench-start")


BENCH_START = InputOption[float | None](
    field="bench_start",
    type=str,
    default=None,
    metavar="TIME",
    convert=_bench_start,
    help="`vllm bench serve` results: wall-clock time of the first request (default: the"
    " run's `date`).",
)


def map_run(
    run: dict[str, Any], ln: int, opts: IngestOptions
) -> tuple[list[dict[str, Any]], LineError | None, Placed | None]:
    """The attempts of one run, why it cannot be read, and how it was placed in time."""
    starts = run.get("start_times")
    at_once = None
    if not isinstance(starts, list) or not starts:
        at_once = _all_at_once(run)
        if at_once is None:
            return (
                [],
                LineError(
                    "no start_times (vllm bench serve writes them with --save-detailed since"
                    f" 2026-01) and request_rate {run.get('request_rate')!r} (only a run at"
                    " inf without max_concurrency sends every request at once); requests"
                    " cannot be placed in time"
                ),
                None,
            )
        starts = [0.0] * at_once
    date = text(run.get("date"))
    n = len(starts)
    ends: list[float] = []
    for i in range(n):
        s = as_float(starts[i])
        if s is None:
            return [], LineError(f"start_times[{i}] is not a number"), None
        lat = as_float(_item(run.get("latencies"), i))
        if lat is None:
            ttft = as_float(_item(run.get("ttfts"), i)) or 0.0
            itl = _item(run.get("itls"), i)
            lat = ttft + sum(as_float(x) or 0.0 for x in itl) if isinstance(itl, list) else ttft
        ends.append(s + max(lat, 0.0))
    first, last_end = min(float(x) for x in starts), max(ends)
    bench_start = BENCH_START.of(opts)
    if bench_start is not None:
        shift, by_date = bench_start - first, None
    else:
        if date is None:
            return [], LineError("no date and no --bench-start; cannot place the run in time"), None
        try:
            anchor = dt.datetime.strptime(date, "%Y%m%d-%H%M%S").replace(tzinfo=dt.timezone.utc)
        except ValueError:
            return [], LineError(f"date {date!r} is not %Y%m%d-%H%M%S"), None
        shift, by_date = anchor.timestamp() - last_end, date
    tag = "-".join(x for x in (text(run.get("label")) or "vllm-bench", date) if x)
    out: list[dict[str, Any]] = []
    for i in range(n):
        t0 = float(starts[i]) + shift
        err = text(_item(run.get("errors"), i))
        ok = err is None
        out.append(
            {
                "call_id": f"{tag}-{i}",
                "t_sent": t0,
                "t_end": ends[i] + shift if ok else t0,
                "outcome": "delivered" if ok else "error",
                "status": None,
                "model": text(run.get("model_id")),
                "prompt_tokens": as_int(_item(run.get("input_lens"), i)),
            }
        )
    return out, None, Placed(by_date, at_once is not None)


def stage_vllm_bench(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    sink = AttemptSink(con, staged.source_id, "vllm_bench", opts.skip)
    placed: list[tuple[int, int, Placed]] = []
    timed = False
    for n, raw, run in json_records(info.path):
        short = raw[:500]
        if not isinstance(run, dict):
            sink.reject(n, short, "expected a vllm bench serve result object")
            continue
        tries, err, how = map_run(run, n, opts)
        if err is not None:
            sink.reject(n, short, err)
            continue
        timed = timed or isinstance(run.get("start_times"), list)
        for t in tries:
            sink.call(n, short, [t])
        assert how is not None  # placed whenever it was read
        placed.append((n, len(tries), how))
    sink.finish(staged.notes)
    staged.notes.extend(
        say("bench_run_placed", line=n, requests=k, date=how.date, at_once=how.at_once)
        for n, k, how in placed
    )
    if timed:
        staged.notes.append(say("bench_perf_counter"))
    staged.notes.append(say("bench_no_status"))


def _recognise(head: sniff.Head, kind: str | None) -> float:
    if is_bench(head.keys):
        return sniff.SIGNATURE
    first = head.first_object
    return sniff.SIGNATURE + 0.055 if first is not None and is_bench(set(first)) else 0.0


ADAPTERS: tuple[Adapter, ...] = (
    Adapter(
        name="vllm_bench",
        shape="json",
        kinds=("proxy",),
        family="loadtests",
        summary="`vllm bench serve --save-result --save-detailed` results",
        tables=("attempts",),
        recognise=_recognise,
        read=stage_vllm_bench,
        options=(BENCH_START,),
        examples=(
            Example(
                "tests/data/published/vllm_benchmark_serving_save_result_rate_inf_llm-k8s.json.gz",
                "tests/data/published/SOURCES.md",
            ),
            Example(
                "tests/data/lab/loadtests/vllm-bench-rate-6/bench.json",
                "tests/data/lab/loadtests/README.md",
            ),
        ),
        doc="load-tests-guidellm-guidellm-and-vllm-bench-serve-vllm_bench",
        lines=False,
    ),
)


# A result saved without --save-detailed: the run's summary figures only (vLLM's
# vllm/benchmarks/serve.py drops the per-request lists start_times, ttfts, itls, ...).
SUMMARY_KEYS = {"date", "completed", "failed", "request_throughput"}


class Placed(NamedTuple):
    """How a run was placed in time: by its `date` (None: by --bench-start), and whether it
    had no start_times (every request at the run's start)."""

    date: str | None
    at_once: bool


_FIGURES = (
    ("completed", "completed", ""),
    ("failed", "failed", ""),
    ("duration", "duration", " s"),
    ("request_throughput", "request throughput", " req/s"),
    ("output_throughput", "output throughput", " tok/s"),
    ("mean_ttft_ms", "mean TTFT", " ms"),
    ("p99_ttft_ms", "p99 TTFT", " ms"),
    ("mean_tpot_ms", "mean TPOT", " ms"),
    ("mean_e2el_ms", "mean e2e latency", " ms"),
)


def is_summary(keys: set[str]) -> bool:
    return keys >= SUMMARY_KEYS and not keys & {"ttfts", "start_times", "latencies"}


def summary_figures(run: dict[str, Any]) -> list[tuple[str, float | int, str]]:
    """The summary's figures a run gives: (name, value, unit)."""
    return [
        (name, v, unit)
        for key, name, unit in _FIGURES
        if isinstance(v := run.get(key), (int, float)) and not isinstance(v, bool)
    ]


def stage_bench_summary(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    """Nothing per request to store: each run's summary figures become a note, as such."""
    sink = AttemptSink(con, staged.source_id, "vllm_bench_summary", opts.skip)
    for n, raw, run in json_records(info.path):
        if not isinstance(run, dict) or not is_summary(set(run)):
            sink.reject(n, raw[:500], "expected a vllm bench serve result object")
            continue
        label = text(run.get("label")) or text(run.get("model_id")) or "vllm bench serve"
        staged.notes.append(
            say(
                "bench_summary",
                line=n,
                label=label,
                date=text(run.get("date")),
                figures=summary_figures(run),
            )
        )
    sink.finish(staged.notes)


def _recognise_summary(head: sniff.Head, kind: str | None) -> float:
    if is_summary(head.keys):
        return sniff.SIGNATURE
    return 0.0


ADAPTERS = (
    *ADAPTERS,
    Adapter(
        name="vllm_bench_summary",
        shape="json",
        kinds=("proxy",),
        family="loadtests",
        summary="`vllm bench serve --save-result` without `--save-detailed`: run summary only",
        tables=(),
        recognise=_recognise_summary,
        read=stage_bench_summary,
        examples=(
            Example(
                "tests/data/published/vllm_bench_serve_summary_save_result.json",
                "tests/data/published/SOURCES.md",
            ),
        ),
        doc="load-tests-guidellm-guidellm-and-vllm-bench-serve-vllm_bench",
    ),
)
