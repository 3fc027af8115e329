"""nginx JSON access logs (`log_format name escape=json '{"k":"$var",...}'`), and the
nginx-based gateways that write them (APISIX, Ingress NGINX, OpenResty) -> proxy attempts.

The records are read as the nginx variables they hold and mapped exactly as the text log is
(gateway_nginx.map_line: `$msec`/`$time_iso8601`/`$time_local` are the END of the request,
start = end - `$request_time`; `$upstream_*` lists, `, ` or ` : ` separated, give one attempt
per try). Which key holds which variable:
  1. the JSON log_format itself when given (--nginx-format, or an nginx.conf path): each
     `"key": "$var"` pair names its key;
  2. else the key's own name, whatever the operator's spelling: `upstreamResponseTime`,
     `upstream-response-time`, `nginx.upstream_response_time` and `$upstream_response_time`
     are all $upstream_response_time; a key ending in a variable's name counts as it
     (`req_request_time`); request headers as `http_x_...` or `x_...`;
  3. a time key named otherwise (`time`, `timestamp`, `@timestamp`, `ts`, `date`) by its value:
     epoch seconds -> $msec, ISO 8601 -> $time_iso8601, `12/Jul/2019:14:28:22 +0000` ->
     $time_local.
JSON numbers, strings and null (`-`) are all accepted (values written as strings, as
`escape=json` with quoted variables does, are read the same).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, LineError, json_loads
from relplan.ingest.gateways.nginx import (
    given_formats,
    is_json_template,
    stage_records,
    written_for,
)
from relplan.ingest.gateways.options import ATTEMPT_FIELD, CALL_KEY, LOG_FORMAT
from relplan.ingest.outcome import say

# The variables relplan reads (gateway_nginx.map_line), longest first for suffix matches.

if TYPE_CHECKING:
    import duckdb


VARIABLES = (
    "upstream_response_time",
    "upstream_status",
    "upstream_addr",
    "time_iso8601",
    "request_time",
    "time_local",
    "request_id",
    "req_id",
    "status",
    "msec",
)
# Spellings operators use for the upstream variables (OpenResty's `up_addr`, ...).
_SHORT = {
    "up_addr": "upstream_addr",
    "upstream_address": "upstream_addr",
    "upstream": "upstream_addr",
    "up_status": "upstream_status",
    "up_resp_time": "upstream_response_time",
    "up_response_time": "upstream_response_time",
    "upstream_time": "upstream_response_time",
    "responsetime": "request_time",
}
_TIMES = ("msec", "time_iso8601", "time_local")
_TIME_NAMES = ("time", "timestamp", "ts", "date", "datetime", "logtime", "log_time")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_ISO = re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d")
_LOCAL = re.compile(r"^\d\d/[A-Za-z]{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}$")
_EPOCH = re.compile(r"^1\d{9}(?:\.\d+)?$")
_PAIR = re.compile(r'"([^"]+)"\s*:\s*"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?\s*[,}]')


def norm(key: str) -> str:
    """A key as an nginx variable would be spelt: lower snake case, no `$`/`@`."""
    k = _CAMEL.sub("_", key.strip().lstrip("$@"))
    return re.sub(r"[^a-z0-9]+", "_", k.lower()).strip("_")


def variable_of(key: str) -> str | None:
    """The nginx variable a key names by its spelling alone (None: by its value, or none)."""
    k = norm(key)
    if k.startswith("http_") or k in VARIABLES:
        return k
    if k.startswith("x_"):
        return "http_" + k
    for v in VARIABLES:
        if k.endswith("_" + v):
            return v
    return _SHORT.get(k)


def template_keys(log_format: str | None) -> dict[str, str] | None:
    """key -> variable of a JSON log_format (one variable per value), None when not given."""
    if not log_format:
        return None
    for fmt in given_formats(log_format):
        if is_json_template(fmt):
            return dict(_PAIR.findall(fmt))
    return None


def keys_look_like_nginx(keys: set[str]) -> bool:
    """Detection: a status, an nginx duration or upstream list, and no canonical proxy key."""
    if keys & {"call_id", "t_sent", "type", "execution_id"}:
        return False
    names = {variable_of(k) for k in keys}
    timed = bool(names & {"msec", "time_iso8601", "time_local"}) or any(
        norm(k) in _TIME_NAMES for k in keys
    )
    return (
        "status" in names
        and timed
        and bool(names & {"request_time", "upstream_status", "upstream_response_time"})
    )


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return f"{value:.3f}" if value > 1e9 else str(int(value))
    return str(value)


def _by_value(value: str) -> str | None:
    if _EPOCH.match(value):
        return "msec"
    if _LOCAL.match(value):
        return "time_local"
    if _ISO.match(value):
        return "time_iso8601"
    return None


def _flat(obj: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.items():
        key = f"{prefix}_{k}" if prefix else str(k)
        if isinstance(v, dict):
            out.update(_flat(v, key))
        else:
            out[key] = v
    return out


def variables(rec: dict[str, Any], given: dict[str, str] | None) -> dict[str, str]:
    """One record as nginx variables (module docstring)."""
    f: dict[str, str] = {}
    for key, value in _flat(rec).items():
        s = _text(value).strip()
        var = given.get(key) if given is not None else None
        if var is None:
            var = variable_of(key)
        if var is None and norm(key) in _TIME_NAMES:
            var = _by_value(s)
        elif var in _TIMES and given is None:
            var = _by_value(s) or var  # `"time_local": "$time_iso8601"` (nginx-proxy's JSON)
        if var is not None and var not in f:
            f[var] = s
        f.setdefault(norm(key), s)  # headers by the operator's own key (--call-key)
    if "time_iso8601" in f:
        f["time_iso8601"] = f["time_iso8601"].replace(" ", "T", 1).replace("Z", "+00:00")
    return f


def stage_nginx_json(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    given = template_keys(LOG_FORMAT.of(opts))

    def parse(line: str) -> dict[str, str] | str:
        try:
            rec = json_loads(line)
        except ValueError as exc:
            return LineError(
                f"not a JSON object ({str(exc)[:80]}); expected one nginx JSON record a line"
            )
        if not isinstance(rec, dict):
            return "not a JSON object; expected one nginx JSON record a line"
        return variables(rec, given)

    stage_records(con, info, staged, opts, "nginx_json", parse)
    staged.notes.append(say("nginx_json_keys", by_template=given is not None))


def _recognise(head: sniff.Head, kind: str | None) -> float:
    if keys_look_like_nginx(head.keys):
        return sniff.SIGNATURE - 0.02  # after the load tests' keys, before canonical records
    first = head.first_object
    return sniff.SIGNATURE + 0.05 if first is not None and keys_look_like_nginx(set(first)) else 0.0


ADAPTERS = (
    Adapter(
        name="nginx_json",
        shape="json",
        kinds=("proxy",),
        family="gateways",
        summary="nginx JSON access logs (`log_format ... escape=json`; APISIX, Ingress NGINX, OpenResty)",
        tables=("attempts",),
        recognise=_recognise,
        read=stage_nginx_json,
        options=(LOG_FORMAT, CALL_KEY, ATTEMPT_FIELD),
        chosen=lambda opts: written_for(LOG_FORMAT.of(opts)) == "nginx_json",
        examples=(
            Example(
                "tests/data/published/nginx_json_openresty_goaccess2810.jsonl",
                "tests/data/published/SOURCES.md",
            ),
            Example(
                "tests/data/published/nginx_json_camelcase_goaccess2492.jsonl",
                "tests/data/published/SOURCES.md",
            ),
        ),
        doc="nginx-json-access-logs-nginx_json",
        server="nginx",  # its combined and JSON logs of one request are twins
    ),
)
