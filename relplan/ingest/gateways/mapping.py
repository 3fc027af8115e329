"""Any other gateway's log, read through a TOML mapping file (IngestOptions(map_file=...)).

In the spirit of GoAccess's `--log-format`: the file says how records are split (JSON Lines /
JSON documents, CSV with a header, or a regular expression with named groups per line),
which field holds each attempt column, how times read, and the outcome rules. Fields of JSON
records are dotted paths (`request.headers.x-request-id`). docs/formats.md has
worked examples (tests/test_ingest_gateway_mapping.py runs them).

    format = "jsonl"                    # jsonl | csv | regex
    # pattern = '^(?P<ts>\\S+) (?P<id>\\S+) ...'  (format = "regex")
    [fields]
    call_id = "request_id"              # required: the call (or a header the caller sets)
    attempt = "retry"                   # optional: the attempt number; else by start time
    start = "ts"                        # required: when the attempt reached the gateway
    end = "ts_end"                      # end, or `duration` (then end = start + duration)
    first_byte = "ttfb_ms"              # read and checked; not stored (no column yet)
    status = "code"
    outcome = "result"                  # a field already holding delivered/client_gone/...
    replica = "upstream"
    model = "model"
    prompt_tokens = "usage.prompt_tokens"
    max_tokens = "max_tokens"
    execution_id = "engine_request_id"
    [time]
    format = "rfc3339"                  # rfc3339 | epoch_s | epoch_ms | epoch_us | epoch_ns
                                        # or a strptime pattern ("%d/%b/%Y:%H:%M:%S %z";
                                        # without %z the time is taken as UTC)
    duration_unit = "ms"                # s | ms | us | ns (duration and first_byte)
    [[outcome_rules]]                   # first match wins; then the status rule
    field = "flags"
    contains = "DC"                     # or equals = ["499", "0"]
    outcome = "client_gone"
The status rule: 0 and 499 client_gone, 429 shed, 1xx-3xx delivered, else error; with no
status and no matching rule the record is refused. The status is stored as logged (a
negative one, HAProxy's -1 for no response, as NULL).
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, ValidationError, model_validator

from relplan.errors import InputError
from relplan.ingest.adapter import Adapter, Example, InputOption, never
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.files import FileInfo, LineError, faults_for, open_text_lines
from relplan.ingest.gateway_rows import (
    OUTCOMES,
    AttemptSink,
    as_float,
    as_int,
    csv_records,
    dig,
    json_records,
    outcome_of,
    refusal,
    text,
)
from relplan.ingest.outcome import say
from relplan.ingest.patterns import compile_pattern
from relplan.models import StrictModel
from relplan.settings_file import read_settings
from relplan.values import TIME_RANGE, implausible_time, misread_unit, parse_time

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

if TYPE_CHECKING:
    import duckdb


_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
_EPOCH = {"epoch_s": 1.0, "epoch_ms": 1e-3, "epoch_us": 1e-6, "epoch_ns": 1e-9}


class Fields(StrictModel):
    call_id: str
    attempt: str | None = None
    start: str
    end: str | None = None
    duration: str | None = None
    first_byte: str | None = None
    status: str | None = None
    outcome: str | None = None
    replica: str | None = None
    model: str | None = None
    prompt_tokens: str | None = None
    max_tokens: str | None = None
    execution_id: str | None = None

    @model_validator(mode="after")
    def _has_end(self) -> Fields:
        if (self.end is None) == (self.duration is None):
            raise ValueError("give exactly one of end and duration")
        return self


class TimeSpec(StrictModel):
    format: str = "rfc3339"
    duration_unit: Literal["s", "ms", "us", "ns"] = "ms"

    @model_validator(mode="after")
    def _strptime(self) -> TimeSpec:
        if self.format in _EPOCH or self.format == "rfc3339":
            return self
        # A strptime pattern must read back what it writes; `%` alone, `%Q` and the like fail.
        probe = dt.datetime(2025, 11, 30, 1, 2, 3, tzinfo=dt.timezone.utc)
        try:
            dt.datetime.strptime(probe.strftime(self.format), self.format)
        except ValueError as exc:
            raise ValueError(
                f"format {self.format!r} is not a strptime pattern ({exc}); expected one of"
                f" {', '.join(_EPOCH)}, rfc3339 or a pattern like '%d/%b/%Y:%H:%M:%S %z'"
            ) from exc
        return self


class OutcomeRule(StrictModel):
    field: str
    equals: list[str] | None = None
    contains: str | None = None
    outcome: Literal["delivered", "client_gone", "shed", "error"]

    @model_validator(mode="after")
    def _one_test(self) -> OutcomeRule:
        if (self.equals is None) == (self.contains is None):
            raise ValueError("give exactly one of equals and contains")
        return self


class Mapping(StrictModel):
    format: Literal["jsonl", "csv", "regex"] = "jsonl"
    pattern: str | None = None
    fields: Fields
    time: TimeSpec = Field(default_factory=TimeSpec)
    outcome_rules: list[OutcomeRule] = Field(default_factory=list)

    @model_validator(mode="after")
    def _pattern(self) -> Mapping:
        if (self.format == "regex") != (self.pattern is not None):
            raise ValueError("format = 'regex' needs pattern, and pattern needs format = 'regex'")
        if self.pattern is not None:
            compile_pattern(self.pattern)
        return self


def load_mapping(path: Path) -> Mapping:
    text = read_settings(path, "mapping file")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML: {exc}", str(path)) from exc
    except RecursionError as exc:
        raise InputError("TOML nested too deeply; expected a flat mapping file", str(path)) from exc
    try:
        return Mapping.model_validate(data)
    except ValidationError as exc:
        lines = [
            f"{'.'.join(str(p) for p in e['loc']) or '(top)'}: {e['msg']}" for e in exc.errors()
        ]
        raise InputError("mapping file: " + "; ".join(lines), str(path)) from exc


def read_time(value: Any, spec: TimeSpec) -> float | None:
    s = text(value)
    if s is None:
        return None
    if spec.format in _EPOCH:
        v = as_float(s)
        return None if v is None else v * _EPOCH[spec.format]
    if spec.format == "rfc3339":
        return parse_time(s)
    try:
        stamp = dt.datetime.strptime(s, spec.format)
    except ValueError:
        return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    return stamp.timestamp()


def _implausible(raw: Any, t: float, spec: TimeSpec) -> LineError | None:
    """Why a time the mapping declares absolute cannot be a real one: an epoch value in
    another unit than [time] format says (naming the unit it reads as), or a strptime
    pattern without a date (year 1900); None when it can. Every format a mapping names is
    absolute, so the rule for seconds from a run's start does not apply."""
    if spec.format in _EPOCH:
        unit = spec.format.removeprefix("epoch_")
        why = misread_unit(as_float(text(raw)) or 0.0, unit)
        return None if why is None else LineError(f"{why}; expected {spec.format} ([time] format)")
    if implausible_time(t) is None:
        return None
    when = dt.datetime.fromtimestamp(t, dt.timezone.utc).isoformat(timespec="seconds")
    return LineError(
        f"{str(raw)[:40]!r} reads as {when}, not {TIME_RANGE} ([time] format {spec.format!r})"
    )


