"""vLLM server logs (V1 and V0) -> engine lifecycle events, request ids and stats samples.

Lines understood (docs/formats.md has the templates and where vLLM writes them). vLLM's header
`LEVEL MM-DD HH:MM:SS [file.py:NN] ` is found wherever the line's prefix leaves it: journald
(`Apr 22 15:35:31 host bash[6277]: `), docker-compose (`name  | `), kubectl/docker
`--timestamps` RFC 3339, the CRI `<ts> stdout F `, `(APIServer pid=N) `, `(EngineCore_DP0
pid=N) `, a VLLM_LOGGING_PREFIX; ANSI colours are dropped:
    Received request X: [prompt: '..', ]params: ...      -> arrived (prompt_tokens, see below)
    Request X details: prompt: .., prompt_token_ids: ..  (DEBUG) -> prompt_tokens of X's arrival
    Added request X-1a2b3c4d.                            -> the internal id (request_ids)
    Aborted request(s) A,B.  /  Aborted request X.       -> aborted
    Request X aborted.                                   -> aborted (once per execution)
    Request X failed (bad request|input error)...        -> rejected (the queue caps'
                                  "The engine is currently busy ..." / "... prefill token
                                  backlog limit": an admission rejection, HTTP 503)
    Request X failed (engine dead). / failed due to ..   -> aborted (reason counted in a note)
    Request queue full - rejecting request X (...)       (DEBUG, --max-num-queued-reqs) and
    Max queued tokens reached - rejecting request X (..) (DEBUG, --max-num-queued-tokens)
                                                         -> rejected (HTTP 503)
    Generated response X..: ..., finish_reason: F        -> finished (F = abort: aborted;
                                                            F = None, a streaming delta: ignored)
    Finished request X.                                  -> finished (V0)
    [Engine 000: |N Engines Aggregated: ]Avg prompt throughput: ... -> metric samples
    [Engine 000: ]Iteration(N): ... context requests, ...  -> engine_stats rows (vllm_stats.py)
    uvicorn `INFO:  addr - "POST /v1/... HTTP/1.1" 503`   -> counted by status in a note

Ids: V1 logs the external id (`chatcmpl-<X-Request-Id>`) on Received / Request .. aborted /
failed / Generated, and the internal id (external + `-<8 hex>`) on Added and Aborted
request(s). events.execution_id is the internal id when an Added line gives it (a resent
X-Request-Id makes distinct executions); request_ids keeps internal, external and client id.
One terminal event (aborted, rejected, finished) is kept per execution: a client disconnect
logs both abort lines, the second is merged.

prompt_tokens: the number of logged prompt_token_ids, unless `--max-log-len` may have cut the
list: when no prompt text is logged to compare with, or the text has exactly as many
characters as there are ids (both cut at the same length), it stays NULL.

Time: an RFC 3339 prefix when present, else vLLM's `MM-DD HH:MM:SS` (UTC) in the year that
--year, the file or its modification time gives (relplan/ingest/vllm/clock.py, noted); a
December -> January turn moves to the next year. A line whose date cannot be read is refused (kept in rejects with --on-error skip). Every physical line is counted in a
note as stored, merged into another line's row, ignored, or rejected.
"""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from typing import TYPE_CHECKING

from relplan.errors import InputError
from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example, InputOption
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, faults_for, open_text_lines
from relplan.ingest.outcome import say
from relplan.ingest.stage import StageWriter
from relplan.ingest.vllm import stats as vllm_stats
from relplan.ingest.vllm.clock import BadTime, Clock, Stamp, year_of
from relplan.ingest.vllm.ids import RequestIds, strip_engine_suffix

if TYPE_CHECKING:
    import duckdb


