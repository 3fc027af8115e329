"""Kubernetes events (`kubectl get events -o json`) -> kube_events (docs/formats.md, Kubernetes events).

Accepted: a `List` (or `EventList`) of events as `kubectl get events -o json` prints it, one
Event object, several objects one after another (`--watch -o json`) or JSON Lines. Both API
shapes are read: core/v1 `Event` (`involvedObject`, `message`, `source.host`,
`firstTimestamp`/`lastTimestamp`/`count`) and events.k8s.io/v1 `Event` (`regarding`, `note`,
`eventTime`, `series`, `deprecatedSource`, `deprecated*Timestamp`).

What is kept per event object: its first and last time, its `count` (the API server merges
repeats into one object, so one row may stand for many probe failures), reason, type, message,
the object it is about (kind, namespace, name, and the container from `fieldPath`
`spec.containers{name}`), the node (`source.host`, else `reportingInstance`, which for kubelet
events is the node name) and the reporting component. `source_row` is the line where the
event object starts. An event without a reason, an object or any time is refused with its line.
"""

from __future__ import annotations

import bisect
import datetime as dt
import gzip
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from relplan import sql
from relplan.errors import InputError
from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, long_number
from relplan.ingest.outcome import say
from relplan.values import implausible_time

if TYPE_CHECKING:
    import duckdb


_FIELD_PATH = re.compile(r"spec\.(?:init|ephemeral)?[cC]ontainers\{([^}]*)\}")
_ITEMS = re.compile(r'"items"\s*:\s*\[')
_LIST_KINDS = ("List", "EventList")
_MAX_COUNT = 2**31 - 1


@dataclass(frozen=True)
class KubeEvent:
    t_first: float
    t_last: float
    count: int
    reason: str
    type: str | None
    message: str | None
    object_kind: str | None
    namespace: str | None
    object_name: str | None
    container: str | None
    node: str | None
    component: str | None
    line: int


def looks_like_events(doc: Any) -> bool:
    """Whether a parsed JSON document is a list of Kubernetes events or one event."""
    if not isinstance(doc, dict):
        return False
    if doc.get("kind") in _LIST_KINDS and isinstance(doc.get("items"), list):
        first = doc["items"][0] if doc["items"] else None
        return doc.get("kind") == "EventList" or _is_event(first)
    return _is_event(doc)


def _is_event(obj: Any) -> bool:
    return isinstance(obj, dict) and (
        obj.get("kind") == "Event"
        or ("reason" in obj and ("involvedObject" in obj or "regarding" in obj))
    )


def keys_look_like_events(keys: set[str]) -> bool:
    """JSON Lines whose records are events (the keys of the first records)."""
    return "reason" in keys and bool(keys & {"involvedObject", "regarding"})


def stage_kube_events(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    del opts
    path = str(info.path)
    raw = info.path.read_bytes()
    if info.gz:
        raw = gzip.decompress(raw)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text ({exc}); expected Kubernetes events as JSON", path
        ) from exc
    events = list(parse_events(text, path))
    staged.extra_rows = len(events)
    if events:
        staged.notes.append(
            say("kube_events", objects=len(events), occurrences=sum(e.count for e in events))
        )
    staged.finish.append(lambda c: _store(c, staged.source_id, events))


class _LineIndex:
    """Line numbers of offsets into one text in O(log n) each (the file is scanned for
    newlines once; counting them from the start per event made 40,000 events quadratic)."""

    def __init__(self, text: str) -> None:
        self.newlines = [m.start() for m in re.finditer("\n", text)]

    def line(self, pos: int) -> int:
        return bisect.bisect_left(self.newlines, pos) + 1


