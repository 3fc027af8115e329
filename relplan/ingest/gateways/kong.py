"""Kong http-log / file-log JSON -> proxy attempts.

One object per request (JSON Lines as file-log writes them, a JSON array as http-log sends a
batch, or pretty-printed objects); one entry in `tries` per upstream try (balancer attempt).
  call_id    request.id (Kong >= 3.5; also the x-kong-request-id header), or the request
             header named by call_key; else the line (a note: client retries not linked)
  try k      t_sent = tries[k].balancer_start (unix ms; balancer_start_ns when present), t_end =
             the next try's balancer_start; the last try ends at started_at +
             latencies.request (the response to the client)
  status     tries[k].code for a failed try (state "failed"/"next"); the last try: upstream_status,
             else response.status
  outcome    the last try: response.status 499 is client_gone, else by status (1xx-3xx
             delivered, 429 shed, other error); earlier tries: error
  replica    tries[k].ip:port
A request without tries never reached an upstream (an auth plugin, rate limiting): one
attempt, shed for 429/503, else error. Before Kong 2.4 the last failed try had no state or
code (Kong issue 6820): it then takes response.status.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, LineError
from relplan.ingest.gateway_rows import (
    AttemptSink,
    as_float,
    dig,
    json_records,
    logged_status,
    outcome_of,
    refusal,
    text,
)
from relplan.ingest.gateways.options import CALL_KEY
from relplan.ingest.outcome import say

if TYPE_CHECKING:
    import duckdb


def _ms(value: Any) -> float | None:
    v = as_float(value)
    return None if v is None else v / 1000.0


def map_request(
    rec: dict[str, Any], ln: int, opts: IngestOptions
) -> tuple[list[dict[str, Any]], str | None]:
    started = _ms(rec.get("started_at"))
    if started is None:
        return [], "started_at is missing; expected the request start in unix milliseconds"
    total = as_float(dig(rec, "latencies.request"))
    if total is None or total < 0:
        return [], "latencies.request is missing; expected milliseconds >= 0"
    t_end = started + total / 1000.0
    status, why = logged_status(dig(rec, "response.status"), "response.status")
    if why is not None:
        return [], why
    if status is None:
        return [], "response.status is missing; expected the HTTP status sent to the client"
    call_key = CALL_KEY.of(opts)
    if call_key:
        headers = dig(rec, "request.headers") or {}
        key = call_key.lower()
        call_id = text(
            next((v for k, v in headers.items() if str(k).lower() == key), None)
            if isinstance(headers, dict)
            else None
        )
        if call_id is None:
            return [], LineError(f"request header {call_key} (the call key) is missing or empty")
    else:
        call_id = text(dig(rec, "request.id")) or text(
            dig(rec, "response.headers.x-kong-request-id")
        )
        call_id = call_id or f"kong:{ln}"
    base = {"call_id": call_id, "model": None}
    raw_tries = rec.get("tries") or []
    if not isinstance(raw_tries, list):
        return [], "tries is not a list; expected one object per upstream try"
    if not raw_tries:
        return [
            {
                **base,
                "t_sent": started,
                "t_end": t_end,
                "status": status,
                "outcome": outcome_of(status, reached_upstream=False),
            }
        ], None
    starts: list[float] = []
    for i, tr in enumerate(raw_tries):
        if not isinstance(tr, dict):
            return [], LineError(f"tries[{i}] is not an object")
        ns = as_float(tr.get("balancer_start_ns"))
        t = ns / 1e9 if ns is not None else _ms(tr.get("balancer_start"))
        if t is None:
            return [], LineError(
                f"tries[{i}].balancer_start is missing; expected unix milliseconds"
            )
        starts.append(t)
    out: list[dict[str, Any]] = []
    for i, tr in enumerate(raw_tries):
        last = i == len(raw_tries) - 1
        code, why = logged_status(tr.get("code"), f"tries[{i}].code")
        if why is not None:
            return [], why
        if last:
            upstream, why = logged_status(rec.get("upstream_status"), "upstream_status")
            if why is not None:
                return [], why
            code = upstream or code or status
            outcome = "client_gone" if status == 499 else outcome_of(code)
            end = max(t_end, starts[i])
        else:
            outcome = "shed" if code == 429 else "error"
            end = max(starts[i + 1], starts[i])
        ip, port = text(tr.get("ip")), text(tr.get("port"))
        out.append(
            {
                **base,
                "t_sent": starts[i],
                "t_end": end,
                "status": None if code == 499 else code,
                "outcome": outcome,
                "replica": f"{ip}:{port}" if ip and port else ip,
            }
        )
    return out, None


def stage_kong(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    grouped = bool(CALL_KEY.of(opts))
    sink = AttemptSink(con, staged.source_id, "kong", opts.skip, renumber=grouped)
    for n, raw, rec in json_records(info.path, opts.skip):
        if not isinstance(rec, dict):
            why = "expected a Kong log object (malformed JSON or not an object)"
            sink.reject(n, raw, refusal(rec, why))
            continue
        tries, err = map_request(rec, n, opts)
        if err is not None:
            sink.reject(n, raw, err)
        else:
            sink.call(n, raw, tries)
    sink.finish(staged.notes)
    staged.notes.append(say("kong_attempts"))
    if not grouped:
        staged.notes.append(say("kong_request_id_calls"))


def _is_kong(keys: set[str]) -> bool:
    return {"tries", "started_at"} <= keys or {"started_at", "latencies", "upstream_uri"} <= keys


def _recognise(head: sniff.Head, kind: str | None) -> float:
    if _is_kong(head.keys):
        return sniff.SIGNATURE + 0.02
    first = head.first_object
    return sniff.SIGNATURE + 0.065 if first is not None and _is_kong(set(first)) else 0.0


ADAPTERS = (
    Adapter(
        name="kong",
        shape="json",
        kinds=("proxy",),
        family="gateways",
        summary="Kong's http-log / file-log JSON",
        tables=("attempts",),
        recognise=_recognise,
        read=stage_kong,
        options=(CALL_KEY,),
        examples=(
            Example(
                "tests/data/published/kong_http_log_doc_sample_3.7plus.json",
                "tests/data/published/SOURCES.md",
            ),
        ),
        doc="kong-http-log--file-log-kong",
    ),
)
