"""Telling what a file holds from its content (columns, `# TYPE`/`# EOF`, manifest keys).

Kinds: proxy, engine, metrics, manifest, cluster. Formats (the `sources.format` values):
jsonl, csv, parquet (canonical proxy/engine), openmetrics, scrape, exposition (one
timestamp-less /metrics scrape), query_range (metrics), vllm_log (engine events, request ids
and stats samples), otlp_json / jaeger_json (vLLM's OpenTelemetry spans: engine events and
request ids), envoy (proxy attempts), run_json (manifest), kube_events (cluster: Kubernetes
events as `kubectl get events -o json` prints them).

`--kind` narrows the choice (e.g. `--kind engine` on a log file means a vLLM log) and
`--format` forces one. Detection reads only the first 64 KiB of the content. A file whose
content is none of these raises `UnknownContent` (a directory walk skips it and lists it).
"""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import dataclass

from relplan.errors import InputError, UsageError
from relplan.ingest.files import PARQUET_MAGIC, FileInfo, load_document
from relplan.ingest.kube_events import keys_look_like_events, looks_like_events
from relplan.ingest.metrics_text import SampleError, parse_sample
from relplan.ingest.otel_json import trace_format

KINDS = ("proxy", "engine", "metrics", "manifest", "cluster")
FORMATS = {
    "jsonl": ("proxy", "engine"),
    "csv": ("proxy", "engine"),
    "parquet": ("proxy", "engine"),
    "openmetrics": ("metrics",),
    "scrape": ("metrics",),
    "exposition": ("metrics",),
    "query_range": ("metrics",),
    "vllm_log": ("engine",),
    "otlp_json": ("engine",),
    "jaeger_json": ("engine",),
    "envoy": ("proxy",),
    "run_json": ("manifest",),
    # Gateway logs and load-test results (gateway_detect.py, docs/formats.md).
    "envoy_text": ("proxy",),
    "nginx": ("proxy",),
    "nginx_json": ("proxy",),
    "kong": ("proxy",),
    "litellm": ("proxy",),
    "mapped": ("proxy",),
    "guidellm": ("proxy",),
    "vllm_bench": ("proxy",),
    # Kubernetes events (kube_events.py, docs/formats.md).
    "kube_events": ("cluster",),
}

MANIFEST_KEYS = (
    "capacity_calls_per_s",
    "deadline_s",
    "delivery_window_s",
    "phases",
    "t0",
    "overload_phase",
)
ENVOY_KEYS = (
    "start_time",
    "duration",
    "response_code",
    "response_flags",
    "upstream_request_attempt_count",
)

_VLLM_LINE = re.compile(r"(DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d")
# A sample line: a metric name, optional labels, then a number (so a line of prose such as
# "the pager went off" is not taken for one).
_SAMPLE = re.compile(
    r"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})?\s+[-+]?(?:\d|\.\d|NaN|Nan|nan|Inf|inf)\S*(?:\s+\S+)?\s*$"
)


class UnknownContent(InputError):
    """The content is none of relplan's inputs (as opposed to a known input that is broken).
    `what` says what it looks like, for the ingest report."""

    def __init__(self, message: str, path: str, line: int | None = None, what: str = "") -> None:
        super().__init__(message, path, line)
        self.what = what or message


@dataclass(frozen=True)
class Detected:
    kind: str
    format: str


def envoy_key(key: str) -> str:
    """Envoy field names as users spell them: START_TIME, %START_TIME%, start_time, x-request-id."""
    return key.strip().strip("%").lower().replace("-", "_")


def _kind_from_keys(keys: set[str]) -> str | None:
    if "call_id" in keys or {"outcome", "t_sent"} <= keys:
        return "proxy"
    if keys & {"type", "event", "step", "t_issue", "prompt_computed"} and (
        "execution_id" in keys or "step" in keys or "type" in keys
    ):
        return "engine"
    return None


_PARQUET_COLUMNS: dict[tuple[str, int], list[str]] = {}


def parquet_columns(info: FileInfo) -> list[str]:
    key = (str(info.path), info.size)
    if key not in _PARQUET_COLUMNS:
        _PARQUET_COLUMNS.clear()
        _PARQUET_COLUMNS[key] = _read_parquet_columns(info)
    return _PARQUET_COLUMNS[key]