def map_record(rec: dict[str, Any], m: Mapping) -> tuple[dict[str, Any], LineError | None]:
    f = m.fields

    def get(name: str | None) -> Any:
        return None if name is None else dig(rec, name)

    call_id = text(get(f.call_id))
    if call_id is None:
        return {}, LineError(f"{f.call_id} (call_id) is missing or empty")
    t_sent = read_time(get(f.start), m.time)
    if t_sent is None:
        return {}, LineError(
            f"{f.start} (start) {str(get(f.start))[:40]!r} is not a {m.time.format} time"
        )
    if why := _implausible(get(f.start), t_sent, m.time):
        return {}, LineError(f"{f.start} (start) {why}")
    if f.end is not None:
        t_end = read_time(get(f.end), m.time)
        if t_end is None:
            return {}, LineError(
                f"{f.end} (end) {str(get(f.end))[:40]!r} is not a {m.time.format} time"
            )
        if why := _implausible(get(f.end), t_end, m.time):
            return {}, LineError(f"{f.end} (end) {why}")
    else:
        dur = as_float(get(f.duration))
        if dur is None or dur < 0:
            return {}, LineError(
                f"{f.duration} (duration) is not a number of {m.time.duration_unit} >= 0"
            )
        t_end = t_sent + dur * _UNITS[m.time.duration_unit]
    if f.first_byte is not None and text(get(f.first_byte)) is not None:
        fb = as_float(get(f.first_byte))
        if fb is None or fb < 0:
            return {}, LineError(
                f"{f.first_byte} (first_byte) is not a number of {m.time.duration_unit} >= 0"
            )
    status = as_int(get(f.status))
    if f.status is not None and text(get(f.status)) is not None and status is None:
        return {}, LineError(
            f"{f.status} (status) {str(get(f.status))[:20]!r} is not an HTTP status"
        )
    if status is not None and status < 0:
        status = None  # e.g. HAProxy's -1: no response
    outcome = text(get(f.outcome))
    if outcome is None:
        for rule in m.outcome_rules:
            v = text(dig(rec, rule.field)) or ""
            if (rule.equals is not None and v in rule.equals) or (
                rule.contains is not None and rule.contains in v
            ):
                outcome = rule.outcome
                break
    if outcome is None:
        if status is None:
            return {}, LineError("no outcome: no rule matched and the record has no status")
        outcome = outcome_of(status)
    elif outcome not in OUTCOMES:
        return {}, LineError(f"outcome {outcome!r} is not one of {', '.join(OUTCOMES)}")
    cols: dict[str, Any] = {
        "call_id": call_id,
        "t_sent": t_sent,
        "t_end": t_end,
        "outcome": outcome,
        "status": status,
        "replica": text(get(f.replica)),
        "model": text(get(f.model)),
        "prompt_tokens": as_float(get(f.prompt_tokens)),
        "max_tokens": as_float(get(f.max_tokens)),
        "execution_id": text(get(f.execution_id)),
    }
    if f.attempt is not None:
        a = as_float(get(f.attempt))
        if a is None:
            return {}, LineError(f"{f.attempt} (attempt) is missing or not a number")
        cols["attempt"] = a
    return cols, None


