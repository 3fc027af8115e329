"""Live pull from a Prometheus-compatible server's HTTP API (Prometheus, Thanos, Mimir,
VictoriaMetrics): `relplan ingest --prometheus-url URL --match REGEX --start T --end T --step S`.

1. GET /api/v1/label/__name__/values lists the metric names; those fully matching --match
   (like PromQL's =~) are pulled.
2. For each name, GET /api/v1/query_range?query={__name__="NAME"}&start&end&step, in chunks of
   at most 11,000 points per series (Prometheus refuses more).
The responses become one source (path = the URL and query; sha256 over the response bodies,
so pulling the same window twice adds nothing). Every GET goes through relplan/httpget.py.

Bounded: the whole pull must finish within `IngestOptions.timeout` seconds (`--timeout`), a
server that trickles its answer included; one response may hold at most MAX_RESPONSE_BYTES
and an error answer is cut to 4 KiB;
a reply without data (`"data": null`) is an input error. Metric names from the server go
into the selector as PromQL string literals, escaped (`promql_string`).
"""

from __future__ import annotations

import hashlib
import json
import time
import urllib.parse
from typing import TYPE_CHECKING, Any

from relplan.errors import InputError, UsageError
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import DuplicateKey, unique_keys
from relplan.ingest.metrics.promjson import Window, stage_response
from relplan.ingest.outcome import say
from relplan.ingest.patterns import compile_pattern
from relplan.ingest.stage import StageWriter

if TYPE_CHECKING:
    import duckdb


MAX_POINTS = 11_000
# One response larger than this is refused: it is parsed whole in memory (about ten times
# its size as Python objects). 11,000 points of one series is about 0.5 MB.
MAX_RESPONSE_BYTES = 256 * 1024 * 1024


def promql_string(value: str) -> str:
    """`value` as a PromQL double-quoted string literal: quotes, backslashes and control
    characters escaped, so a label value can never end the literal or the selector."""
    out = ['"']
    for ch in value:
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def get_json(
    base: str,
    path: str,
    params: dict[str, str],
    deadline: float,
    timeout: float | None = None,
    timeout_hint: str = " (--timeout); nothing stored",
    size_hint: str = "; pull a narrower --match, a shorter window or a longer --step",
) -> tuple[Any, bytes]:
    """GET base+path?params as JSON, all of it before the monotonic `deadline`: the parsed
    answer and its raw bytes. An HTTP error is an InputError with the server's own words. A
    timeout names `timeout`, the time limit that set the deadline (the --timeout the user gave
    a pull; without it, the time that was left), and ends with `timeout_hint`; an answer
    over MAX_RESPONSE_BYTES ends with `size_hint` (the defaults are the live pull's)."""
    from relplan import httpget  # http.client and ssl: only for a live pull, not at start-up

    url = base.rstrip("/") + path + ("?" + urllib.parse.urlencode(params) if params else "")
    reply = httpget.get(
        url,
        seconds=deadline - time.monotonic(),
        max_bytes=MAX_RESPONSE_BYTES,
        timeout_hint=timeout_hint,
        limit=timeout,
        size_hint=size_hint,
    )
    if reply.status != 200:
        # The server's words on one line, without its control characters (a hostile or
        # HTML error page must not break the one error line or drive the terminal).
        text = reply.body.decode("utf-8", errors="replace")
        detail = " ".join("".join(c if c.isprintable() else " " for c in text).split())[:300]
        raise InputError(f"HTTP {reply.status} from the server: {detail}", url)
    try:
        return json.loads(reply.body, object_pairs_hook=unique_keys), reply.body
    except DuplicateKey as exc:
        raise InputError(f"{exc} in the server's answer (a label name twice?)", url) from exc
    except RecursionError:
        raise InputError("the server's answer is JSON nested too deeply", url) from None
    except ValueError as exc:
        raise InputError(
            "the server's answer is not JSON; is this a Prometheus API URL?", url
        ) from exc


def api_data(doc: Any, what: str, where: str) -> Any:
    """The `data` of a successful API answer; a missing or null one is an input error."""
    if not isinstance(doc, dict) or doc.get("status") != "success":
        raise InputError(f"{what} failed: {str(doc)[:300]}", where)
    if doc.get("data") is None:
        raise InputError(f'{what}: the server answered "status": "success" with no data', where)
    return doc["data"]


def chunks(start: float, end: float, step: float) -> list[tuple[float, float]]:
    """[start, end] cut into windows of at most MAX_POINTS points at `step` each."""
    span = step * (MAX_POINTS - 1)
    out: list[tuple[float, float]] = []
    s = start
    while s <= end:
        e = min(end, s + span)
        out.append((s, e))
        s = e + step
    return out


def stage_pull(
    con: duckdb.DuckDBPyConnection,
    source_id: int,
    url: str,
    match: str,
    start: float,
    end: float,
    step: float,
    opts: IngestOptions,
) -> Staged:
    if not url.startswith(("http://", "https://")):
        raise UsageError("--prometheus-url", f"expected an http(s) URL, got {url!r}")
    if end < start:
        raise UsageError("--end", "must not be before --start")
    try:
        pattern = compile_pattern(match)  # RE2: a pattern cannot backtrack without bound
    except ValueError as exc:
        raise UsageError("--match", str(exc)) from exc
    deadline = time.monotonic() + opts.timeout
    names_doc, _ = get_json(url, "/api/v1/label/__name__/values", {}, deadline, opts.timeout)
    listed = api_data(names_doc, "listing metric names", url)
    if not isinstance(listed, list):
        raise InputError("listing metric names: data is not a list of names", url)
    names = sorted(str(n) for n in listed if pattern.fullmatch(str(n)))
    h = hashlib.sha256()
    h.update(f"{match}\n{start}\n{end}\n{step}\n".encode())
    # The source's path: the query_range URL of the pull with its parameters as given.
    given = (("start", start), ("end", end), ("step", step))
    query = "&".join([f"match={match}", *(f"{k}={v:g}" for k, v in given)])
    shown = f"{url.rstrip('/')}/api/v1/query_range?{query}"
    staged = Staged(source_id=source_id, path=shown, kind="metrics", format="prometheus", sha256="")
    w = StageWriter(con, "stage_metrics")
    ordinal = 0
    outside = repeated = 0
    for name in names:
        for s, e in chunks(start, end, step):
            params = {
                "query": f"{{__name__={promql_string(name)}}}",
                "start": f"{s:.3f}",
                "end": f"{e:.3f}",
                "step": f"{step:g}",
            }
            doc, body = get_json(url, "/api/v1/query_range", params, deadline, opts.timeout)
            api_data(doc, f"query_range for {name!r}", url)
            h.update(body)
            # The times as sent (3 decimals); the chunks do not overlap, so a point is kept once.
            window = Window(round(s, 3) - 1e-6, round(e, 3) + 1e-6)
            ordinal = stage_response(w, doc, staged, shown, opts, ordinal, window)
            outside += window.outside
            repeated += window.repeated
    w.flush()
    if outside or repeated:
        staged.notes.append(say("points_dropped", outside=outside, repeated=repeated))
    staged.sha256 = h.hexdigest()
    staged.notes.append(say("names_matched", n=len(names), match=match))
    if not names:
        staged.notes.append(say("nothing_matched"))
    return staged