_LEVEL = r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)"
# vLLM's own header, wherever the line's prefix (journald `Apr 22 15:35:31 host bash[6277]: `,
# docker-compose `service  | `, an RFC 3339 prefix of kubectl/docker --timestamps, the CRI
# `<ts> stdout F `, `(APIServer pid=N) `, `(EngineCore_DP0 pid=N) `, VLLM_LOGGING_PREFIX)
# leaves it. ANSI colours are removed first.
_HEAD = re.compile(
    rf"(?<![\w-])(?P<level>{_LEVEL})\s+"
    + r"(?P<mon>\d\d)-(?P<day>\d\d)\s+(?P<hms>\d\d:\d\d:\d\d)(?P<frac>[.,]\d+)?\s+"
    r"(?:\[?(?P<loc>[\w./-]+):\d+\]\s*)?(?P<msg>.*)$"
)
_PREFIX_TS = re.compile(
    r"(?<!\d)(\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:[zZ]|[+-]\d\d:?\d\d))(?!\d)"
)
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# A second log record run into a line without a newline (vLLM issues 18115, 2595).
_RUN_IN = re.compile(rf"(?:\([\w-]+ pid=\d+\)\s+)?{_LEVEL} \d\d-\d\d \d\d:\d\d:\d\d ")
# uvicorn's access line, `INFO:     127.0.0.1:5000 - "POST /v1/completions HTTP/1.1" 503 ...`
_ACCESS = re.compile(r'(?<![\w-])INFO:\s+\S+ - "[A-Z]+ \S+ HTTP/[\d.]+" (\d{3})')
# Admission rejections of the queue caps (AsyncLLM.check_admission, DEBUG; HTTP 503).
_QUEUE_FULL = re.compile(r"^Request queue full - rejecting request (\S+?) \(")
_TOKENS_FULL = re.compile(r"^Max queued tokens reached - rejecting request (\S+?) \(")
_UNNAMED = "rejected-unnamed@line"  # + the line number: a rejection logged without an id


def split_line(line: str) -> tuple[re.Match[str], Stamp] | None:
    """vLLM's header in a physical line and the line's time fields; None if it has none."""
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    m = _HEAD.search(line)
    if m is None:
        return None
    ts = _PREFIX_TS.search(line, 0, m.start())
    return m, Stamp(
        ts.group(1) if ts else None,
        m.group("mon"),
        m.group("day"),
        m.group("hms"),
        m.group("frac"),
    )


_RECEIVED = re.compile(r"^Received request ([^\s:]+)")
_DETAILS = re.compile(r"^Request (\S+) details: ")
_ADDED = re.compile(r"^Added request (\S+?)\.?$")
_ABORTED_MANY = re.compile(r"^Aborted request\(s\) (.+?)\.?$")
_ABORTED_ONE = re.compile(r"^Aborted request (\S+?)\.?$")
_REQ_ABORTED = re.compile(r"^Request (\S+) aborted\.?$")
_FAILED = re.compile(r"^Request (\S+) failed\b\s*(.*?)\.?$")
_FINISHED = re.compile(r"^Finished request (\S+?)\.?$")
_GENERATED = re.compile(r"^Generated response ([^\s:]+).*finish_reason: (\S+?)\s*$")
_TOKEN_IDS = re.compile(r"prompt_token_ids: (\[[\d,\s]*\]|None)")
_PROMPT = re.compile(r"prompt: ('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")")
_REJECTING = ("(bad request)", "(input error)")
# The queue caps' errors (vllm/v1/engine/exceptions.py QueueOverflowError and
# MaxQueuedTokensError, HTTP 503) as `Request X failed (bad request): <message>` shows them at
# INFO (the lab's vLLM 0.32 run with --max-num-queued-reqs 8).
_CAP_MESSAGES = (
    ("The engine is currently busy and cannot accept new requests", "max_num_queued_reqs"),
    ("The engine has reached its prefill token backlog limit", "max_num_queued_tokens"),
)


def prompt_tokens(msg: str) -> int | None:
    """The prompt length a Received/details line gives, None when it cannot be trusted."""
    ids = _TOKEN_IDS.search(msg)
    if ids is None or ids.group(1) == "None":
        return None
    count = len(re.findall(r"\d+", ids.group(1)))
    pm = _PROMPT.search(msg)
    if pm is None:
        return None
    try:
        text = ast.literal_eval(pm.group(1))
    except (ValueError, SyntaxError):
        return None
    return None if not isinstance(text, str) or len(text) == count else count


YEAR = InputOption[int | None](
    field="year",
    type=int,
    default=None,
    help="Year of vLLM log timestamps that carry none (default: from the file, else its"
    " modification time, with a note).",
)