def parse_events(text: str, path: str) -> Iterator[KubeEvent]:
    lines = _LineIndex(text)
    _line = lines.line
    for pos, value, end in _top_values(text, path, _line):
        if isinstance(value, dict) and value.get("kind") in _LIST_KINDS:
            items = value.get("items")
            if not isinstance(items, list):
                raise InputError(
                    f"a {value.get('kind')} without an items array; expected"
                    " `kubectl get events -o json` output",
                    path,
                    _line(pos),
                )
            for item_pos, item in _item_positions(text, pos, end, items):
                yield _event(item, path, _line(item_pos))
        else:
            yield _event(value, path, _line(pos))


def _top_values(
    text: str, path: str, _line: Callable[[int], int]
) -> Iterator[tuple[int, Any, int]]:
    dec = json.JSONDecoder()
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            return
        try:
            value, end = dec.raw_decode(text, i)
        except json.JSONDecodeError as exc:
            raise InputError(
                f"not valid JSON ({exc.msg}); expected Kubernetes events as"
                " `kubectl get events -o json` prints them",
                path,
                exc.lineno,
            ) from exc
        except RecursionError as exc:
            raise InputError("JSON nested too deeply", path, _line(i)) from exc
        except ValueError as exc:  # a number longer than Python converts (4,300 digits)
            long = long_number(text, i)
            if long is None:
                raise InputError(f"not valid JSON ({exc})", path, _line(i)) from exc
            raise InputError(f"not valid JSON ({long.msg})", path, long.lineno) from exc
        yield i, value, end
        i = end


def _item_positions(text: str, start: int, end: int, items: list[Any]) -> Iterator[tuple[int, Any]]:
    """Each item of the List with the offset where its object starts (the List's own offset
    when the items array cannot be located)."""
    m = _ITEMS.search(text, start, end)
    positions: list[int] = []
    if m is not None:
        dec = json.JSONDecoder()
        i = m.end()
        for _ in items:
            while i < end and text[i] in " \t\r\n,":
                i += 1
            try:
                _, nxt = dec.raw_decode(text, i)
            except json.JSONDecodeError:
                positions = []
                break
            positions.append(i)
            i = nxt
    if len(positions) != len(items):
        positions = [start] * len(items)
    yield from zip(positions, items, strict=True)


def _time(value: Any, field: str, path: str, line: int) -> float | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise InputError(f"{field}: expected an RFC 3339 time, got {value!r}", path, line)
    try:
        t = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InputError(f"{field}: expected an RFC 3339 time, got {value!r}", path, line) from exc
    if t.tzinfo is None:
        t = t.replace(tzinfo=dt.timezone.utc)
    if t.year == 1:  # Go's zero time.Time, what an unset time serialises as: no time
        return None
    epoch = t.timestamp()
    why = implausible_time(epoch, dated=True)
    if why is not None:
        raise InputError(f"{field}: {value!r} is no real event time ({why})", path, line)
    return epoch


