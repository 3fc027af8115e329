"""GuideLLM `benchmarks.json` (0.4+ layout) -> proxy attempts, one per request.

`benchmarks[].requests` holds `successful`, `incomplete` and `errored` lists of
`GenerativeRequestStats`. Each request is one call with one attempt (GuideLLM does not retry):
  call_id       request_id (info.request_id)
  t_planned     info.timings.targeted_start (when the load profile meant to send it)
  t_sent        info.timings.request_start, else request_start_time (unix seconds)
  t_end         info.timings.request_end, else request_end_time; else t_sent (unknown)
  outcome       successful: delivered; errored: error; incomplete: client_gone (still in
                flight when the benchmark window closed: the client stopped waiting)
  execution_id  response_id, the vLLM response id (`chatcmpl-...`, vLLM's external id)
  prompt_tokens prompt_tokens
GuideLLM records no HTTP status or replica (NULL). A request that was never sent (no start
time) is not an attempt: it is counted in a note, not stored. The lists may be a sample of the requests: when
`metrics.request_totals` counts more than the lists hold, a note says so.
The document is read whole (a benchmark report, not a log).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, LineError
from relplan.ingest.gateway_rows import AttemptSink, as_float, as_int, dig, json_records, text
from relplan.ingest.outcome import say

if TYPE_CHECKING:
    import duckdb


_OUTCOME = {"successful": "delivered", "errored": "error", "incomplete": "client_gone"}


def is_guidellm(doc: Any) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        return False
    first = doc["benchmarks"][0] if doc["benchmarks"] else {}
    return isinstance(first, dict) and ("requests" in first or "type_" in first)


def map_request(req: dict[str, Any], group: str) -> tuple[dict[str, Any], str | None]:
    rid = text(req.get("request_id")) or text(dig(req, "info.request_id"))
    if rid is None:
        return {}, "request_id is missing"
    timings = dig(req, "info.timings") or {}
    t_sent = as_float(timings.get("request_start")) or as_float(req.get("request_start_time"))
    if t_sent is None:
        return {}, LineError(f"{group} request {rid} was never sent (no request_start)")
    t_end = as_float(timings.get("request_end")) or as_float(req.get("request_end_time"))
    return {
        "call_id": rid,
        "t_planned": as_float(timings.get("targeted_start")),
        "t_sent": t_sent,
        "t_end": t_end if t_end is not None and t_end >= t_sent else t_sent,
        "outcome": _OUTCOME[group],
        "status": None,
        "execution_id": text(req.get("response_id")),
        "prompt_tokens": as_int(req.get("prompt_tokens")),
    }, None


def stage_guidellm(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    sink = AttemptSink(con, staged.source_id, "guidellm", opts.skip)
    sampled: list[str] = []
    never_sent = 0
    for n, raw, doc in json_records(info.path):
        if not is_guidellm(doc):
            sink.reject(n, raw[:500], "expected a GuideLLM report with a benchmarks list")
            continue
        for b, bench in enumerate(doc["benchmarks"]):
            reqs = bench.get("requests") if isinstance(bench, dict) else None
            if not isinstance(reqs, dict):
                sink.reject(
                    n, f"benchmarks[{b}]", LineError(f"benchmarks[{b}] has no requests lists")
                )
                continue
            held = 0
            for group in _OUTCOME:
                for i, req in enumerate(reqs.get(group) or []):
                    where = f"benchmarks[{b}].requests.{group}[{i}]"
                    held += 1
                    if not isinstance(req, dict):
                        sink.reject(n, where, LineError(f"{where} is not an object"))
                        continue
                    cols, err = map_request(req, group)
                    if err is not None and err.endswith("(no request_start)"):
                        never_sent += 1
                    elif err is not None:
                        sink.reject(n, where, f"{where}: {err}")
                    else:
                        sink.call(n, where, [cols])
            total = as_int(dig(bench, "metrics.request_totals.total"))
            if total is not None and total > held:
                sampled.append(say("guidellm_sampled", benchmark=b, held=held, total=total))
    sink.finish(staged.notes)
    staged.notes.extend(sampled)
    if never_sent:
        staged.notes.append(say("guidellm_never_sent", n=never_sent))
    staged.notes.append(say("guidellm_calls"))


def _recognise(head: sniff.Head, kind: str | None) -> float:
    if "benchmarks" in head.keys:
        return sniff.SIGNATURE - 0.01
    return sniff.SIGNATURE + 0.07 if is_guidellm(head.document) else 0.0


ADAPTERS = (
    Adapter(
        name="guidellm",
        shape="json",
        kinds=("proxy",),
        family="loadtests",
        summary="GuideLLM's benchmarks.json",
        tables=("attempts",),
        recognise=_recognise,
        read=stage_guidellm,
        examples=(
            Example(
                "tests/data/lab/loadtests/guidellm-constant-3/benchmarks.json.gz",
                "tests/data/lab/loadtests/README.md",
            ),
        ),
        doc="load-tests-guidellm-guidellm-and-vllm-bench-serve-vllm_bench",
        lines=False,
    ),
)