class _Reader:
    """State of one log file: pending arrivals, id maps, tallies."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
    ) -> None:
        self.path = str(info.path)
        self.staged = staged
        self.opts = opts
        self.engine = StageWriter(con, "stage_engine")
        self.metrics = StageWriter(con, "stage_metrics")
        year = year_of(YEAR.of(opts), info.head.decode("utf-8", errors="replace"), info.path)
        self.clock = Clock(year.year, year.how, year.seen)
        self.ids = RequestIds(staged.source_id)
        # external id -> (line, time, raw, prompt_tokens) of a Received line awaiting Added
        self.pending: dict[str, tuple[int, float, str, int | None]] = {}
        self.internal_of: dict[str, str] = {}  # external id -> latest internal id
        self.terminal: set[str] = set()
        self.events = 0
        self.tokens = Counter[str]()
        self.failed = Counter[str]()
        self.derived = 0
        self.stats = vllm_stats.StatsTally()
        self.iterations = 0
        self.access = Counter[str]()  # uvicorn access lines by HTTP status
        self.admissions = Counter[str]()
        self.unnamed_rejections = 0  # `rejecting request None`
        self.admitted_ext: set[str] = set()  # counted once: a DEBUG line and the failed line
        self.lines = Counter[str]()  # category -> physical lines

    # -- rows -------------------------------------------------------------------------------
    def emit(
        self, n: int, t: float, exec_id: str, event: str, raw: str, tokens: int | None = None
    ) -> None:
        self.events += 1
        self.engine.add(
            source_id=self.staged.source_id,
            ln=n,
            raw=raw if self.opts.skip else None,
            perr=None,
            origin="vllm_log",
            type="event",
            t=t,
            execution_id=exec_id,
            event=event,
            prompt_tokens=tokens,
        )

    def _sample(
        self, n: int, line: str, t: float, name: str, labels: dict[str, str], value: float
    ) -> None:
        """One metric sample read from line n (the line kept with it in skip mode)."""
        self.metrics.add(
            source_id=self.staged.source_id,
            ln=n,
            raw=line if self.opts.skip else None,
            perr=None,
            t=t,
            name=name,
            labels=labels,
            value=value,
        )

    def reject(self, n: int, raw: str, reason: str) -> str:
        self.engine.add(
            source_id=self.staged.source_id, ln=n, raw=raw, perr=reason, origin="vllm_log"
        )
        return "rejected"

    def arrive(self, ext: str, exec_id: str, id_line: int) -> None:
        pn, pt, praw, ptok = self.pending.pop(ext)
        self.tokens["known" if ptok is not None else "unknown"] += 1
        self.emit(pn, pt, exec_id, "arrived", praw, ptok)
        self.ids.note(exec_id, ext, id_line)

    # -- one record -------------------------------------------------------------------------
    def line(self, n: int, line: str) -> str:
        """Handle one physical line; returns its category for the line tally."""
        got = split_line(line)
        if got is None:
            access = _ACCESS.search(line)
            if access is not None:
                self.access[access.group(1)] += 1
                return "ignored: not a vLLM log line"
            return "ignored: not a vLLM log line" if line.strip() else "ignored: blank"
        m, stamp = got
        msg = m.group("msg").strip()
        stats = vllm_stats.is_stats(msg)
        if stats or vllm_stats.is_iteration(msg):
            run_in = _RUN_IN.search(msg, 1)
            if run_in is not None:  # the rest is a record of its own on the same line
                self.line(n, msg[run_in.start() :])
                msg = msg[: run_in.start()].rstrip()
            if stats:
                return self.stats_line(n, line, stamp, msg)
            return self.iteration_line(n, line, stamp, msg)
        for rx, handler in (
            (_RECEIVED, self.received),
            (_DETAILS, self.details),
            (_ADDED, self.added),
            (_ABORTED_MANY, self.aborted_many),
            (_REQ_ABORTED, self.req_aborted),
            (_ABORTED_ONE, self.aborted_one),
            (_FAILED, self.failed_line),
            (_FINISHED, self.finished),
            (_GENERATED, self.generated),
            (_QUEUE_FULL, self.admission),
            (_TOKENS_FULL, self.admission),
        ):
            mm = rx.match(msg)
            if mm:
                try:
                    t = self.clock.time(stamp)
                except BadTime as exc:
                    return self.reject(n, line, str(exc))
                v1 = (m.group("loc") or "").endswith("async_llm.py")
                return handler(mm, n, t, line, msg, v1)
        return "ignored: other vLLM line"

    def stats_line(self, n: int, line: str, stamp: Stamp, msg: str) -> str:
        try:
            t = self.clock.time(stamp)
        except BadTime as exc:
            self.metrics.add(source_id=self.staged.source_id, ln=n, raw=line, perr=str(exc))
            return "rejected"
        parsed = vllm_stats.parse_stats(msg)
        for name, value in parsed.samples:
            self._sample(n, line, t, name, parsed.labels, value)
        self.stats.add(parsed)
        return "stored: stats" if parsed.samples else "ignored: stats line without a known field"

    def iteration_line(self, n: int, line: str, stamp: Stamp, msg: str) -> str:
        try:
            t = self.clock.time(stamp)
        except BadTime as exc:
            return self.reject(n, line, str(exc))
        it = vllm_stats.parse_iteration(msg)
        if it is None:
            return "ignored: other vLLM line"
        if it.dummy:
            self.stats.dummy_iterations += 1
            return "ignored: dummy iteration"
        engine = it.labels.get("engine")
        self.engine.add(
            source_id=self.staged.source_id,
            ln=n,
            raw=line if self.opts.skip else None,
            perr=None,
            origin="vllm_log",
            type="stats",
            step=it.step,
            t_issue=t,
            num_running=it.running,
            num_batched_tokens=it.batched_tokens,
            kv_usage=it.kv_usage,
            replica=None if engine in (None, "0") else f"engine-{engine}",
        )
        self.iterations += 1
        self.stats.iterations += 1
        if it.elapsed_s is not None:
            name = "vllm_log:iteration_elapsed_seconds"
            self._sample(n, line, t, name, it.labels, it.elapsed_s)
            self.stats.names.add(name)
            self.stats.samples += 1
        for what, name in vllm_stats.ITERATION_COUNTS.items():
            if what in it.counts:
                self._sample(n, line, t, name, it.labels, float(it.counts[what]))
                self.stats.names.add(name)
                self.stats.samples += 1
        return "stored: iteration"

    def received(self, mm: re.Match[str], n: int, t: float, line: str, msg: str, v1: bool) -> str:
        ext = mm.group(1)
        if ext in self.pending:  # a resend before its Added: the earlier one arrived alone
            self.arrive(ext, ext, self.pending[ext][0])
        self.pending[ext] = (n, t, line, prompt_tokens(msg))
        return "stored: request"

    def details(self, mm: re.Match[str], n: int, t: float, line: str, msg: str, v1: bool) -> str:
        ext = mm.group(1)
        tokens = prompt_tokens(msg)
        if ext in self.pending and tokens is not None:
            pn, pt, praw, _ = self.pending[ext]
            self.pending[ext] = (pn, pt, praw, tokens)
            return "merged: prompt details"
        return "ignored: prompt details without a usable token count"

    def added(self, mm: re.Match[str], n: int, t: float, line: str, msg: str, v1: bool) -> str:
        arg = mm.group(1)
        stripped = strip_engine_suffix(arg)
        ext = arg if arg in self.pending else stripped if stripped in self.pending else None
        if ext is not None:
            self.internal_of[ext] = arg
            self.arrive(ext, arg, n)
            return "stored: request"
        ext = self.external(arg, v1)
        self.tokens["unknown"] += 1
        self.emit(n, t, arg, "arrived", line)
        self.ids.note(arg, ext, n)
        return "stored: request"

    def external(self, internal: str, v1: bool) -> str:
        """The external id of an internal id no Received line paired with."""
        stripped = strip_engine_suffix(internal) if v1 else None
        if stripped is None:
            return internal
        self.derived += 1
        self.internal_of[stripped] = internal
        return stripped

    def end(
        self, ids: list[str], n: int, t: float, line: str, event: str, internal: bool, v1: bool
    ) -> str:
        stored = False
        for rid in ids:
            exec_id = self.internal_of.get(rid, rid)
            if exec_id not in self.ids.seen:
                ext = self.external(rid, v1) if internal else rid
                if ext in self.terminal:  # "Request X aborted." came first
                    continue
                self.ids.note(exec_id, ext, n)
            if exec_id in self.terminal:
                continue
            self.terminal.add(exec_id)
            self.emit(n, t, exec_id, event, line)
            stored = True
        return "stored: request" if stored else "merged: second terminal line of an execution"

    def aborted_many(
        self, mm: re.Match[str], n: int, t: float, line: str, msg: str, v1: bool
    ) -> str:
        ids = [s.strip() for s in mm.group(1).split(",") if s.strip()]
        return self.end(ids, n, t, line, "aborted", True, v1)

    def aborted_one(
        self, mm: re.Match[str], n: int, t: float, line: str, msg: str, v1: bool
    ) -> str:
        return self.end([mm.group(1)], n, t, line, "aborted", True, v1)

    def req_aborted(
        self, mm: re.Match[str], n: int, t: float, line: str, msg: str, v1: bool
    ) -> str:
        return self.end([mm.group(1)], n, t, line, "aborted", False, v1)

    def failed_line(
        self, mm: re.Match[str], n: int, t: float, line: str, msg: str, v1: bool
    ) -> str:
        why = mm.group(2)
        rejecting = why.startswith(_REJECTING)
        cap = next((r for text, r in _CAP_MESSAGES if text in why), None)
        if cap is None:
            self.failed[why.split(":")[0] or "(no reason)"] += 1
        elif mm.group(1) not in self.admitted_ext:
            self.admitted_ext.add(mm.group(1))
            self.admissions[cap] += 1
        return self.end(
            [mm.group(1)], n, t, line, "rejected" if rejecting else "aborted", False, v1
        )

    def admission(self, mm: re.Match[str], n: int, t: float, line: str, msg: str, v1: bool) -> str:
        """A queue cap refused the request (HTTP 503): its arrival, then rejected."""
        internal = mm.group(1)
        reason = (
            "max_num_queued_reqs" if msg.startswith("Request queue") else "max_num_queued_tokens"
        )
        if internal == "None":
            # vLLM 0.32 checks the token cap before the request has an id and logs `rejecting
            # request None` (tests/data/lab/issue23-forms): one rejection a line, under an id
            # made from the line number that joins nothing.
            self.admissions[reason] += 1
            self.unnamed_rejections += 1
            exec_id = f"{_UNNAMED}{n}"
            self.tokens["unknown"] += 1
            self.emit(n, t, exec_id, "arrived", line)
            self.emit(n, t, exec_id, "rejected", line)
            return "stored: request"
        ext = strip_engine_suffix(internal) or internal
        if ext not in self.admitted_ext:
            self.admitted_ext.add(ext)
            self.admissions[reason] += 1
        if ext in self.pending:
            self.internal_of[ext] = internal
            self.arrive(ext, internal, n)
        elif internal not in self.ids.seen:
            self.tokens["unknown"] += 1
            self.emit(n, t, internal, "arrived", line)
            self.ids.note(internal, ext, n)
        return self.end([internal], n, t, line, "rejected", False, v1)

    def finished(self, mm: re.Match[str], n: int, t: float, line: str, msg: str, v1: bool) -> str:
        return self.end([mm.group(1)], n, t, line, "finished", False, v1)

    def generated(self, mm: re.Match[str], n: int, t: float, line: str, msg: str, v1: bool) -> str:
        reason = mm.group(2).rstrip(".,")
        if reason == "None":
            return "ignored: streaming delta (finish_reason None)"
        event = "aborted" if reason == "abort" else "finished"
        return self.end([mm.group(1)], n, t, line, event, False, v1)

    # -- end of file ------------------------------------------------------------------------
    def close(self) -> None:
        for ext in list(self.pending):
            self.arrive(ext, ext, self.pending[ext][0])
        self.engine.flush()
        self.metrics.flush()
        self.staged.finish.append(self.ids.store())
        self.staged.finish.append(vllm_stats.meta_store(self.staged.source_id, self.stats.names))
        self.staged.extra_rows += len(self.ids.rows)
        self.staged.notes.extend(self.notes())

    def notes(self) -> list[str]:
        out = [say("log_lines", lines=dict(self.lines), events=self.events, ids=len(self.ids.rows))]
        out += self.stats.notes()
        if self.tokens:
            out.append(
                say("prompt_tokens_logged", known=self.tokens["known"], of=self.tokens.total())
            )
        if self.derived:
            out.append(say("ids_derived", n=self.derived))
        if self.failed:
            out.append(say("failed_requests", failed=self.failed))
        out += self.clock.notes()
        if self.admissions:
            out.append(
                say(
                    "admission_rejections",
                    admissions=self.admissions,
                    unnamed=self.unnamed_rejections,
                    stored_as=_UNNAMED,
                )
            )
        if self.access:
            out.append(
                say("access_lines", access=self.access, rejected=sum(self.admissions.values()))
            )
        return out


# vLLM's `--logging-config.formatter json` (0.32: pythonjsonlogger, `%(asctime)s %(levelname)s
# %(name)s %(processName)s %(process)d %(message)s`, asctime `YYYY-MM-DD HH:MM:SS,mmm` in the
# server's local time): recorded on the lab, tests/data/lab/issue23-forms.
_JSON_KEYS = ("asctime", "levelname", "message")
_ASCTIME = re.compile(r"^\d{4}-(\d\d)-(\d\d) (\d\d:\d\d:\d\d[,.]\d+)$")


def _json_record(line: str) -> dict[str, object] | None:
    if not line.startswith("{"):
        return None
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    if not isinstance(rec, dict) or not all(isinstance(rec.get(k), str) for k in _JSON_KEYS):
        return None
    return rec if _ASCTIME.match(str(rec["asctime"])) else None


def _as_text(line: str) -> str:
    """A JSON record as the text formatter's line, its dated asctime in front as a prefix (the
    year comes from it, docs/formats.md, Line prefix and time); any other line unchanged."""
    rec = _json_record(line)
    if rec is None:
        return line
    when, msg = str(rec["asctime"]), str(rec["message"])
    if rec.get("name") == "uvicorn.access":
        return f"{when} INFO:     {msg}"
    m = _ASCTIME.match(when)
    assert m is not None
    proc = rec.get("vllm_process_name") or rec.get("processName")
    return (
        f"{when} ({proc} pid={rec.get('process')}) {rec['levelname']}"
        f" {m.group(1)}-{m.group(2)} {m.group(3)} {msg}"
    )


def stage_vllm_log(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    reader = _Reader(con, info, staged, opts)
    faults = faults_for(opts.skip)
    for n, line in open_text_lines(info.path, faults):
        reader.lines[reader.line(n, _as_text(line))] += 1
    for n, text, why in faults.drain() if faults is not None else []:
        reader.lines[reader.reject(n, text, why)] += 1
    reader.close()
    if (
        reader.events == 0
        and reader.stats.samples == 0
        and reader.iterations == 0
        and not reader.lines["rejected"]
    ):
        raise InputError(
            "no request-lifecycle lines (Received/Added/Aborted/Finished request) and no stats"
            " lines (Avg prompt throughput: ...) found; was the server started with"
            " --enable-log-requests?",
            reader.path,
        )


_VLLM_LINE = re.compile(r"(DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d")


def _recognise(head: sniff.Head, kind: str | None) -> float:
    if head.jsonish:
        rec = _json_record(head.first)
        vllm = rec is not None and (
            "vllm_process_name" in rec or str(rec.get("name", "")).startswith("vllm.")
        )
        return sniff.SIGNATURE - 0.05 if vllm else 0.0
    return sniff.SIGNATURE - 0.05 if _VLLM_LINE.search(head.text) else 0.0


ADAPTERS = (
    Adapter(
        name="vllm_log",
        prose=True,
        kinds=("engine",),
        family="vllm",
        summary="vLLM's server log (V0 and V1): requests, aborts, the stats line",
        tables=("events", "request_ids", "engine_stats", "metric_samples"),
        recognise=_recognise,
        read=stage_vllm_log,
        options=(YEAR,),
        whole_seconds=True,
        examples=(
            Example(
                "tests/data/ingest/adapters/vllm_v1.log",
                "relplan's adapter fixtures (tests/data/ingest/adapters)",
                {"year": 2025},
                # A request line whose date cannot be (February 30th, 25:61).
                broken="(APIServer pid=1) INFO 02-30 25:61:00 [async_llm.py:382] Added request"
                " chatcmpl-a269fdcb7c6ce890-a8a65d16.",
            ),
            Example(
                "tests/data/published/vllm_v0_server_log_issue2484.txt",
                "tests/data/published/SOURCES.md",
            ),
        ),
        doc="vllm-server-log-vllm_log",
    ),
)
