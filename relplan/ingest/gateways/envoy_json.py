"""Envoy JSON access logs -> proxy attempts (docs/formats.md, Envoy access log).

One log record is one downstream request: one attempt of a call. Field names are matched
case-insensitively with `%` and `-`/`_` differences ignored (START_TIME, %START_TIME%,
start_time all work). Mapping:
  call_id      the field named by --call-id-field (default x-request-id; with the default,
               `request_id` too: Istio's, Higress's and Contour's default JSON formats
               log %REQ(X-REQUEST-ID)% under that name)
  t_sent       START_TIME (RFC 3339, or epoch seconds); `@timestamp` too (Contour's name)
  t_end        t_sent + DURATION (milliseconds)
  status       RESPONSE_CODE (0, "downstream disconnected", is stored as no status)
  outcome      client_gone if RESPONSE_CODE is 0 or RESPONSE_FLAGS has DC (the client went
               away); shed if 429 or the flags have RL (rate limited), UO (overflow) or UH (no
               healthy upstream); delivered for 1xx-3xx; else error (UT upstream timeout,
               URX retry limit reached, UC upstream connection terminated, 5xx, other 4xx)
  attempt      Envoy writes one entry per downstream request. Each entry is one client
               attempt; entries of one call are numbered 0, 1, 2, ... in START_TIME order (or
               by the attempt field, e.g. x-stainless-retry-count, when one is named).
               UPSTREAM_REQUEST_ATTEMPT_COUNT = N > 1 means Envoy itself retried upstream
               inside the entry: the entry becomes N attempts, the first N - 1 known by count
               only (placed at START_TIME with zero length, outcome error, status and replica
               unknown), the last one the logged result. 0 means never sent upstream.
               For one entry per upstream try, log with the router's `upstream_log`.
  replica      UPSTREAM_HOST (the host of the last try); model from a `model` field
execution_id stays empty (Envoy does not know the engine's id) and attached is false.
Fields not listed are ignored (reported as unknown columns from the first records). The
default text format is read by gateway_envoy_text.py into the same records.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example, InputOption
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, LineError, faults_for, json_loads, open_text_lines
from relplan.ingest.gateway_rows import AttemptSink, as_int, hidden_tries, tries_refused
from relplan.ingest.gateways.options import ATTEMPT_FIELD, CALL_KEY
from relplan.ingest.outcome import say
from relplan.ingest.sniff import envoy_key
from relplan.values import parse_number, parse_time

if TYPE_CHECKING:
    import duckdb


_USED = {
    "start_time",
    "duration",
    "response_code",
    "response_flags",
    "upstream_host",
    "model",
    "upstream_request_attempt_count",
}
_SHED_FLAGS = {"RL", "UO", "UH"}
# Names that Envoy distributions' default JSON formats give these operators (Istio, Higress and
# Contour: `request_id` for %REQ(X-REQUEST-ID)%; Contour: `@timestamp` for %START_TIME%).
_START_KEYS = ("start_time", "@timestamp")
_DEFAULT_CALL_KEYS = ("x_request_id", "request_id")


def _first(f: dict[str, Any], keys: Iterable[str]) -> str | None:
    for key in keys:
        value = _text(f.get(key))
        if value is not None:
            return value
    return None


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


def _call_keys(call_field: str) -> tuple[str, ...]:
    key = envoy_key(call_field)
    return _DEFAULT_CALL_KEYS if key == _DEFAULT_CALL_KEYS[0] else (key,)


def _call_names(call_field: str) -> str:
    """The call id's field as the user wrote it, and its alias with the default."""
    return " or ".join([call_field, *(k for k in _call_keys(call_field)[1:])])


