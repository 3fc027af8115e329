"""Live pull from a Prometheus-compatible server's HTTP API (Prometheus, Thanos, Mimir,
VictoriaMetrics): `relplan ingest --prometheus-url URL --match REGEX --start T --end T --step S`.

1. GET /api/v1/label/__name__/values lists the metric names; those fully matching --match
   (like PromQL's =~) are pulled.
2. For each name, GET /api/v1/query_range?query={__name__="NAME"}&start&end&step, in chunks of
   at most 11,000 points per series (Prometheus refuses more).
The responses become one source (path = the URL and query; sha256 over the response bodies,
so pulling the same window twice adds nothing). Uses the standard library's urllib.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import duckdb

from relplan.errors import InputError, UsageError
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.promjson import stage_response
from relplan.ingest.stage import StageWriter

MAX_POINTS = 11_000
TIMEOUT_S = 30.0


def _get(base: str, path: str, params: dict[str, str]) -> tuple[Any, bytes]:
    url = base.rstrip("/") + path + ("?" + urllib.parse.urlencode(params) if params else "")
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as resp:
            body: bytes = resp.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", errors="replace")[:300]
        raise InputError(f"HTTP {exc.code} from the server: {detail}", url) from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise InputError(f"cannot reach the server: {reason}", url) from exc
    try:
        return json.loads(body), body
    except ValueError as exc:
        raise InputError(
            "the server's answer is not JSON; is this a Prometheus API URL?", url
        ) from exc


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
        pattern = re.compile(match)
    except re.error as exc:
        raise UsageError("--match", f"not a valid regular expression: {exc}") from exc
    names_doc, _ = _get(url, "/api/v1/label/__name__/values", {})
    if not isinstance(names_doc, dict) or names_doc.get("status") != "success":
        raise InputError(f"listing metric names failed: {names_doc}", url)
    names = sorted(str(n) for n in names_doc.get("data", []) if pattern.fullmatch(str(n)))
    h = hashlib.sha256()
    h.update(f"{match}\n{start}\n{end}\n{step}\n".encode())
    shown = f"{url.rstrip('/')}/api/v1/query_range?match={match}&start={start:g}&end={end:g}&step={step:g}"
    staged = Staged(source_id=source_id, path=shown, kind="metrics", format="prometheus", sha256="")
    w = StageWriter(con, "stage_metrics")
    ordinal = 0
    for name in names:
        for s, e in chunks(start, end, step):
            params = {
                "query": f'{{__name__="{name}"}}',
                "start": f"{s:.3f}",
                "end": f"{e:.3f}",
                "step": f"{step:g}",
            }
            doc, body = _get(url, "/api/v1/query_range", params)
            h.update(body)
            ordinal = stage_response(w, doc, staged, shown, opts, ordinal)
    w.flush()
    staged.sha256 = h.hexdigest()
    staged.notes.append(f"{len(names)} metric names matched {match!r}")
    if not names:
        staged.notes.append("no metric name matched; nothing pulled")
    return staged
