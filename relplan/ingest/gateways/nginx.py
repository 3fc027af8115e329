"""nginx / ingress-nginx access logs with upstream variables -> proxy attempts.

The `log_format` string (IngestOptions(log_format=...), as written in nginx.conf, quotes of the
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
one call, numbered by time (or by attempt_field). Without call_key, relplan drill's own
headers (`$http_x_relplan_call`, `$http_x_relplan_attempt`, logged by relplan lab's nginx) are
used when the log carries them. With none, each line is its own call and retries by the client
across lines are not measurable (a note says so).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relplan.errors import InputError
from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, LineError, faults_for, open_text_lines
from relplan.ingest.gateway_rows import (
    AttemptSink,
    as_float,
    as_int,
    logged_status,
    outcome_of,
    text,
)
from relplan.ingest.gateways.options import ATTEMPT_FIELD, CALL_KEY, LOG_FORMAT
from relplan.ingest.outcome import say

if TYPE_CHECKING:
    import duckdb


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

# nginx's predefined `combined` format, the `main` of the stock nginx.conf, and combined with
# timings as operators add them (nginx docs' `upstream_time` example; a bare $request_time
# [and $upstream_response_time] appended): recognised without a format string.
COMBINED = (
    '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent'
    ' "$http_referer" "$http_user_agent"'
)
COMBINED_UPSTREAM_TIME = (
    COMBINED + ' rt=$request_time uct="$upstream_connect_time" uht="$upstream_header_time"'
    ' urt="$upstream_response_time"'
)
COMBINED_RT_URT = COMBINED + " $request_time $upstream_response_time"
COMBINED_RT = COMBINED + " $request_time"
MAIN = COMBINED + ' "$http_x_forwarded_for"'
BUILT_IN = (
    UPSTREAMINFO,
    UPSTREAMINFO_OLD,
    COMBINED_UPSTREAM_TIME,
    COMBINED_RT_URT,
    COMBINED_RT,
    MAIN,
    COMBINED,
)

_VAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_LIST = r"\S+(?:(?:, | : )\S+)*"  # upstream lists: "a, b : c"
_VALUES = {
    "time_local": r"\d\d/[A-Za-z]{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}",
    "request": r"[^\"]*",
    # nginx writes a `"` of the body as \x22 (and any byte outside printable ASCII as \xNN), so a
    # body holds no `"` but does hold spaces (the lab's recording: tests/data/lab/issue23-forms).
    "request_body": r"[^\"]*",
    "tail": r".*",  # parse_combined_tail: whatever follows a combined line
}
_ID_VARS = ("request_id", "req_id", "http_x_request_id")
# A variable written right before another one (`$request_time$request_body`) is read by what
# nginx writes for it, so the two can be told apart.
_TYPED = {
    "msec": r"\d+\.\d{3}",
    "request_time": r"-|\d+(?:\.\d{1,3})?",
    "status": r"\d{3}",
    "body_bytes_sent": r"\d+",
    "bytes_sent": r"\d+",
    "request_length": r"\d+",
    "time_iso8601": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d",
}
_TRY_SPLIT = re.compile(r"\s*,\s*|\s+:\s+")


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
            adjacent = _VAR.match(fmt, m.end()) is not None
            if adjacent and name in _TYPED:
                value = _TYPED[name]
            elif name in _VALUES:
                value = _VALUES[name]
            elif name.startswith("upstream_"):
                value = _LIST
            elif lit.endswith('"') and after == '"':
                value = r"[^\"]*"
            elif lit.endswith("[") and after == "]":
                value = r"[^\]]*"
            elif adjacent:
                value = r"\S*?"
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


_TAIL_TOKEN = re.compile(r'"[^"]*"|\S+')
_SECONDS = re.compile(r"^\d+\.\d{3}$")
_TAIL_NAMES = {
    "rt": "request_time",
    "request_time": "request_time",
    "urt": "upstream_response_time",
    "upstream_response_time": "upstream_response_time",
    "us": "upstream_status",
    "upstream_status": "upstream_status",
    "ua": "upstream_addr",
    "upstream_addr": "upstream_addr",
    "rid": "request_id",
    "request_id": "request_id",
}


def parse_combined_tail(line: str) -> dict[str, str] | None:
    """A `combined` line with more fields after it, its format unknown: the tail's
    `name=value` pairs by name (rt=, urt=, us=, ua=, as nginx's docs write them) and its bare
    seconds values by position (the first $request_time, the second $upstream_response_time).
    None when the line does not start as `combined` does."""
    fmt = compiled(COMBINED + "$tail")
    f = fmt.parse(line.rstrip())
    if f is None:
        return None
    tail = f.pop("tail", "")
    bare = ["request_time", "upstream_response_time"]
    for tok in _TAIL_TOKEN.findall(tail):
        name, eq, value = tok.partition("=")
        if eq and name in _TAIL_NAMES:
            f.setdefault(_TAIL_NAMES[name], value.strip('"'))
        elif not tok.startswith('"') and _SECONDS.match(tok) and bare:
            f.setdefault(bare.pop(0), tok)
    return f


@functools.lru_cache(maxsize=64)
def compiled(fmt: str) -> NginxFormat:
    return NginxFormat(fmt)


def formats(opts: IngestOptions) -> list[NginxFormat]:
    log_format = LOG_FORMAT.of(opts)
    given = given_formats(log_format) if log_format else list(BUILT_IN)
    return [compiled(f) for f in given if not is_json_template(f)]


_DIRECTIVE = re.compile(r"\blog_format\s+(\S+)\s+((?:escape=\S+\s+)?)((?:'[^']*'|\"[^\"]*\"|\s)+);")


def conf_formats(text: str) -> dict[str, str]:
    """The `log_format name [escape=..] 'part' 'part' ...;` directives of an nginx.conf, by
    name, their quoted parts joined (nginx's own rule); `combined` is predefined."""
    out: dict[str, str] = {}
    for m in _DIRECTIVE.finditer(text):
        parts = re.findall(r"'([^']*)'|\"([^\"]*)\"", m.group(3))
        out[m.group(1)] = "".join(a or b for a, b in parts)
    return out


def given_formats(value: str) -> list[str]:
    """--log-format/--nginx-format: a format string, or the path of an nginx.conf whose
    log_format directives are all tried (in file order)."""
    path = Path(value)
    if "$" not in value and len(value) < 4096:
        try:
            if path.is_file():
                found = conf_formats(path.read_text(encoding="utf-8", errors="replace"))
                return list(found.values()) or [COMBINED]
        except OSError:
            pass
    return [value]


def is_json_template(fmt: str) -> bool:
    """A log_format that writes a JSON object (`escape=json '{"t":"$msec",...}'`)."""
    return fmt.lstrip().startswith("{")


def looks_like_nginx(first_line: str) -> bool:
    # Every built-in format starts `$remote_addr - `: a line without " - " matches none, and
    # is not run through their regexes (a JSON document on one line took 0.24 CPU s).
    return " - " in first_line and any(f.parse(first_line) for f in formats(IngestOptions()))


def _end_time(f: dict[str, str]) -> tuple[float | None, str | None]:
    if "msec" in f:
        t = as_float(f["msec"])
        return t, None if t is not None else LineError(f"$msec {f['msec']!r} is not epoch seconds")
    if "time_iso8601" in f:
        try:
            return dt.datetime.fromisoformat(f["time_iso8601"]).timestamp(), None
        except ValueError:
            return None, LineError(
                f"$time_iso8601 {f['time_iso8601']!r} is not ISO 8601 with an offset"
            )
    if "time_local" in f:
        try:
            stamp = dt.datetime.strptime(f["time_local"], "%d/%b/%Y:%H:%M:%S %z")
        except ValueError:
            return None, LineError(
                f"$time_local {f['time_local']!r} is not like 12/Jul/2019:14:28:22 +0000"
            )
        return stamp.timestamp(), None
    return None, "the format logs no time ($msec, $time_local or $time_iso8601)"


def field(f: dict[str, str], name: str) -> str | None:
    """A logged variable or request header by any of its spellings: `X-Relplan-Call`,
    `$http_x_relplan_call`, `http_x_relplan_call` and `x_relplan_call` are one."""
    key = name.strip().lstrip("$").lower().replace("-", "_")
    for k in (key, "http_" + key, key.removeprefix("http_")):
        if k in f:
            return f[k]
    return None


# The id vLLM sees as X-Request-Id: the client's header as nginx forwarded it, or ingress-nginx's
# $req_id (its default `proxy_set_header X-Request-ID $req_id`).
_UPSTREAM_ID_VARS = ("http_x_request_id", "req_id")


def map_line(
    f: dict[str, str], ln: int, opts: IngestOptions, path_tag: str
) -> tuple[list[dict[str, Any]], str | None]:
    """The tries of one line, or why it has none."""
    t_end, err = _end_time(f)
    if t_end is None:
        return [], err
    if "request_time" in f:
        rt = as_float(f.get("request_time"))
        if rt is None or rt < 0:
            return [], LineError(f"$request_time {f.get('request_time')!r} is not seconds >= 0")
    else:
        rt = 0.0  # combined: no duration logged; the attempt is placed at its end
    status = as_int(f.get("status"))
    if status is None:
        return [], LineError(f"$status {f.get('status')!r} is not an HTTP status")
    # A line without the caller's header (a health check, a probe) is a call of its own.
    call_key = CALL_KEY.of(opts)
    call_id = text(field(f, call_key)) if call_key else None
    if call_id is None:
        call_id = next((text(f[v]) for v in _ID_VARS if text(f.get(v))), None)
        call_id = call_id or f"{path_tag}:{ln}"
    start = t_end - rt
    logged = [v for v in ("upstream_addr", "upstream_status", "upstream_response_time") if v in f]
    lists = {v: _TRY_SPLIT.split(f[v].strip()) for v in logged}
    upstream_id = next((text(f[v]) for v in _UPSTREAM_ID_VARS if text(f.get(v))), None)
    base = {"call_id": call_id, "model": None, "execution_id": upstream_id}
    if not logged:  # no upstream variable logged: what the client got is all there is
        return [
            {
                **base,
                "t_sent": start,
                "t_end": t_end,
                "status": None if status == 499 else status,
                "outcome": outcome_of(status),
            }
        ], None
    if all(v == ["-"] or v == [""] for v in lists.values()):
        return [
            {
                **base,
                "execution_id": None,
                "t_sent": start,
                "t_end": t_end,
                "status": None if status == 499 else status,
                "outcome": outcome_of(status, reached_upstream=False),
            }
        ], None
    n = max(len(v) for v in lists.values())
    if any(len(v) != n for v in lists.values()):
        return [], ", ".join(
            f"${v} has {len(lists[v])} entries" for v in logged
        ) + "; expected one entry per try in each"
    addrs = lists.get("upstream_addr", [None] * n)
    statuses = lists.get("upstream_status", ["-"] * n)
    times = lists.get("upstream_response_time", ["-"] * n)
    tries: list[dict[str, Any]] = []
    t = start
    for i, (addr, st, tm) in enumerate(zip(addrs, statuses, times, strict=True)):
        dur = as_float(tm)
        if dur is None and text(tm) is not None:
            return [], LineError(f"$upstream_response_time entry {tm!r} is not seconds")
        last = i == n - 1
        if "upstream_status" in lists:
            code, why = logged_status(st, "$upstream_status entry")
            if why is not None:
                return [], why
        else:
            code = status if last else None
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
    which = (
        "the given log_format"
        if LOG_FORMAT.of(opts)
        else "ingress-nginx upstreaminfo, combined or combined with timings"
    )

    by_tail = 0

    def parse(line: str) -> dict[str, str] | str:
        nonlocal by_tail
        f = next((p for p in (fm.parse(line) for fm in fmts) if p is not None), None)
        if f is None and not LOG_FORMAT.of(opts):
            f = parse_combined_tail(line)
            by_tail += f is not None
        return (
            f
            if f is not None
            else LineError(f"does not match {which}; give the log_format string (--nginx-format)")
        )

    stage_records(con, info, staged, opts, "nginx", parse)
    if by_tail:
        staged.notes.append(say("nginx_combined_tail", n=by_tail))


def stage_records(
    con: duckdb.DuckDBPyConnection,
    info: FileInfo,
    staged: Staged,
    opts: IngestOptions,
    origin: str,
    parse: Callable[[str], dict[str, str] | str],
) -> None:
    """Stage a log whose lines `parse` turns into nginx variables (or the reason it cannot)."""
    auto = None if CALL_KEY.of(opts) else drill_headers(info, parse, LOG_FORMAT.of(opts))
    if auto is not None:
        opts = opts.replace(call_key=auto[0], attempt_field=auto[1])
        staged.notes.append(say("drill_headers", call=auto[0], attempt=auto[1]))
    call_key, attempt_field = CALL_KEY.of(opts), ATTEMPT_FIELD.of(opts)
    grouped = bool(call_key)
    sink = AttemptSink(
        con, staged.source_id, origin, opts.skip, renumber=grouped and not attempt_field
    )
    with_id = 0
    seconds_only = False
    no_duration = no_upstream = False
    unkeyed = 0
    faults = faults_for(opts.skip)
    for n, line in open_text_lines(info.path, faults):
        if not line.strip():
            continue
        f = parse(line)
        if isinstance(f, str):
            sink.reject(n, line, f)
            continue
        seconds_only = seconds_only or "msec" not in f
        no_duration = no_duration or "request_time" not in f
        no_upstream = no_upstream or not any(k.startswith("upstream_") for k in f)
        tries, err = map_line(f, n, opts, origin)
        if err is not None:
            sink.reject(n, line, err)
            continue
        with_id += any(text(f.get(v)) for v in _ID_VARS)
        keyed = grouped and text(field(f, call_key or "")) is not None
        unkeyed += grouped and not keyed
        if keyed and attempt_field:
            base = as_int(field(f, attempt_field))
            if base is None:
                sink.reject(n, line, LineError(f"{attempt_field} is missing or not a whole number"))
                continue
            for i, t in enumerate(tries):
                t["attempt"] = float(base + i)
        sink.call(n, line, tries)
    for n, line, why in faults.drain() if faults is not None else []:
        sink.reject(n, line, why)
    sink.finish(staged.notes)
    staged.notes.append(say("nginx_tries_placed"))
    if seconds_only:
        staged.notes.append(say("nginx_whole_seconds"))
    if unkeyed:
        staged.notes.append(say("unkeyed_lines", n=unkeyed, call_key=call_key))
    if no_duration:
        staged.notes.append(say("nginx_no_duration"))
    if no_upstream:
        staged.notes.append(say("nginx_no_upstream"))
    if not grouped:
        staged.notes.append(say("nginx_lines_are_calls", all_ids=with_id == sink.records))


# The headers relplan drill sends (relplan/drill/client.py) and relplan lab's nginx logs
# (relplan/lab/configs.py): with them in the log, attempts are linked into calls without
# --call-key.
DRILL_CALL_KEY = "http_x_relplan_call"
DRILL_ATTEMPT = "http_x_relplan_attempt"
DRILL_SCAN_LINES = 200


def drill_headers(
    info: FileInfo, parse: Callable[[str], dict[str, str] | str], log_format: str | None
) -> tuple[str, str | None] | None:
    """(call key, attempt field) when one of the first DRILL_SCAN_LINES lines carries relplan
    drill's call-key header with a value (probes before the drill's first call carry none).
    Only lines that can hold it are parsed: JSON lines naming the key, or every line when
    the given log_format logs it."""
    named = DRILL_CALL_KEY in (log_format or "").lower()
    try:
        for n, line in open_text_lines(info.path):
            if n > DRILL_SCAN_LINES:
                break
            if not named and DRILL_CALL_KEY not in line.lower():
                continue
            f = parse(line)
            if isinstance(f, dict) and text(field(f, DRILL_CALL_KEY)) is not None:
                attempt = DRILL_ATTEMPT if field(f, DRILL_ATTEMPT) is not None else None
                return DRILL_CALL_KEY, attempt
    except InputError:
        return None  # the full read names the bad line
    return None


_NGINX_LOOSE = re.compile(r"\[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\]")


def _recognise(head: sniff.Head, kind: str | None) -> float:
    first = head.first
    if first.startswith("[") and head.jsonish:
        return 0.0
    if looks_like_nginx(first) or _NGINX_LOOSE.search(first):
        return sniff.LIKELY + 0.09
    return 0.0


def written_for(log_format: str | None) -> str | None:
    """The format a given format string (`--log-format`) is written for: nginx's `$variable`
    or Envoy's `%COMMAND%` syntax; the file is then read with it, whatever its first line
    looks like."""
    if not log_format:
        return None
    if re.search(r"%[A-Z_]+(\([^)]*\))?%", log_format):
        return "envoy_text"
    fmts = given_formats(log_format)  # a format string, or an nginx.conf's log_formats
    if "$" not in "".join(fmts):
        return None
    json_ = {is_json_template(f) for f in fmts}
    return None if len(json_) > 1 else "nginx_json" if json_ == {True} else "nginx"


ADAPTERS = (
    Adapter(
        name="nginx",
        kinds=("proxy",),
        family="gateways",
        summary="nginx / ingress-nginx access log (upstreaminfo, or any `log_format`)",
        tables=("attempts",),
        recognise=_recognise,
        read=stage_nginx,
        options=(LOG_FORMAT, CALL_KEY, ATTEMPT_FIELD),
        chosen=lambda opts: written_for(LOG_FORMAT.of(opts)) == "nginx",
        examples=(
            Example(
                "tests/data/published/nginx_ingress_upstreaminfo_issue4312_499_retries.log",
                "tests/data/published/SOURCES.md",
            ),
        ),
        doc="nginx-and-ingress-nginx-nginx",
        server="nginx",  # its combined and JSON logs of one request are twins
    ),
)