def map_record(rec: dict[str, Any], call_field: str) -> tuple[dict[str, Any], LineError | None]:
    """Stage columns for one record, and the reason it cannot be mapped (None when fine)."""
    f = {envoy_key(k): v for k, v in rec.items()}
    call_keys = _call_keys(call_field)
    call_id = _first(f, call_keys)
    if call_id is None:
        named = _call_names(call_field)
        return {}, LineError(
            f"{named} is missing or empty; expected the call id (see --call-id-field)"
        )
    start = _first(f, _START_KEYS)
    if start is None:
        return {}, LineError(
            "START_TIME (or @timestamp) is missing; expected the request's start time"
        )
    t_sent = parse_time(start)
    if t_sent is None:
        return {}, LineError(
            f"START_TIME {start[:40]!r} is not RFC 3339 with an offset or epoch seconds"
        )
    dur_text = _text(f.get("duration"))
    dur = parse_number(dur_text) if dur_text is not None else None
    if dur is None or dur < 0 or dur != dur:
        return {}, LineError(f"DURATION {dur_text!r} is not a number of milliseconds >= 0")
    code_text = _text(f.get("response_code"))
    code = parse_number(code_text) if code_text is not None else None
    if code is None or code < 0 or code != int(code):
        return {}, LineError(
            f"RESPONSE_CODE {code_text!r} is not an HTTP status (0 when disconnected)"
        )
    flags = _flags(f.get("response_flags"))
    if code == 0 or "DC" in flags:
        outcome = "client_gone"
    elif code == 429 or flags & _SHED_FLAGS:
        outcome = "shed"
    elif 100 <= code < 400:
        outcome = "delivered"
    else:
        outcome = "error"
    count_text = _text(f.get("upstream_request_attempt_count"))
    tries = as_int(count_text) if count_text is not None else 1
    refused = tries_refused(tries, "UPSTREAM_REQUEST_ATTEMPT_COUNT", repr(count_text))
    if refused is not None:
        return {}, refused
    if tries == 0 and outcome == "error" and code in (502, 503, 504):
        outcome = "shed"  # answered by Envoy without trying an upstream
    return {
        "call_id": call_id,
        "t_sent": t_sent,
        "t_end": t_sent + dur / 1000.0,
        "outcome": outcome,
        "status": None if code == 0 else code,
        "attached": False,
        "replica": _text(f.get("upstream_host")) if tries else None,
        "model": _text(f.get("model")),
        "upstream_tries": tries,
    }, None


