"""Envoy JSON access logs -> proxy attempts (formats.md section 4).

One log record is one downstream request: one attempt of a call. Field names are matched
case-insensitively with `%` and `-`/`_` differences ignored (START_TIME, %START_TIME%,
start_time all work). Mapping:
  call_id      the field named by --call-id-field (default x-request-id)
  t_sent       START_TIME (RFC 3339, or epoch seconds)
  t_end        t_sent + DURATION (milliseconds)
  status       RESPONSE_CODE (0, "downstream disconnected", is stored as no status)
  outcome      client_gone if RESPONSE_CODE is 0 or RESPONSE_FLAGS has DC; shed if 429 or the
               flags have RL (rate limited) or UO (overflow); delivered for 1xx-3xx; else error
               (UT upstream timeout, URX retry limit, UC upstream reset, 5xx, other 4xx)
  attempt      0, 1, 2, ... in START_TIME order within the call. Retry counters in the log
               (x-stainless-retry-count, UPSTREAM_REQUEST_ATTEMPT_COUNT) are not used: the SDK
               counter restarts with every call that reuses an id, and Envoy's counts its own
               upstream tries within one downstream request.
  replica      UPSTREAM_HOST; model from a `model` field when present
execution_id stays empty (Envoy does not know the engine's id) and attached is false.
Fields not listed are ignored (reported as unknown columns from the first records).
"""

from __future__ import annotations

import json
from typing import Any

import duckdb

from relplan import sql
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.detect import envoy_key
from relplan.ingest.files import FileInfo, open_text_lines
from relplan.ingest.stage import StageWriter
from relplan.values import parse_number, parse_time

_USED = {"start_time", "duration", "response_code", "response_flags", "upstream_host", "model"}
_SHED_FLAGS = {"RL", "UO"}


def _flags(value: Any) -> set[str]:
    if value is None:
        return set()
    return {
        f.strip() for f in str(value).replace(" ", ",").split(",") if f.strip() not in ("", "-")
    }


def _text(value: Any) -> str | None:
    if value is None:
        return None
    s = str(value).strip()
    return None if s in ("", "-") else s


def map_record(rec: dict[str, Any], call_field: str) -> tuple[dict[str, Any], str | None]:
    """Stage columns for one record, and the reason it cannot be mapped (None when fine)."""
    f = {envoy_key(k): v for k, v in rec.items()}
    call_id = _text(f.get(envoy_key(call_field)))
    if call_id is None:
        return {}, f"{call_field} is missing or empty; expected the call id (see --call-id-field)"
    start = _text(f.get("start_time"))
    if start is None:
        return {}, "START_TIME is missing; expected the request's start time"
    t_sent = parse_time(start)
    if t_sent is None:
        return {}, f"START_TIME {start[:40]!r} is not RFC 3339 with an offset or epoch seconds"
    dur_text = _text(f.get("duration"))
    dur = parse_number(dur_text) if dur_text is not None else None
    if dur is None or dur < 0 or dur != dur:
        return {}, f"DURATION {dur_text!r} is not a number of milliseconds >= 0"
    code_text = _text(f.get("response_code"))
    code = parse_number(code_text) if code_text is not None else None
    if code is None or code < 0 or code != int(code):
        return {}, f"RESPONSE_CODE {code_text!r} is not an HTTP status (0 when disconnected)"
    flags = _flags(f.get("response_flags"))
    if code == 0 or "DC" in flags:
        outcome = "client_gone"
    elif code == 429 or flags & _SHED_FLAGS:
        outcome = "shed"
    elif 100 <= code < 400:
        outcome = "delivered"
    else:
        outcome = "error"
    return {
        "call_id": call_id,
        "t_sent": t_sent,
        "t_end": t_sent + dur / 1000.0,
        "outcome": outcome,
        "status": None if code == 0 else code,
        "attached": False,
        "replica": _text(f.get("upstream_host")),
        "model": _text(f.get("model")),
    }, None


def stage_envoy(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    w = StageWriter(con, "stage_proxy")
    used = _USED | {envoy_key(opts.call_id_field)}
    unknown: set[str] = set()
    for n, line in open_text_lines(info.path):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            w.add(
                source_id=staged.source_id,
                ln=n,
                raw=line,
                origin="envoy",
                perr="malformed JSON; expected one JSON access-log record per line",
            )
            continue
        if not isinstance(rec, dict):
            w.add(
                source_id=staged.source_id,
                ln=n,
                raw=line,
                origin="envoy",
                perr="expected a JSON object per line",
            )
            continue
        if n <= 1000:
            unknown.update(k for k in rec if envoy_key(k) not in used)
        cols, err = map_record(rec, opts.call_id_field)
        w.add(
            source_id=staged.source_id,
            ln=n,
            raw=line if opts.skip or err else None,
            perr=err,
            origin="envoy",
            attempt=0.0,
            **cols,
        )
    w.flush()
    sql.run(con, "ingest/envoy_number_attempts", {"source_id": staged.source_id})
    staged.unknown_columns = sorted(unknown)
    staged.notes.append(
        "attempts numbered by START_TIME within each call; execution_id unknown from Envoy logs"
    )