def _records(info: FileInfo, m: Mapping, skip: bool) -> Iterator[tuple[int, str, Any]]:
    if m.format == "jsonl":
        yield from json_records(info.path, skip)
    elif m.format == "csv":
        yield from csv_records(info.path, skip)
    else:
        rx = compile_pattern(m.pattern or "")
        faults = faults_for(skip)
        for n, line in open_text_lines(info.path, faults):
            if not line.strip():
                continue
            mm = rx.search(line)
            yield n, line, mm.groupdict() if mm else "the line does not match the pattern"
        if faults is not None:
            yield from faults.drain()


MAP_FILE = InputOption[Path | None](
    field="map_file",
    type=Path,
    default=None,
    flags=("--map",),
    metavar="FILE",
    exists=True,
    help="TOML mapping file for any other gateway's log (docs/formats.md).",
)


def stage_mapped(
    con: duckdb.DuckDBPyConnection, info: FileInfo, staged: Staged, opts: IngestOptions
) -> None:
    map_file = MAP_FILE.of(opts)
    if map_file is None:
        raise InputError("format mapped needs a mapping file (--map)", str(info.path))
    m = load_mapping(map_file)
    sink = AttemptSink(
        con, staged.source_id, "mapped", opts.skip, renumber=m.fields.attempt is None
    )
    for n, raw, rec in _records(info, m, opts.skip):
        if isinstance(rec, str) or not isinstance(rec, dict):
            sink.reject(
                n, raw, rec if isinstance(rec, str) else refusal(rec, "expected a JSON object")
            )
            continue
        cols, err = map_record(rec, m)
        if err is not None:
            sink.reject(n, raw, err)
        else:
            sink.call(n, raw, [cols])
    sink.finish(staged.notes)
    staged.notes.append(say("mapped", mapping=map_file.name, numbered_by=m.fields.attempt))
    if m.fields.first_byte:
        staged.notes.append(say("first_byte_unstored", field=m.fields.first_byte))


ADAPTERS = (
    Adapter(
        name="mapped",
        shape="text",
        kinds=("proxy",),
        family="gateways",
        summary="any other gateway's log, read through a TOML mapping file (`--map`)",
        tables=("attempts",),
        recognise=never,
        chosen=lambda opts: MAP_FILE.of(opts) is not None,
        read=stage_mapped,
        options=(MAP_FILE,),
        examples=(
            Example(
                "tests/data/ingest/adapters/traefik_mapped.jsonl",
                "docs/formats.md's Traefik example (hand-made from Traefik's documented fields)",
                {"map_file": Path("tests/data/ingest/adapters/traefik.toml")},
            ),
        ),
        doc="any-other-gateway-a-mapping-file-mapped",
    ),
)