def stage_envoy(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    faults = faults_for(opts.skip)

    def records() -> Iterable[tuple[int, str, dict[str, Any] | str]]:
        for n, line in open_text_lines(info.path, faults):
            if not line.strip():
                continue
            try:
                rec = json_loads(line)
            except ValueError:
                yield n, line, "malformed JSON; expected one JSON access-log record per line"
                continue
            yield n, line, rec if isinstance(rec, dict) else "expected a JSON object per line"
        if faults is not None:
            yield from faults.drain()

    stage_envoy_records(con, staged, opts, records(), "envoy")


CALL_ID_FIELD = InputOption[str](
    field="call_id_field",
    type=str,
    default="x-request-id",
    help="Envoy JSON access logs: the field holding the call id.",
)


def stage_envoy_records(
    con: duckdb.DuckDBPyConnection,
    staged: Staged,
    opts: IngestOptions,
    records: Iterable[tuple[int, str, dict[str, Any] | str]],
    origin: str,
) -> None:
    """Stage Envoy records (JSON objects, or fields read from text lines; a string is the
    reason the line is no record) and number their attempts within each call."""
    call_key, attempt_field = CALL_KEY.of(opts), ATTEMPT_FIELD.of(opts)
    call_field = call_key or CALL_ID_FIELD.of(opts)
    attempt_key = envoy_key(attempt_field) if attempt_field else None
    sink = AttemptSink(con, staged.source_id, origin, opts.skip, renumber=attempt_key is None)
    used = _USED | set(_START_KEYS) | set(_call_keys(call_field))
    used |= {attempt_key} if attempt_key else set()
    unknown: set[str] = set()
    upstream_retried = 0
    for n, line, rec in records:
        if isinstance(rec, str):
            sink.reject(n, line, rec)
            continue
        if n <= 1000:
            unknown.update(k for k in rec if envoy_key(k) not in used)
        cols, err = map_record(rec, call_field)
        if err is not None:
            sink.reject(n, line, err)
            continue
        first = 0.0
        if attempt_key is not None:
            given = as_int(_text({envoy_key(k): v for k, v in rec.items()}.get(attempt_key)))
            if given is None or given < 0:
                sink.reject(
                    n, line, LineError(f"{attempt_field} is missing or not a whole number >= 0")
                )
                continue
            first = float(given)
        n_tries = max(int(cols.pop("upstream_tries")), 1)
        upstream_retried += n_tries > 1
        tries = [*hidden_tries(n_tries - 1, cols["t_sent"], cols), cols]
        for i, t in enumerate(tries):
            t["attempt"] = first + i if attempt_key else float(i)
        sink.call(n, line, tries, hidden=n_tries - 1)
    sink.finish(staged.notes)
    staged.unknown_columns = sorted(unknown)
    staged.notes.append(
        say(
            "envoy_attempts",
            numbered_by=attempt_field if attempt_key else None,
            call=_call_names(call_field),
        )
    )
    if upstream_retried:
        staged.notes.append(say("envoy_upstream_retried", n=upstream_retried))
    if envoy_key(call_field) == "x_request_id" and not call_key:
        staged.notes.append(say("envoy_request_id_calls"))


_ENVOY_KEYS = {
    "start_time",
    "duration",
    "response_code",
    "response_flags",
    "upstream_request_attempt_count",
}


# Other names Envoy's command operators and the distributions' JSON formats give (Envoy
# docs, Istio, Contour, Higress): a second one must stand beside an _ENVOY_KEYS name, so a
# single `Duration` (Traefik's JSON log) is not taken for Envoy.
_ENVOY_VOCABULARY = _ENVOY_KEYS | {
    "x_request_id",
    "request_id",
    "authority",
    "protocol",
    "method",
    "path",
    "bytes_received",
    "bytes_sent",
    "upstream_host",
    "upstream_cluster",
    "upstream_service_time",
    "upstream_local_address",
    "upstream_transport_failure_reason",
    "downstream_local_address",
    "downstream_remote_address",
    "requested_server_name",
    "route_name",
    "response_code_details",
    "x_forwarded_for",
    "user_agent",
    "@timestamp",
}


def _recognise(head: sniff.Head, kind: str | None) -> float:
    if not head.records:
        return 0.0
    keys = {sniff.envoy_key(k) for k in head.keys}
    if keys & _ENVOY_KEYS and len(keys & _ENVOY_VOCABULARY) >= 2:
        return sniff.LOOSE + 0.1
    return sniff.HINTED + 0.01 if kind == "proxy" else 0.0  # before canonical JSON Lines


ADAPTERS = (
    Adapter(
        name="envoy",
        shape="json",
        kinds=("proxy",),
        family="gateways",
        summary="Envoy's JSON access log (json_format)",
        tables=("attempts",),
        recognise=_recognise,
        read=stage_envoy,
        options=(CALL_ID_FIELD, CALL_KEY, ATTEMPT_FIELD),
        examples=(
            Example(
                "tests/data/ingest/adapters/envoy.jsonl",
                "relplan's adapter fixtures (tests/data/ingest/adapters)",
            ),
            Example(
                "tests/data/published/envoy_json_format_doc_example.jsonl",
                "tests/data/published/SOURCES.md",
            ),
            Example(
                "tests/data/published/envoy_json_all_strings_contour_issue624.jsonl",
                "tests/data/published/SOURCES.md",
            ),
        ),
        doc="envoy-and-istio-access-logs-envoy-envoy_text",
    ),
)
