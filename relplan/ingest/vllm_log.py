"""vLLM request-log lines (`--enable-log-requests`) -> engine lifecycle events.

Lines understood (V1 and V0; the `(APIServer pid=N)` prefix and the `[file.py:NN]` or
`file.py:NN]` location are optional):
    INFO 11-30 00:00:01 [logger.py:49] Received request chatcmpl-X: params: ...   -> arrived
    INFO 11-30 00:00:01 [async_llm.py:382] Added request chatcmpl-X-1a2b3c4d.   (internal id)
    INFO 11-30 00:00:09 [async_llm.py:431] Aborted request(s) chatcmpl-X-1a2b3c4d. -> aborted
    INFO 11-30 00:00:09 [async_llm.py:402] Request chatcmpl-X aborted.            -> aborted
    INFO 11-30 00:00:07 async_llm_engine.py:140] Finished request cmpl-Y-0.     (V0) -> finished
    INFO 11-30 00:00:09 async_llm_engine.py:150] Aborted request cmpl-Y-0.      (V0) -> aborted
Every other line is ignored (counted in a note).

Ids: V1 logs the external id (`chatcmpl-<X-Request-Id>`) on "Received" and "Request ... aborted",
and the internal id (external + `-<8 hex>`) on "Added" and "Aborted request(s)". The execution
id stored is the internal id when an "Added" line gives one (so a resent X-Request-Id still
makes distinct executions); "arrived" takes the time of "Received" (else of "Added"). One
aborted event is kept per execution (V1 logs both abort lines).

Time: a container runtime's RFC 3339 prefix (`docker logs --timestamps`, `kubectl logs
--timestamps`) is used when present: it has the year, the zone and sub-seconds. Otherwise
vLLM's own `MM-DD HH:MM:SS` (taken as UTC) needs `--year`; a month going from December to
January moves to the next year. prompt_tokens is left empty: the logged token ids may be
truncated by --max-log-len.
"""

from __future__ import annotations

import datetime as dt
import re

import duckdb

from relplan.errors import InputError
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, open_text_lines
from relplan.ingest.stage import StageWriter
from relplan.values import parse_rfc3339

_LINE = re.compile(
    r"^(?:(?P<ts>\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(?:\.\d+)?(?:[zZ]|[+-]\d\d:?\d\d))\s+)?"
    r"(?:(?:stdout|stderr)\s+[FP]\s+)?"  # CRI log format: "<ts> stdout F <line>"
    r"(?:\([\w-]+ pid=\d+\)\s+)?"
    r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+"
    r"(?P<mon>\d\d)-(?P<day>\d\d)\s+(?P<hms>\d\d:\d\d:\d\d)(?P<frac>[.,]\d+)?\s+"
    r"(?:\[?[\w./-]+:\d+\]\s*)?(?P<msg>.*)$"
)
_RECEIVED = re.compile(r"^Received request ([^\s:]+)")
_ADDED = re.compile(r"^Added request (\S+?)\.?$")
_ABORTED_MANY = re.compile(r"^Aborted request\(s\) (.+?)\.?$")
_ABORTED_V0 = re.compile(r"^Aborted request (\S+?)\.?$")
_REQ_ABORTED = re.compile(r"^Request (\S+) aborted\.?$")
_FINISHED = re.compile(r"^Finished request (\S+?)\.?$")
_INTERNAL = re.compile(r"^(.+)-[0-9a-f]{8}$")