def _dict(obj: dict[str, Any], key: str) -> dict[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value != "" else None


def _event(obj: Any, path: str, line: int) -> KubeEvent:
    if not isinstance(obj, dict):
        raise InputError(
            f"expected an Event object, got {type(obj).__name__}; expected `kubectl get events"
            " -o json` output",
            path,
            line,
        )
    reason = _str(obj.get("reason"))
    if reason is None:
        raise InputError("an event without a reason; expected an Event object", path, line)
    about = _dict(obj, "involvedObject") or _dict(obj, "regarding")
    if not about:
        raise InputError(
            "an event without involvedObject (core/v1) or regarding (events.k8s.io/v1)",
            path,
            line,
        )
    series = _dict(obj, "series")
    meta = _dict(obj, "metadata")
    first = (
        _time(obj.get("firstTimestamp"), "firstTimestamp", path, line)
        or _time(obj.get("deprecatedFirstTimestamp"), "deprecatedFirstTimestamp", path, line)
        or _time(obj.get("eventTime"), "eventTime", path, line)
    )
    last = (
        _time(obj.get("lastTimestamp"), "lastTimestamp", path, line)
        or _time(obj.get("deprecatedLastTimestamp"), "deprecatedLastTimestamp", path, line)
        or _time(series.get("lastObservedTime"), "series.lastObservedTime", path, line)
    )
    created = _time(meta.get("creationTimestamp"), "metadata.creationTimestamp", path, line)
    first = first if first is not None else (last if last is not None else created)
    if first is None:
        raise InputError(
            "an event without a time; expected firstTimestamp, lastTimestamp or eventTime",
            path,
            line,
        )
    last = last if last is not None and last >= first else first
    counts = (obj.get("count"), obj.get("deprecatedCount"), series.get("count"))
    count = next((c for c in counts if c is not None), 1)
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= _MAX_COUNT:
        raise InputError(
            f"count: expected a whole number from 1 to {_MAX_COUNT} (an int32, as Kubernetes"
            f" stores it), got {count!r}",
            path,
            line,
        )
    source = _dict(obj, "source") or _dict(obj, "deprecatedSource")
    field_path = _str(about.get("fieldPath")) or ""
    container = m.group(1) if (m := _FIELD_PATH.search(field_path)) else None
    return KubeEvent(
        t_first=first,
        t_last=last,
        count=count,
        reason=reason,
        type=_str(obj.get("type")),
        message=_str(obj.get("message")) or _str(obj.get("note")),
        object_kind=_str(about.get("kind")),
        namespace=_str(about.get("namespace")) or _str(meta.get("namespace")),
        object_name=_str(about.get("name")),
        container=container,
        node=_str(source.get("host")) or _str(obj.get("reportingInstance")),
        component=_str(source.get("component"))
        or _str(obj.get("reportingComponent"))
        or _str(obj.get("reportingController")),
        line=line,
    )


_COLUMNS = (
    "t_first",
    "t_last",
    "count",
    "reason",
    "type",
    "message",
    "object_kind",
    "namespace",
    "object_name",
    "container",
    "node",
    "component",
)


def _store(con: duckdb.DuckDBPyConnection, source_id: int, events: list[KubeEvent]) -> None:
    """All events in one INSERT from an Arrow batch (one statement per event took minutes)."""
    import pyarrow as pa

    data: dict[str, list[Any]] = {c: [getattr(e, c) for e in events] for c in _COLUMNS}
    data["source_id"] = [source_id] * len(events)
    data["source_row"] = [e.line for e in events]
    text, num = pa.string(), pa.float64()
    schema = pa.schema(
        [("t_first", num), ("t_last", num), ("count", pa.int64())]
        + [(c, text) for c in _COLUMNS[3:]]
        + [("source_id", pa.int32()), ("source_row", pa.int64())]
    )
    batch = pa.table(data, schema=schema)
    con.register("_relplan_kube_events", batch)
    try:
        sql.run(con, "ingest/insert_kube_events")
    finally:
        con.unregister("_relplan_kube_events")


def _recognise(head: sniff.Head, kind: str | None) -> float:
    if keys_look_like_events(head.keys):
        return sniff.SIGNATURE + 0.04
    if looks_like_events(head.document):
        return sniff.SIGNATURE + 0.01
    text = head.text
    if (
        head.document_error is not None
        and '"reason"' in text
        and ('"involvedObject"' in text or '"regarding"' in text)
    ):
        return (
            sniff.SIGNATURE
        )  # event objects one after another (`kubectl get events --watch -o json`)
    return 0.0


ADAPTERS = (
    Adapter(
        name="kube_events",
        shape="json",
        kinds=("cluster",),
        family="cluster",
        summary="Kubernetes events as `kubectl get events -o json` prints them",
        tables=("kube_events",),
        recognise=_recognise,
        read=stage_kube_events,
        examples=(
            Example(
                "tests/data/published/kube_event_v1_started_knative_docs.json",
                "tests/data/published/SOURCES.md",
            ),
        ),
        doc="kubernetes-events",
        lines=False,
    ),
)
