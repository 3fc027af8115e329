"""Prometheus HTTP API `query_range` responses (resultType `matrix`) -> metric_samples.

A response file holds one JSON document: {"status": "success", "data": {"resultType":
"matrix", "result": [{"metric": {"__name__": ..., labels...}, "values": [[t, "v"], ...]}]}}.
One response is bounded by the server (11,000 points per series), so it is parsed whole.
`source_row` is the sample's 1-based ordinal in the file (JSON has no useful line numbers);
errors name the JSON location instead, e.g. `data.result[3].values[7]`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from relplan import sql
from relplan.errors import InputError
from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, LineError, load_document, read_document
from relplan.ingest.metrics.text import drop_aliases
from relplan.ingest.outcome import say
from relplan.ingest.stage import SMALL_BATCH, StageWriter, schemas
from relplan.values import parse_number

if TYPE_CHECKING:
    import duckdb


def stage_query_range_file(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    raw = read_document(info, "a query_range response")
    doc = load_document(raw, str(info.path), "a query_range response", unique=True)
    w = StageWriter(con, "stage_metrics")
    stage_response(w, doc, staged, str(info.path), opts, ordinal=0)
    w.flush()
    drop_aliases(con, staged)


@dataclass
class Window:
    """A live pull's window for one query: points outside [start, end] and a series' point
    repeated at the same time are dropped and counted (a server may align a range to its
    step or repeat a series), so the pull keeps exactly the requested points, once."""

    start: float
    end: float
    outside: int = 0
    repeated: int = 0


def stage_response(
    w: StageWriter,
    doc: Any,
    staged: Staged,
    where: str,
    opts: IngestOptions,
    ordinal: int,
    window: Window | None = None,
) -> int:
    """Stage one query_range response; returns the last sample ordinal used."""
    seen: set[tuple[str | None, tuple[tuple[str, str], ...], float]] = set()
    if not isinstance(doc, dict):
        raise InputError("expected a JSON object with status and data", where)
    if doc.get("status") != "success":
        err = doc.get("error") or doc.get("errorType") or "no error message"
        raise InputError(f"the response has status {doc.get('status')!r}: {err}", where)
    data = doc.get("data")
    if not isinstance(data, dict) or data.get("resultType") != "matrix":
        got = data.get("resultType") if isinstance(data, dict) else None
        raise InputError(
            f"data.resultType is {got!r}; expected 'matrix' (a query_range response)", where
        )
    result = data.get("result")
    if not isinstance(result, list):
        raise InputError("data.result is not a list; expected the matrix's series", where)
    names = {
        str(s["metric"].get("__name__"))
        for s in result
        if isinstance(s, dict) and isinstance(s.get("metric"), dict)
    }
    rows = _Rows()
    created = [0, 0]  # series, samples
    for i, series in enumerate(result):
        loc = f"data.result[{i}]"
        if not isinstance(series, dict) or not isinstance(series.get("metric"), dict):
            raise InputError(f"{loc}.metric is missing; expected the series' labels", where)
        metric = {str(k): str(v) for k, v in series["metric"].items()}
        name = metric.pop("__name__", None)
        values = series.get("values", [])
        if not isinstance(values, list):
            raise InputError(f"{loc}.values is not a list of [time, value] pairs", where)
        if name is not None and is_created(name, names):
            created[0] += 1
            created[1] += len(values)
            ordinal += len(values)
            continue
        sid = rows.series(name, metric)
        if window is None and name is not None and rows.whole(sid, ordinal, values):
            ordinal += len(values)
            continue
        for j, pair in enumerate(values):
            ordinal += 1
            perr = None
            t = v = None
            if not (isinstance(pair, list) and len(pair) == 2):
                perr = LineError(f'{loc}.values[{j}]: expected a [time, "value"] pair')
            elif isinstance(pair[0], bool) or not isinstance(pair[0], (int, float)):
                perr = LineError(f"{loc}.values[{j}]: time {pair[0]!r} is not a number")
            else:
                t = float(pair[0])
                v = parse_number(str(pair[1]))
                if v is None:
                    perr = LineError(
                        f"{loc}.values[{j}]: value {str(pair[1])[:40]!r} is not a number"
                    )
            if name is None and perr is None:
                perr = LineError(
                    f"{loc}.metric has no __name__; query with a selector that keeps names"
                )
            if perr is not None:
                if not opts.skip:
                    raise InputError(perr, where)
                rows.reject(ordinal, json.dumps(pair), perr)
                continue
            if window is not None and t is not None:
                if not window.start <= t <= window.end:
                    window.outside += 1
                    continue
                key = (name, tuple(sorted(metric.items())), t)
                if key in seen:
                    window.repeated += 1
                    continue
                seen.add(key)
            rows.sample(ordinal, t, sid, v)
    rows.write(w, staged.source_id)
    if created[0]:
        staged.notes.append(say("created_series", series=created[0], samples=created[1]))
    return ordinal


class _Rows:
    """One response's staged rows as columns, in sample order: a series' labels are kept
    once (`sid` indexes them; None for a reject, which has no name or labels), and a
    series whose every pair is a well-formed [number, "number"] is taken whole (`whole`),
    with each distinct value string parsed once (counters and gauges repeat theirs)."""

    def __init__(self) -> None:
        self.names: list[str | None] = []
        self.labels: list[dict[str, str]] = []
        self.ln: list[int] = []
        self.raw: list[str | None] = []
        self.perr: list[str | None] = []
        self.t: list[float | None] = []
        self.sid: list[int | None] = []
        self.value: list[float | None] = []
        self.parsed: dict[str, float | None] = {}

    def series(self, name: str | None, labels: dict[str, str]) -> int:
        self.names.append(name)
        self.labels.append(labels)
        return len(self.names) - 1

    def whole(self, sid: int, ordinal: int, values: list[Any]) -> bool:
        """Stage a series' pairs at once if all are well formed (else stage nothing: the
        caller goes pair by pair, naming the first bad one)."""
        if not all(type(p) is list and len(p) == 2 for p in values):
            return False
        times = [p[0] for p in values]
        texts = [p[1] for p in values]
        if not all(type(x) is float or type(x) is int for x in times):
            return False
        if not all(type(x) is str for x in texts):
            return False
        parsed = self.parsed
        for text in set(texts).difference(parsed):
            parsed[text] = parse_number(text)
        numbers = [parsed[x] for x in texts]
        if None in numbers:
            return False
        n = len(values)
        self.ln.extend(range(ordinal + 1, ordinal + n + 1))
        self.raw.extend([None] * n)
        self.perr.extend([None] * n)
        self.t.extend(map(float, times))
        self.sid.extend([sid] * n)
        self.value.extend(numbers)
        return True

    def sample(self, ln: int, t: float | None, sid: int, value: float | None) -> None:
        self.ln.append(ln)
        self.raw.append(None)
        self.perr.append(None)
        self.t.append(t)
        self.sid.append(sid)
        self.value.append(value)

    def reject(self, ln: int, raw: str, perr: str) -> None:
        self.ln.append(ln)
        self.raw.append(raw)
        self.perr.append(perr)
        self.t.append(None)
        self.sid.append(None)
        self.value.append(None)

    def write(self, w: StageWriter, source_id: int) -> None:
        """Append the rows after what `w` holds: a few as its rows (no pyarrow for a small
        file), more as two Arrow tables, the rows and the series (names and labels once),
        joined in DuckDB (ingest/append_prom_stage_metrics)."""
        if len(self.ln) <= SMALL_BATCH:
            for ln, raw, perr, t, sid, value in zip(
                self.ln, self.raw, self.perr, self.t, self.sid, self.value, strict=True
            ):
                w.add(
                    source_id=source_id,
                    ln=ln,
                    raw=raw,
                    perr=perr,
                    t=t,
                    name=self.names[sid] if sid is not None else None,
                    labels=self.labels[sid] if sid is not None else None,
                    value=value,
                )
            return
        import pyarrow as pa

        w.flush()
        n = len(self.ln)
        labels = schemas()["stage_metrics"].field("labels").type
        rows = pa.table(
            {
                "ln": pa.array(self.ln, pa.int64()),
                "raw": pa.array(self.raw, pa.string()),
                "perr": pa.array(self.perr, pa.string()),
                "t": pa.array(self.t, pa.float64()),
                "sid": pa.array(self.sid, pa.int32()),
                "value": pa.array(self.value, pa.float64()),
            }
        )
        series = pa.table(
            {
                "sid": pa.array(range(len(self.names)), pa.int32()),
                "name": pa.array(self.names, pa.string()),
                "labels": pa.array(self.labels, labels),
            }
        )
        w.con.register("_relplan_prom_rows", rows)
        w.con.register("_relplan_prom_series", series)
        try:
            sql.run(w.con, "ingest/append_prom_stage_metrics", {"source_id": source_id})
        finally:
            w.con.unregister("_relplan_prom_rows")
            w.con.unregister("_relplan_prom_series")
        w.count += n


def is_created(name: str, names: set[str]) -> bool:
    """A `<name>_created` series of a counter, histogram or summary exported beside it (a
    query_range of `vllm:.*` returns them as series of their own), or any `vllm:..._created`."""
    if not name.endswith("_created"):
        return False
    if name.startswith("vllm:"):
        return True
    base = name.removesuffix("_created")
    return bool({base + s for s in ("_total", "_count", "_bucket", "_sum", "")} & names - {name})


def _recognise(head: sniff.Head, kind: str | None) -> float:
    if "status" in head.keys and head.keys & {"data", "errorType"}:
        return sniff.SIGNATURE + 0.05
    doc = head.document
    if isinstance(doc, dict) and "status" in doc and ("data" in doc or "errorType" in doc):
        return sniff.SIGNATURE
    return 0.0


ADAPTERS = (
    Adapter(
        name="query_range",
        shape="json",
        kinds=("metrics",),
        family="metrics",
        summary="a Prometheus /api/v1/query_range response",
        tables=("metric_samples", "metric_meta"),
        recognise=_recognise,
        read=stage_query_range_file,
        examples=(
            Example(
                "tests/data/ingest/adapters/query_range.json",
                "relplan's adapter fixtures (tests/data/ingest/adapters)",
            ),
        ),
        doc="metrics",
        lines=False,
    ),
)
