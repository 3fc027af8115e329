"""Prometheus metrics as text: OpenMetrics files and scrape logs (docs/formats.md, Metrics).

OpenMetrics (`promtool tsdb dump-openmetrics`, the simulator's metrics.om.txt): `# TYPE`,
`# HELP`, `# UNIT` lines, samples `name{label="v",...} value timestamp` with the timestamp in
seconds, and `# EOF` last. A file without `# EOF` is refused (it may be truncated); with
`--on-error skip` it is kept with a note.

Scrape logs: text exposition scrapes saved in sequence (a shell loop of `curl
host:8000/metrics`), each after a line `# SCRAPE <epoch seconds | RFC 3339>`; samples take that
time unless they carry their own timestamp (milliseconds in the text format; a value below
1e11 is taken as seconds).

Single scrapes (`curl host:8000/metrics` saved to a file: text exposition 0.0.4, no sample
timestamps, no `# EOF`; or OpenMetrics negotiated, with `# EOF`): every sample takes the time in
the file's name (relplan/ingest/metrics/scrape_time.py), else `IngestOptions(at=...)` (`--at`); without either
the file is refused with a message naming both and `relplan record` (with --on-error skip its
samples are kept in rejects).

All: a `<name>_created` sample is dropped when a counter, histogram or summary family of that
base name was declared, or is a `vllm:` name (prometheus_client exports the creation time as a gauge beside each
counter; it is not a sample of the counter) and the number dropped is noted. Names are stored
as exported, old vLLM names included (`vllm:gpu_cache_usage_perc`, `vllm:gpu_prefix_cache_*`,
which early V1 counted in blocks): a note says so and analyses may alias them. Labels
(`engine`, `model_name`, `pod`, ...) are kept as they are.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from relplan import sql
from relplan.errors import InputError
from relplan.ingest import sniff
from relplan.ingest.adapter import Adapter, Example, InputOption
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import Faults, FileInfo, LineError, faults_for, open_text_lines
from relplan.ingest.metrics.scrape_time import parse_at, time_from_name, unread_name_time
from relplan.ingest.outcome import say
from relplan.ingest.stage import StageWriter
from relplan.values import parse_number, parse_time

if TYPE_CHECKING:
    import duckdb


_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_LABEL = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,?)\s*')
_ESCAPE = re.compile(r"\\(.)")
_META = re.compile(r"^#\s+(TYPE|HELP|UNIT)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s+(.*))?$")
_COUNTER_LIKE = ("counter", "histogram", "summary", "gaugehistogram")
OLD_VLLM_NAMES = {
    "vllm:gpu_cache_usage_perc": "vllm:kv_cache_usage_perc",
    "vllm:gpu_prefix_cache_queries_total": "vllm:prefix_cache_queries_total (early V1: blocks)",
    "vllm:gpu_prefix_cache_hits_total": "vllm:prefix_cache_hits_total (early V1: blocks)",
    "vllm:gpu_prefix_cache_queries": "vllm:prefix_cache_queries (early V1: blocks)",
    "vllm:gpu_prefix_cache_hits": "vllm:prefix_cache_hits (early V1: blocks)",
}


class SampleError(ValueError):
    """A sample line that does not parse; the message says what was expected."""


def _unescape(value: str) -> str:
    if "\\" not in value:
        return value
    return _ESCAPE.sub(lambda m: "\n" if m.group(1) == "n" else m.group(1), value)


# The common sample line, read by one match: single spaces, labels without escapes, no
# exemplar. Anything else (and a label named twice) takes the full parser below, which gives
# the same result for these lines and names what is wrong with the others.
_PLAIN_LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="[^"\\]*"'
_PLAIN = re.compile(
    rf"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{{((?:{_PLAIN_LABEL}(?:,{_PLAIN_LABEL})*,?)?)\}})?"
    r" ([^\s#]+)(?: ([^\s#]+))?"
)
_PLAIN_PAIR = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="([^"\\]*)"')


def parse_sample(line: str) -> tuple[str, dict[str, str], float, str | None]:
    """`name{l="v"} value [timestamp] [# exemplar]` -> (name, labels, value, timestamp text)."""
    plain = _PLAIN.fullmatch(line)
    if plain is not None:
        name, inside, value_text, ts = plain.groups()
        pairs = _PLAIN_PAIR.findall(inside) if inside else []
        labels = dict(pairs)
        value = parse_number(value_text)
        if value is not None and len(labels) == len(pairs):
            return name, labels, value, ts
    return _parse_sample(line)


def _parse_sample(line: str) -> tuple[str, dict[str, str], float, str | None]:
    m = _NAME.match(line)
    if not m:
        raise SampleError("expected a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) at the start")
    name = m.group(0)
    pos = m.end()
    labels: dict[str, str] = {}
    if pos < len(line) and line[pos] == "{":
        pos += 1
        while True:
            if pos < len(line) and line[pos] == "}":
                pos += 1
                break
            lm = _LABEL.match(line, pos)
            if not lm:
                raise SampleError('malformed labels; expected {name="value",...}')
            if lm.group(1) in labels:
                raise SampleError(
                    f"label {lm.group(1)!r} appears twice in one sample; expected each label"
                    " name once (which value is meant?)"
                )
            labels[lm.group(1)] = _unescape(lm.group(2))
            pos = lm.end()
            if not lm.group(3):
                if pos < len(line) and line[pos] == "}":
                    pos += 1
                    break
                raise SampleError("malformed labels; expected ',' or '}' after a label value")
    rest = line[pos:]
    if not rest[:1].isspace():
        raise SampleError("expected a space and a value after the name and labels")
    parts = rest.split("#", 1)[0].split()
    if len(parts) not in (1, 2):
        raise SampleError("expected 'value' or 'value timestamp' after the name and labels")
    value = parse_number(parts[0])
    if value is None:
        raise SampleError(f"value {parts[0][:40]!r} is not a number (or NaN, +Inf, -Inf)")
    return name, labels, value, parts[1] if len(parts) == 2 else None


@dataclass
class _State:
    families: dict[str, str] = field(default_factory=dict)  # family name -> type
    meta: dict[str, list[str | None]] = field(default_factory=dict)  # name -> [type, help, unit]
    created_dropped: int = 0
    old_names: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)

    def is_created_of_counter(self, name: str) -> bool:
        if not name.endswith("_created"):
            return False
        if name.startswith("vllm:"):  # vLLM has no metric of its own ending in _created
            return True
        base = name[: -len("_created")]
        return any(self.families.get(b) in _COUNTER_LIKE for b in (base, base + "_total"))

    def see_meta(self, kind: str, name: str, text: str | None) -> None:
        entry = self.meta.setdefault(name, [None, None, None])
        if kind == "TYPE":
            entry[0] = (text or "").strip() or None
            if entry[0]:
                self.families[name] = entry[0]
        elif kind == "HELP":
            entry[1] = _unescape(text or "")
        else:
            entry[2] = (text or "").strip() or None


def drop_aliases(con: duckdb.DuckDBPyConnection, staged: Staged) -> set[str]:
    """Drop a source's samples under deprecated vLLM aliases whose new name it also has
    (counted once); returns the dropped names and notes them."""
    found = sql.rows(con, "ingest/metric_alias_counts", {"source_id": staged.source_id})
    if not found:
        return set()
    names = [str(r["name"]) for r in found]
    sql.run(con, "ingest/drop_metric_aliases", {"source_id": staged.source_id, "names": names})
    for r in found:
        staged.notes.append(say("alias_dropped", n=r["n"], alias=r["name"], name=r["new_name"]))
    return set(names)


def _finish_notes(con: duckdb.DuckDBPyConnection, staged: Staged, st: _State) -> None:
    dropped = drop_aliases(con, staged)
    st.old_names -= dropped
    for name in dropped:
        st.meta.pop(name, None)
    if st.created_dropped:
        staged.notes.append(say("created_samples", n=st.created_dropped))
    for old in sorted(st.old_names):
        staged.notes.append(say("old_metric_name", old=old, new=OLD_VLLM_NAMES[old]))
    # Families whose samples were dropped as `_created` keep no metadata either.
    meta = [
        (n, v[0], v[1], v[2]) for n, v in sorted(st.meta.items()) if not st.is_created_of_counter(n)
    ]

    staged.finish.append(meta_store(staged.source_id, meta))


def meta_store(
    source_id: int, meta: list[tuple[str, str | None, str | None, str | None]]
) -> Callable[[duckdb.DuckDBPyConnection], None]:
    """The metric_meta insert of one source (name, type, help, unit), run at commit."""

    def store(con: duckdb.DuckDBPyConnection) -> None:
        if not meta:
            return
        rows = [
            {"name": n, "type": t, "help": h, "unit": u, "source_id": source_id}
            for n, t, h, u in meta
        ]
        sql.run(con, "ingest/insert_metric_meta_rows", {"rows": rows})

    return store


def _sample(
    w: StageWriter,
    st: _State,
    staged: Staged,
    n: int,
    line: str,
    t: float | None,
    ts_scale_ms: bool,
    keep_raw: bool,
    no_time: str | None = None,
) -> str:
    """Stage one sample line; returns what became of it (stored, created, rejected)."""
    try:
        name, labels, value, ts = parse_sample(line)
    except SampleError as exc:
        w.add(source_id=staged.source_id, ln=n, raw=line, perr=str(exc))
        return "rejected"
    if st.is_created_of_counter(name):
        st.created_dropped += 1
        return "created"
    if ts is not None:
        tv = parse_time(ts)
        if tv is None:
            w.add(
                source_id=staged.source_id,
                ln=n,
                raw=line,
                perr=LineError(f"timestamp {ts[:40]!r} is not a number; expected epoch seconds"),
            )
            return "rejected"
        t = tv / 1000.0 if ts_scale_ms and tv > 1e11 else tv
    elif t is None and no_time is not None:
        w.add(source_id=staged.source_id, ln=n, raw=line, perr=no_time)
        return "rejected"
    if name in OLD_VLLM_NAMES:
        st.old_names.add(name)
    st.names.add(name)
    w.add(
        source_id=staged.source_id,
        ln=n,
        raw=line if keep_raw or t is None else None,
        perr=None,
        t=t,
        name=name,
        labels=labels,
        value=value,
    )
    return "stored"


def _stage_faults(w: StageWriter, staged: Staged, faults: Faults | None) -> int:
    """Skip mode: stage the lines that are not UTF-8 as refused; how many."""
    bad = faults.drain() if faults is not None else []
    for n, line, why in bad:
        w.add(source_id=staged.source_id, ln=n, raw=line, perr=why)
    return len(bad)


def stage_openmetrics(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    path = str(info.path)
    w = StageWriter(con, "stage_metrics")
    st = _State()
    eof_line: int | None = None
    last = 0
    faults = faults_for(opts.skip)
    for n, line in open_text_lines(info.path, faults):
        last = n
        if eof_line is not None:
            if line.strip():
                w.add(
                    source_id=staged.source_id,
                    ln=n,
                    raw=line,
                    perr="content after # EOF; expected # EOF to be the last line",
                )
            continue
        if not line.strip():
            continue
        if line.startswith("#"):
            if line.strip() == "# EOF":
                eof_line = n
                continue
            m = _META.match(line)
            if m:
                st.see_meta(m.group(1), m.group(2), m.group(3))
            continue
        _sample(w, st, staged, n, line, None, False, opts.skip)
    _stage_faults(w, staged, faults)
    w.flush()
    if eof_line is None:
        if not opts.skip:
            raise InputError(
                "no '# EOF' line at the end; expected OpenMetrics text ending with # EOF"
                " (is the file truncated?)",
                path,
                last + 1,
            )
        staged.notes.append(say("no_eof"))
    _finish_notes(con, staged, st)


def stage_scrape(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    w = StageWriter(con, "stage_metrics")
    st = _State()
    t: float | None = None
    scrapes = 0
    faults = faults_for(opts.skip)
    for n, line in open_text_lines(info.path, faults):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            if s.startswith("# SCRAPE"):
                text = s[len("# SCRAPE") :].strip()
                t = parse_time(text) if text else None
                scrapes += 1
                if t is None:
                    w.add(
                        source_id=staged.source_id,
                        ln=n,
                        raw=line,
                        perr=LineError(
                            f"cannot read scrape time {text[:60]!r}; expected '# SCRAPE' and"
                            " epoch seconds or RFC 3339 with an offset"
                        ),
                    )
                continue
            m = _META.match(s)
            if m:
                st.see_meta(m.group(1), m.group(2), m.group(3))
            continue
        _sample(w, st, staged, n, s, t, True, opts.skip)
    _stage_faults(w, staged, faults)
    w.flush()
    staged.notes.append(say("scrapes", n=scrapes))
    _finish_notes(con, staged, st)


NO_TIME = (
    "this /metrics scrape has no timestamps and no time was given for it; pass --at TIME (when it was"
    " taken: RFC 3339 with an offset or epoch seconds), put the time in the file name"
    " (metrics-2025-11-30T00-00-05Z.prom or metrics-1764460805.prom), or capture with"
    " `relplan record`, which writes the scrape times"
)


AT = InputOption[float | None](
    field="at",
    type=str,
    default=None,
    metavar="TIME",
    convert=parse_at,
    help="When a timestamp-less /metrics scrape was taken (RFC 3339 with an offset or epoch"
    " seconds), for files whose names carry no time.",
)


def stage_exposition(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    path = str(info.path)
    named = time_from_name(info.path)
    t = named[0] if named is not None else AT.of(opts)
    no_time = NO_TIME
    if t is None and (why := unread_name_time(info.path)) is not None:
        no_time = LineError(f"{why}; {NO_TIME}")
    w = StageWriter(con, "stage_metrics")
    st = _State()
    tally = {"stored": 0, "created": 0, "rejected": 0, "meta": 0, "comment": 0, "blank": 0}
    eof_line: int | None = None
    faults = faults_for(opts.skip)
    for n, line in open_text_lines(info.path, faults):
        s = line.strip()
        if eof_line is not None and s:
            w.add(
                source_id=staged.source_id,
                ln=n,
                raw=line,
                perr="content after # EOF; expected # EOF to be the last line",
            )
            tally["rejected"] += 1
        elif not s:
            tally["blank"] += 1
        elif s == "# EOF":
            eof_line = n
            tally["meta"] += 1
        elif s.startswith("#"):
            m = _META.match(s)
            if m:
                st.see_meta(m.group(1), m.group(2), m.group(3))
            tally["meta" if m else "comment"] += 1
        else:
            what = _sample(w, st, staged, n, s, t, True, opts.skip, no_time)
            if what == "rejected" and t is None and not opts.skip:
                w.flush()
                raise InputError(no_time, path, n)
            tally[what] += 1
    tally["rejected"] += _stage_faults(w, staged, faults)
    w.flush()
    if named is not None:
        staged.notes.append(say("scrape_time_from_name", time=named[1]))
    elif t is not None:
        staged.notes.append(say("scrape_time_given"))
    total = sum(tally.values())
    staged.notes.append(
        say(
            "scrape_lines",
            total=total,
            stored=tally["stored"],
            meta=tally["meta"],
            created=tally["created"],
            ignored=tally["comment"] + tally["blank"],
            rejected=tally["rejected"],
        )
    )
    untyped = sorted(n for n in st.names if not _declared(st, n))
    if untyped:
        staged.notes.append(say("untyped_names", names=untyped))
    _finish_notes(con, staged, st)


def _declared(st: _State, name: str) -> bool:
    if name in st.families:
        return True
    for suffix in ("_bucket", "_sum", "_count", "_total"):
        if name.endswith(suffix) and name[: -len(suffix)] in st.families:
            return True
    return False


_TEXT_START = ("# TYPE", "# HELP", "# UNIT", "# EOF")
# A sample line: a metric name, optional labels, then a number (so a line of prose such as
# "the pager went off" is not taken for one).
_SAMPLE = re.compile(
    r"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})?\s+[-+]?(?:\d|\.\d|NaN|Nan|nan|Inf|inf)\S*(?:\s+\S+)?\s*$"
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


def _exposition_like(head: sniff.Head) -> bool:
    return not head.jsonish and (
        head.first.startswith(_TEXT_START) or bool(_SAMPLE.match(head.first))
    )


def _openmetrics(head: sniff.Head, kind: str | None) -> float:
    return sniff.LIKELY if _exposition_like(head) and _samples_have_times(head.text) else 0.0


def _exposition(head: sniff.Head, kind: str | None) -> float:
    return sniff.LIKELY if _exposition_like(head) and not _samples_have_times(head.text) else 0.0


def _scrape(head: sniff.Head, kind: str | None) -> float:
    return sniff.CERTAIN if not head.jsonish and head.first.startswith("# SCRAPE") else 0.0


_TABLES = ("metric_samples", "metric_meta")
ADAPTERS = (
    Adapter(
        name="openmetrics",
        kinds=("metrics",),
        family="metrics",
        summary="OpenMetrics text with a timestamp on every sample",
        tables=_TABLES,
        recognise=_openmetrics,
        read=stage_openmetrics,
        examples=(
            Example(
                "tests/data/ingest/incident/metrics.om.txt",
                "relplan's own export (docs/formats.md)",
            ),
        ),
        doc="metrics",
    ),
    Adapter(
        name="scrape",
        kinds=("metrics",),
        family="metrics",
        summary="a scrape log: `# SCRAPE <time>` lines, each followed by one /metrics page",
        tables=_TABLES,
        recognise=_scrape,
        read=stage_scrape,
        examples=(
            Example(
                "tests/data/ingest/adapters/scrape.log",
                "relplan's adapter fixtures (tests/data/ingest/adapters)",
            ),
        ),
        doc="metrics",
    ),
    Adapter(
        name="exposition",
        kinds=("metrics",),
        family="metrics",
        summary="one timestamp-less /metrics scrape (Prometheus text exposition)",
        tables=_TABLES,
        recognise=_exposition,
        read=stage_exposition,
        options=(AT,),
        examples=(
            Example(
                "tests/data/published/vllm_metrics_v1_prodstack318.prom",
                "tests/data/published/SOURCES.md",
                {"at": 1764460800.0},
            ),
        ),
        doc="metrics",
    ),
)