def _read_parquet_columns(info: FileInfo) -> list[str]:
    """Top-level column names from the Parquet footer (pyarrow reads only the metadata)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return [str(n) for n in pq.read_schema(info.path).names]
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise InputError(
            f"not a readable Parquet file ({_first_line(exc)})", str(info.path)
        ) from exc


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def detect(info: FileInfo, kind: str | None = None, fmt: str | None = None) -> Detected:
    path = str(info.path)
    if kind is not None and kind not in KINDS:
        raise UsageError("--kind", f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    if fmt is not None:
        if fmt not in FORMATS:
            raise UsageError(
                "--format", f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}"
            )
        kinds = FORMATS[fmt]
        if kind is not None and kind not in kinds:
            raise UsageError("--format", f"format {fmt} holds {'/'.join(kinds)} data, not {kind}")
        if kind is None and len(kinds) > 1:
            kind = _detect_kind_of_canonical(info, fmt)
        return Detected(kind or kinds[0], fmt)
    found = _detect(info, kind)
    if kind is not None and found.kind != kind:
        raise InputError(
            f"looks like {found.kind} data ({found.format}), not {kind}; drop --kind or pass --format",
            path,
        )
    return found


def _detect_kind_of_canonical(info: FileInfo, fmt: str) -> str:
    keys: set[str] = set()
    if fmt == "parquet":
        keys = set(parquet_columns(info))
    elif fmt == "csv":
        keys = {c.strip().strip('"') for c in _first_text_line(info).split(",")}
    else:
        keys = _head_keys(info)
    k = _kind_from_keys(keys)
    if k is None:
        raise InputError(
            "cannot tell proxy from engine records by the columns; pass --kind proxy or --kind engine",
            str(info.path),
        )
    return k


def _first_text_line(info: FileInfo) -> str:
    text = info.head.decode("utf-8", errors="replace")
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _head_keys(info: FileInfo, max_lines: int = 200) -> set[str]:
    """Keys of the JSON objects among the first lines (complete ones only), when the head
    looks like JSON Lines: the first line is an object, or at least half the lines are (so a
    malformed first record still reads as JSON Lines, while a pretty-printed document, whose
    lines are mostly fragments, does not). Empty otherwise."""
    keys: set[str] = set()
    lines = [ln for ln in info.head.decode("utf-8", errors="replace").splitlines() if ln.strip()]
    lines = lines[:max_lines]
    objects = 0
    first_is_object = False
    for i, line in enumerate(lines):
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply
            continue
        if isinstance(obj, dict):
            objects += 1
            first_is_object = first_is_object or i == 0
            keys.update(obj)
    return keys if first_is_object or objects * 2 >= len(lines) else set()


def _detect(info: FileInfo, kind: str | None) -> Detected:
    from relplan.ingest import gateway_detect  # imports the readers, which import this module

    path = str(info.path)
    name = info.path.name.lower().removesuffix(".gz")
    if info.head[:4] == PARQUET_MAGIC:
        cols = set(parquet_columns(info))
        k = _kind_from_keys(cols) or kind
        if k in ("proxy", "engine"):
            return Detected(k, "parquet")
        raise UnknownContent(
            f"cannot tell what this Parquet file holds (columns: {', '.join(sorted(cols))});"
            " expected the proxy columns (call_id, attempt, t_sent, t_end, outcome, ...) or the"
            " engine columns (type, t, execution_id, step, ...)",
            path,
            what=f"a Parquet file with columns {', '.join(sorted(cols)[:8])}",
        )
    if not info.head.strip():
        raise UnknownContent("the file is empty; expected records", path, what="an empty file")
    first = _first_text_line(info)
    traces = trace_format(info.head[:4096].decode("utf-8", errors="replace"))
    if traces is not None:
        return Detected("engine", traces)  # OTLP JSON or Jaeger JSON: vLLM's spans
    if first.startswith("[") and (gw := gateway_detect.from_text(first)) is not None:
        return Detected("proxy", gw)  # an Envoy text log: [START_TIME] "METHOD ...
    if first.startswith("{") or first.startswith("["):
        keys = _head_keys(info)
        if not keys:
            # No line holds a JSON object: a whole-file JSON document (run.json, a
            # query_range response) or a malformed JSON Lines file.
            return _detect_document(info, kind)
        if "status" in keys and keys & {"data", "errorType"}:
            return Detected("metrics", "query_range")
        if keys_look_like_events(keys):
            return Detected("cluster", "kube_events")
        if "name" in keys and keys & set(MANIFEST_KEYS) and not keys & {"call_id", "type"}:
            return Detected("manifest", "run_json")
        gw = gateway_detect.from_keys(keys)
        if gw is not None:
            return Detected("proxy", gw)
        k = _kind_from_keys(keys)
        if k is not None:
            return Detected(k, "jsonl")
        if {envoy_key(key) for key in keys} & set(ENVOY_KEYS) or kind == "proxy":
            return Detected("proxy", "envoy")
        if kind in ("proxy", "engine"):
            return Detected(kind, "jsonl")
        raise UnknownContent(
            f"cannot tell what these JSON records hold (keys: {', '.join(sorted(keys)[:12])});"
            " expected proxy attempts (call_id, ...), engine records (type, execution_id, ...),"
            " Envoy access-log fields (start_time, duration, response_code, ...), or pass --kind",
            path,
            1,
            what=f"JSON records with keys {', '.join(sorted(keys)[:8])}",
        )
    if first.startswith("# SCRAPE"):
        return Detected("metrics", "scrape")
    text = info.head.decode("utf-8", errors="replace")
    if _VLLM_LINE.search(text):
        return Detected("engine", "vllm_log")
    gw = gateway_detect.from_text(first)
    if gw is not None:
        return Detected("proxy", gw)
    if first.startswith(("# TYPE", "# HELP", "# UNIT", "# EOF")) or _SAMPLE.match(first):
        return Detected("metrics", "openmetrics" if _samples_have_times(text) else "exposition")
    if name.endswith(".csv") or "," in first:
        cols = {c.strip().strip('"') for c in first.split(",")}
        if gateway_detect.from_keys(cols) == "litellm":
            return Detected("proxy", "litellm")
        k = _kind_from_keys(cols) or (kind if kind in ("proxy", "engine") else None)
        if k is not None:
            return Detected(k, "csv")
        raise UnknownContent(
            f"cannot tell what this CSV file holds (header: {first[:120]}); expected the proxy or"
            " engine columns of docs/formats.md",
            path,
            1,
            what=f"a CSV file with header {first[:80]}"
            if name.endswith(".csv")
            else "text in none of relplan's input formats",
        )
    raise UnknownContent(
        "cannot tell what this file holds; expected JSON Lines, CSV, Parquet, OpenMetrics text,"
        " a scrape log (# SCRAPE lines), a vLLM log, OTLP or Jaeger JSON traces, an Envoy JSON"
        " access log or run.json (or pass --kind/--format)",
        path,
        1,
        what="text in none of relplan's input formats",
    )


def _samples_have_times(text: str) -> bool:
    """Whether the first sample line in the head carries a timestamp (an OpenMetrics dump):
    a plain `/metrics` scrape has none."""
    for line in text.splitlines():
        s = line.strip()
        if s and not s.startswith("#"):
            try:
                return parse_sample(s)[3] is not None
            except SampleError:
                return True  # malformed: the OpenMetrics reader names the line
    return True


def _detect_document(info: FileInfo, kind: str | None) -> Detected:
    path = str(info.path)
    if info.size > 256 * 1024 * 1024:
        raise InputError("the first line is not a JSON object; expected JSON Lines", path, 1)
    try:
        raw = info.path.read_bytes()
        doc = json.loads((gzip.decompress(raw) if info.gz else raw).decode("utf-8"))
    except RecursionError as exc:
        head = info.head
        line = head[: len(head) - len(head.lstrip())].count(b"\n") + 1
        raise InputError(
            "JSON nested too deeply to read; expected JSON Lines or a JSON document", path, line
        ) from exc
    except (ValueError, UnicodeDecodeError, OSError, EOFError) as exc:
        text = info.head.decode("utf-8", errors="replace")
        if '"reason"' in text and ('"involvedObject"' in text or '"regarding"' in text):
            # Event objects one after another (`kubectl get events --watch -o json`).
            return Detected("cluster", "kube_events")
        if kind in ("proxy", "engine"):
            return Detected(kind, "jsonl")
        if isinstance(exc, UnicodeDecodeError):
            # A JSON document (query_range, run.json) is one record: name where it breaks.
            load_document(exc.object, path, "JSON Lines or a JSON document")
        at = exc.lineno if isinstance(exc, json.JSONDecodeError) else None
        raise InputError(
            f"not valid JSON ({exc}); expected JSON Lines or a JSON document", path, at
        ) from exc
    from relplan.ingest import gateway_detect

    gw = gateway_detect.from_document(doc)
    if gw is not None:
        return Detected("proxy", gw)
    if looks_like_events(doc):
        return Detected("cluster", "kube_events")
    if isinstance(doc, dict) and "status" in doc and ("data" in doc or "errorType" in doc):
        return Detected("metrics", "query_range")
    if isinstance(doc, dict) and "name" in doc:
        return Detected("manifest", "run_json")
    raise UnknownContent(
        "a JSON document that is neither a run manifest (name, phases, ...) nor a Prometheus"
        " query_range response (status, data)",
        path,
        what="a JSON document that is none of relplan's inputs",
    )
