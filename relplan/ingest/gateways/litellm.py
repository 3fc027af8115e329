"""LiteLLM proxy logs -> proxy attempts: `LiteLLM_SpendLogs` rows (the table exported as CSV,
JSON or JSON Lines, or `/spend/logs` output) and `StandardLoggingPayload` JSON (what logging
callbacks receive).

A SpendLogs row is one call to the proxy (primary key request_id). LiteLLM's own retries and
fallbacks are counted per call, not logged per attempt: `metadata.attempted_retries` and
`metadata.attempted_fallbacks`. The row becomes 1 + retries + fallbacks attempts: the last
one is the logged result (startTime .. endTime, api_base, status), the earlier ones are
known by count only (placed at startTime with zero length, outcome error, status and
replica unknown). So attempts per call (retry amplification) are exact when the counts are
logged, a lower bound when a fallback model group was itself retried, and not measurable
when they are null (older LiteLLM, or the fields not filled): a note then says so.
  call_id     request_id (SpendLogs) / trace_id, else id (payload)
  t_sent      startTime; t_end endTime (both "YYYY-MM-DD HH:MM:SS[.ffffff]" taken as UTC when
              they carry no offset, RFC 3339, or unix seconds)
  status      error_information.error_code on failure (e.g. 429), else 200 on success
  outcome     success: delivered; failure: shed for 429, else error
  replica     api_base (the deployment that answered), else hidden_params.api_base, model_id
  model       model_group, else model;  prompt_tokens  prompt_tokens
A payload with a trace_id is one attempt of the call trace_id (numbered by startTime).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, LineError, json_loads
from relplan.ingest.gateway_rows import (
    AttemptSink,
    as_int,
    csv_records,
    dig,
    hidden_tries,
    json_records,
    logged_tokens,
    refusal,
    text,
    tries_refused,
)
from relplan.ingest.outcome import say
from relplan.values import parse_time

if TYPE_CHECKING:
    import duckdb


SPEND_KEYS = {"request_id", "spend", "startTime"}
PAYLOAD_KEYS = {"id", "call_type", "startTime", "response_cost"}


def litellm_time(value: Any) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    s = text(value)
    if s is None:
        return None
    t = parse_time(s)
    if t is not None:
        return t
    try:
        stamp = dt.datetime.fromisoformat(s)
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    return stamp.timestamp()


def _metadata(rec: dict[str, Any]) -> dict[str, Any]:
    meta = rec.get("metadata")
    if isinstance(meta, str):
        try:
            meta = json_loads(meta)
        except ValueError:
            return {}
    return meta if isinstance(meta, dict) else {}


def map_row(rec: dict[str, Any]) -> tuple[list[dict[str, Any]], int | None, str | None]:
    """The attempts of one row, the number of retries + fallbacks (None: not logged), and
    the reason it cannot be read."""
    payload = "request_id" not in rec
    if payload:
        call_id = text(rec.get("trace_id")) or text(rec.get("id"))
    else:
        call_id = text(rec.get("request_id"))
    if call_id is None:
        return [], None, "request_id (or id) is missing; expected the call's id"
    t_sent = litellm_time(rec.get("startTime"))
    t_end = litellm_time(rec.get("endTime"))
    if t_sent is None or t_end is None:
        return (
            [],
            None,
            "startTime/endTime missing or not a time; expected e.g. 2025-01-24 09:20:46.847",
        )
    meta = _metadata(rec)
    state = text(rec.get("status")) or text(meta.get("status")) or "success"
    err = rec.get("error_information") or meta.get("error_information") or {}
    code = as_int(err.get("error_code")) if isinstance(err, dict) else None
    status: int | None = 200
    if state == "success":
        outcome = "delivered"
    elif state == "failure":
        outcome, status = ("shed" if code == 429 else "error"), code
    else:
        return [], None, LineError(f"status {state!r} is not success or failure")
    tokens, why = logged_tokens(rec.get("prompt_tokens"), "prompt_tokens")
    if why is not None:
        return [], None, why
    last = {
        "call_id": call_id,
        "t_sent": t_sent,
        "t_end": max(t_end, t_sent),
        "outcome": outcome,
        "status": status,
        "replica": text(rec.get("api_base"))
        or text(dig(rec, "hidden_params.api_base"))
        or text(rec.get("model_id")),
        "model": text(rec.get("model_group")) or text(rec.get("model")),
        "prompt_tokens": tokens,
    }
    retries, fallbacks = as_int(meta.get("attempted_retries")), meta.get("attempted_fallbacks")
    n_fb = as_int(fallbacks) if not isinstance(fallbacks, list) else len(fallbacks)
    if payload and text(rec.get("trace_id")):
        return [last], 0, None  # one attempt of the trace; counted across payloads
    if retries is None and n_fb is None:
        return [last], None, None
    logged = ((retries, "attempted_retries"), (n_fb, "attempted_fallbacks"))
    for n, field in logged:
        raw = meta.get(field)
        if raw is None:
            continue
        refused = tries_refused(n, f"metadata.{field}", f"({str(raw)[:40]})")
        if refused is not None:
            return [], None, refused
    extra = (retries or 0) + (n_fb or 0)
    return [*hidden_tries(extra, t_sent, last), last], extra, None


def stage_litellm(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    name = info.path.name.lower().removesuffix(".gz")
    rows = (csv_records if name.endswith(".csv") else json_records)(info.path, opts.skip)
    sink = AttemptSink(con, staged.source_id, "litellm", opts.skip)
    not_logged = 0
    traced = 0
    for n, raw, rec in rows:
        if not isinstance(rec, dict):
            why = "expected a LiteLLM spend-log row or logging payload object"
            sink.reject(n, raw, refusal(rec, why))
            continue
        tries, extra, err = map_row(rec)
        if err is not None:
            sink.reject(n, raw, err)
            continue
        traced += "request_id" not in rec and bool(text(rec.get("trace_id")))
        not_logged += extra is None
        sink.call(n, raw, tries, hidden=extra or 0)
    sink.renumber = traced > 0
    sink.finish(staged.notes)
    staged.notes.append(say("litellm_tries_per_call"))
    if not_logged:
        staged.notes.append(
            say("litellm_tries_unlogged", n=not_logged, calls=sink.records - sink.refused)
        )
    staged.notes.append(say("litellm_times_utc"))


def _is_litellm(keys: set[str]) -> bool:
    return keys >= SPEND_KEYS or keys >= PAYLOAD_KEYS


def _recognise(head: sniff.Head, kind: str | None) -> float:
    if _is_litellm(head.keys):
        return sniff.SIGNATURE + 0.01
    if head.csv_header is not None and _is_litellm(head.csv_header):
        return sniff.LOOSE + 0.1  # SpendLogs exported as CSV: before canonical CSV
    first = head.first_object
    return sniff.SIGNATURE + 0.06 if first is not None and _is_litellm(set(first)) else 0.0


ADAPTERS = (
    Adapter(
        name="litellm",
        shape="json",
        kinds=("proxy",),
        family="gateways",
        summary="LiteLLM SpendLogs rows or StandardLoggingPayload",
        tables=("attempts",),
        recognise=_recognise,
        read=stage_litellm,
        examples=(
            Example(
                "tests/data/published/litellm_spend_logs_payload_fixture.json",
                "tests/data/published/SOURCES.md",
            ),
            Example(
                "tests/data/published/litellm_standard_logging_payload_fixture.json",
                "tests/data/published/SOURCES.md",
            ),
        ),
        doc="litellm-spend-logs-and-logging-payload-litellm",
    ),
)