class _Clock:
    def __init__(self, year: int | None) -> None:
        self.year = year
        self.last_month: int | None = None
        self.rollovers = 0

    def time(self, m: re.Match[str], path: str, n: int) -> float:
        if m.group("ts"):
            t = parse_rfc3339(m.group("ts"))
            if t is None:
                raise InputError(f"cannot read the timestamp prefix {m.group('ts')!r}", path, n)
            return t
        if self.year is None:
            raise InputError(
                "vLLM's timestamp has no year; pass --year YYYY, or use logs with a container"
                " RFC 3339 prefix (docker logs --timestamps, kubectl logs --timestamps)",
                path,
                n,
            )
        month, day = int(m.group("mon")), int(m.group("day"))
        if self.last_month is not None and month < self.last_month and self.last_month == 12:
            self.year += 1
            self.rollovers += 1
        self.last_month = month
        frac = (m.group("frac") or ".0").replace(",", ".")
        try:
            stamp = dt.datetime.strptime(
                f"{self.year}-{month:02d}-{day:02d} {m.group('hms')}", "%Y-%m-%d %H:%M:%S"
            ).replace(tzinfo=dt.timezone.utc)
        except ValueError as exc:
            raise InputError(
                f"cannot read the date {m.group('mon')}-{m.group('day')} {m.group('hms')}"
                f" in {self.year}: {exc}",
                path,
                n,
            ) from exc
        return stamp.timestamp() + float(frac)


def stage_vllm_log(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    path = str(info.path)
    w = StageWriter(con, "stage_engine")
    clock = _Clock(opts.year)
    pending: dict[str, tuple[int, float, str]] = {}  # external id -> (line, time, raw)
    internal_of: dict[str, str] = {}  # external id -> latest internal id
    aborted: set[str] = set()
    ignored = 0
    events = 0

    def emit(n: int, t: float, exec_id: str, event: str, raw: str) -> None:
        nonlocal events
        events += 1
        w.add(
            source_id=staged.source_id,
            ln=n,
            raw=raw if opts.skip else None,
            perr=None,
            origin="vllm_log",
            type="event",
            t=t,
            execution_id=exec_id,
            event=event,
        )

    def resolve(rid: str) -> str:
        return internal_of.get(rid, rid)

    for n, line in open_text_lines(info.path):
        m = _LINE.match(line)
        if not m:
            ignored += 1 if line.strip() else 0
            continue
        msg = m.group("msg").strip()
        kind = None
        for rx, k in (
            (_RECEIVED, "received"),
            (_ADDED, "added"),
            (_ABORTED_MANY, "aborted_many"),
            (_REQ_ABORTED, "req_aborted"),
            (_ABORTED_V0, "aborted"),
            (_FINISHED, "finished"),
        ):
            mm = rx.match(msg)
            if mm:
                kind = k
                arg = mm.group(1)
                break
        if kind is None:
            ignored += 1
            continue
        t = clock.time(m, path, n)
        if kind == "received":
            if arg in pending:  # a resend before its Added: the earlier one arrived alone
                pn, pt, praw = pending.pop(arg)
                emit(pn, pt, arg, "arrived", praw)
            pending[arg] = (n, t, line)
        elif kind == "added":
            im = _INTERNAL.match(arg)
            ext = im.group(1) if im and im.group(1) in pending else arg
            internal_of[ext] = arg
            if ext in pending:
                pn, pt, praw = pending.pop(ext)
                emit(pn, pt, arg, "arrived", praw)
            else:
                emit(n, t, arg, "arrived", line)
        elif kind == "finished":
            emit(n, t, resolve(arg), "finished", line)
        else:
            ids = [s.strip() for s in arg.split(",")] if kind == "aborted_many" else [arg]
            for rid in ids:
                if not rid:
                    continue
                exec_id = resolve(rid)
                if exec_id in aborted:
                    continue
                aborted.add(exec_id)
                emit(n, t, exec_id, "aborted", line)
    for ext, (pn, pt, praw) in pending.items():
        emit(pn, pt, ext, "arrived", praw)
    w.flush()
    staged.notes.append(
        f"{events} lifecycle events from request-log lines; {ignored} other lines ignored"
    )
    staged.notes.append("prompt_tokens not available from vLLM logs (token ids may be truncated)")
    if clock.rollovers:
        staged.notes.append(f"year advanced {clock.rollovers} time(s) at a December-January turn")
    if events == 0:
        raise InputError(
            "no request-lifecycle lines found (Received/Added/Aborted/Finished request); was the"
            " server started with --enable-log-requests?",
            path,
        )
