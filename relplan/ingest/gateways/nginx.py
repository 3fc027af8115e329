"""nginx / ingress-nginx access logs with upstream variables -> proxy attempts.

The `log_format` string (IngestOptions.log_format, as written in nginx.conf, quotes of the
config joined) is compiled into a regular expression, the way GoAccess reads `--log-format`:
`$variable` becomes a group, the text between variables is literal. Without one, the
ingress-nginx `upstreaminfo` default is tried, then the older layout with a second address
(`$remote_addr - [$the_real_ip] - $remote_user ...`, seen in ingress-nginx 0.25 logs).

One line is one call; its tries are the entries of `$upstream_status`, `$upstream_addr`
and `$upstream_response_time` (", " between tries of a group, " : " between groups after an
internal redirect; both split the same way):
  t_end of the call   `$msec` when logged, else `$time_local`/`$time_iso8601` (whole seconds)
  t_sent of the call  t_end - `$request_time`
  try k               placed back to back from the call's start: t_sent = start + the sum
                      of the earlier tries' `$upstream_response_time`, t_end = t_sent + its
                      own (nginx logs no start per try; the gaps between tries are unknown)
  status              the try's `$upstream_status` (`-`: no response, NULL)
  outcome             the last try: client_gone when `$status` is 499 (the client closed),
                      else by its status (1xx-3xx delivered, 429 shed, other error); earlier
                      tries: error (nginx passed the call to the next server), 429 shed
  replica             the try's `$upstream_addr`
A line with no upstream (`$upstream_addr` is `-`) is one attempt answered by nginx itself:
shed for 429/503, client_gone for 499, else by `$status`.
The call id is `$request_id`/`$req_id`/`$http_x_request_id` when logged, or the variable
named by call_key (e.g. `$http_idempotency_key`): then lines with the same key are tries of
one call, numbered by time (or by attempt_field). With none, each line is its own call and
retries by the client across lines are not measurable (a note says so).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import duckdb

from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, faults_for, open_text_lines
from relplan.ingest.gateway_rows import AttemptSink, as_float, as_int, outcome_of, text

UPSTREAMINFO = (
    '$remote_addr - $remote_user [$time_local] "$request_method $uri $server_protocol" '
    '$status $body_bytes_sent "$http_referer" "$http_user_agent" '
    "$request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name]"
    " $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id"
)
UPSTREAMINFO_OLD = (
    '$remote_addr - [$the_real_ip] - $remote_user [$time_local] "$request" '
    '$status $body_bytes_sent "$http_referer" "$http_user_agent" '
    "$request_length $request_time [$proxy_upstream_name] [$proxy_alternative_upstream_name]"
    " $upstream_addr $upstream_response_length $upstream_response_time $upstream_status $req_id"
)

_VAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_LIST = r"\S+(?:(?:, | : )\S+)*"  # upstream lists: "a, b : c"
_VALUES = {
    "time_local": r"\d\d/[A-Za-z]{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}",
    "request": r"[^\"]*",
}
_ID_VARS = ("request_id", "req_id", "http_x_request_id")
_TRY_SPLIT = re.compile(r", | : ")


class NginxFormat:
    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        parts: list[str] = []
        self.names: list[str] = []
        pos = 0
        for m in _VAR.finditer(fmt):
            lit = fmt[pos : m.start()]
            parts.append(re.escape(lit))
            name = m.group(1) or m.group(2)
            after = fmt[m.end() : m.end() + 1]
            if name in _VALUES:
                value = _VALUES[name]
            elif name.startswith("upstream_"):
                value = _LIST
            elif lit.endswith('"') and after == '"':
                value = r"[^\"]*"
            elif lit.endswith("[") and after == "]":
                value = r"[^\]]*"
            else:
                value = r"\S*"
            parts.append(f"(?P<g{len(self.names)}>{value})")
            self.names.append(name)
            pos = m.end()
        parts.append(re.escape(fmt[pos:]))
        self.rx = re.compile("^" + "".join(parts) + r"\s*$")

    def parse(self, line: str) -> dict[str, str] | None:
        m = self.rx.match(line)
        if not m:
            return None
        return {name: m.group(f"g{i}") for i, name in enumerate(self.names)}


def formats(opts: IngestOptions) -> list[NginxFormat]:
    given = [opts.log_format] if opts.log_format else [UPSTREAMINFO, UPSTREAMINFO_OLD]
    return [NginxFormat(f) for f in given]


def looks_like_nginx(first_line: str) -> bool:
    return any(f.parse(first_line) for f in formats(IngestOptions()))


def _end_time(f: dict[str, str]) -> tuple[float | None, str | None]:
    if "msec" in f:
        t = as_float(f["msec"])
        return t, None if t is not None else f"$msec {f['msec']!r} is not epoch seconds"
    if "time_iso8601" in f:
        try:
            return dt.datetime.fromisoformat(f["time_iso8601"]).timestamp(), None
        except ValueError:
            return None, f"$time_iso8601 {f['time_iso8601']!r} is not ISO 8601 with an offset"
    if "time_local" in f:
        try:
            stamp = dt.datetime.strptime(f["time_local"], "%d/%b/%Y:%H:%M:%S %z")
        except ValueError:
            return None, f"$time_local {f['time_local']!r} is not like 12/Jul/2019:14:28:22 +0000"
        return stamp.timestamp(), None
    return None, "the format logs no time ($msec, $time_local or $time_iso8601)"


def map_line(
    f: dict[str, str], ln: int, opts: IngestOptions, path_tag: str
) -> tuple[list[dict[str, Any]], str | None]:
    """The tries of one line, or why it has none."""
    t_end, err = _end_time(f)
    if t_end is None:
        return [], err
    rt = as_float(f.get("request_time"))
    if rt is None or rt < 0:
        return [], f"$request_time {f.get('request_time')!r} is not seconds >= 0"
    status = as_int(f.get("status"))
    if status is None:
        return [], f"$status {f.get('status')!r} is not an HTTP status"
    key = (opts.call_key or "").lstrip("$").lower().replace("-", "_")
    if key:
        call_id = text(f.get(key) if key in f else f.get("http_" + key))
        if call_id is None:
            return [], f"${key} (the call key) is missing or empty"
    else:
        call_id = next((text(f[v]) for v in _ID_VARS if text(f.get(v))), None)
        call_id = call_id or f"{path_tag}:{ln}"
    start = t_end - rt
    addrs = _TRY_SPLIT.split(f.get("upstream_addr", "-"))
    statuses = _TRY_SPLIT.split(f.get("upstream_status", "-"))
    times = _TRY_SPLIT.split(f.get("upstream_response_time", "-"))
    base = {"call_id": call_id, "model": None}
    if addrs == ["-"] or not addrs:
        return [
            {
                **base,
                "t_sent": start,
                "t_end": t_end,
                "status": None if status == 499 else status,
                "outcome": outcome_of(status, reached_upstream=False),
            }
        ], None
    if not len(addrs) == len(statuses) == len(times):
        return [], (
            f"$upstream_addr has {len(addrs)} entries, $upstream_status {len(statuses)},"
            f" $upstream_response_time {len(times)}; expected one entry per try in each"
        )
    tries: list[dict[str, Any]] = []
    t = start
    for i, (addr, st, tm) in enumerate(zip(addrs, statuses, times, strict=True)):
        dur = as_float(tm)
        if dur is None and text(tm) is not None:
            return [], f"$upstream_response_time entry {tm!r} is not seconds"
        code = as_int(st)
        last = i == len(addrs) - 1
        if last:
            outcome = "client_gone" if status == 499 else outcome_of(code or status)
        else:
            outcome = "shed" if code == 429 else "error"
        d = dur or 0.0
        tries.append(
            {
                **base,
                "t_sent": t,
                "t_end": t_end if last and dur is None else t + d,
                "status": code,
                "outcome": outcome,
                "replica": text(addr),
            }
        )
        t += d
    return tries, None


def stage_nginx(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    fmts = formats(opts)
    grouped = bool(opts.call_key)
    sink = AttemptSink(
        con, staged.source_id, "nginx", opts.skip, renumber=grouped and not opts.attempt_field
    )
    with_id = 0
    seconds_only = False
    faults = faults_for(opts.skip)
    for n, line in open_text_lines(info.path, faults):
        if not line.strip():
            continue
        f = next((p for p in (fm.parse(line) for fm in fmts) if p is not None), None)
        if f is None:
            which = "the given log_format" if opts.log_format else "ingress-nginx upstreaminfo"
            sink.reject(n, line, f"does not match {which}; give the nginx log_format string")
            continue
        seconds_only = seconds_only or "msec" not in f
        tries, err = map_line(f, n, opts, "nginx")
        if err is not None:
            sink.reject(n, line, err)
            continue
        with_id += any(text(f.get(v)) for v in _ID_VARS)
        if grouped and opts.attempt_field:
            base = as_int(f.get(opts.attempt_field.lstrip("$").lower().replace("-", "_")))
            if base is None:
                sink.reject(n, line, f"{opts.attempt_field} is missing or not a whole number")
                continue
            for i, t in enumerate(tries):
                t["attempt"] = float(base + i)
        sink.call(n, line, tries)
    for n, line, why in faults.drain() if faults is not None else []:
        sink.reject(n, line, why)
    sink.finish(staged.notes)
    staged.notes.append(
        "tries placed back to back from the call's start ($msec or $time_local minus"
        " $request_time) by $upstream_response_time; nginx logs no start per try"
    )
    if seconds_only:
        staged.notes.append("times from $time_local have whole-second resolution")
    if not grouped:
        staged.notes.append(
            "each line is one call with its upstream tries; retries by the client (new"
            " requests) are not linked across lines"
            + (
                ""
                if with_id == sink.records
                else " and some lines have no request id: client retry amplification is not"
                " measurable from this source (name the caller's header with call_key)"
            )
        )


_NGINX_LOOSE = re.compile(r"\[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\]")


def _recognise(head: sniff.Head, kind: str | None) -> float:
    first = head.first
    if first.startswith("[") and head.jsonish:
        return 0.0
    if looks_like_nginx(first) or _NGINX_LOOSE.search(first):
        return sniff.LIKELY + 0.09
    return 0.0


ADAPTERS = (
    Adapter(
        name="nginx",
        kinds=("proxy",),
        family="gateways",
        summary="nginx / ingress-nginx access log (upstreaminfo, or any `log_format`)",
        tables=("attempts",),
        recognise=_recognise,
        read=stage_nginx,
        options=("--log-format", "--call-key", "--attempt-field"),
        examples=(
            Example(
                "tests/data/published/nginx_ingress_upstreaminfo_issue4312_499_retries.log",
                "tests/data/published/SOURCES.md",
            ),
        ),
        doc="gateway-logs-and-load-test-results",
    ),
)
