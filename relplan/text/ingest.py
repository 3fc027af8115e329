"""The words of an ingest (relplan/ingest/): the notes each source gets (what an adapter
dropped, assumed or could not tell), why an input added nothing, the closing lines of
`relplan ingest`, and the hints of an input relplan cannot tell.

The ingest names each sentence by a code (`relplan.ingest.outcome.Said`) with its numbers and
names; this table words it, reached by name (`relplan.ingest.outcome.say`), so the ingest never
imports relplan.text. A refused line's reason is not here: it is an error message, worded
beside the check that finds it (a `LineError`, relplan/ingest/files.py).
"""

from __future__ import annotations

import datetime as dt
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

from relplan.ingest.outcome import display_path
from relplan.tables import format_table
from relplan.values import num, short, sig

if TYPE_CHECKING:
    from relplan.ingest.contents import FormatsReport, InspectMetric, InspectReport
    from relplan.ingest.outcome import IngestReport

# --- why an input adds nothing; sources told twice -------------------------------------------


def already_stored(source: int, path: str | None) -> str:
    """`path`: where the stored copy came from, when it is not the path given now."""
    where = "" if path is None else f" ({path})"
    return f"already in the workspace as source {source}{where}: same content, nothing added"


def attached_already(source: int, path: str) -> str:
    return (
        f"attached to the workspace as part of source {source} ({path}): copying it too would"
        " count its rows twice, nothing added"
    )


def repeated_in_ingest(path: str) -> str:
    return f"same content as {path} earlier in this ingest, nothing added"


def already_attached(source: int) -> str:
    return f"already attached as source {source}: same files, nothing added"


def attached_in_place(files: int) -> str:
    return f"attached in place: {files} Parquet files, read through views (not copied)"


def whole_second_twin(n: int, fine: int, matched: int) -> str:
    return (
        f"its {n} attempts are the requests of source {fine} told in whole seconds"
        f" ({matched} pair by end second, status and outcome): source {fine}'s finer times are"
        " kept, these are not stored"
    )


def whole_second_finer(coarse: int) -> str:
    return f"source {coarse} tells the same requests in whole seconds; its attempts were dropped"


def refined_times(n: int, coarse: int, fine: int, by_engine: bool) -> str:
    what = "engine events" if by_engine else "gateway attempts they joined"
    return (
        f"{n} whole-second event times of source {coarse} set to the finer times of the same"
        f" events inside that second, from the {what} (source {fine})"
    )


# --- the closing lines of `relplan ingest` (render_ingest says them) --------------------------


def ignored_columns(source: int, columns: Sequence[str]) -> str:
    return f"note: source {source}: ignored columns {', '.join(columns)}"


def records_refused(source: int, n: int) -> str:
    return (
        f"note: source {source}: {n} records refused, kept in rejects (relplan inspect lists them)"
    )


# --- gateways: how the attempts were read ----------------------------------------------------


def hidden_tries(n: int) -> str:
    return (
        f"{n} attempts are known by count only (the log gives no times, replica or status for"
        " them): placed at the start of their record with zero length; attempt counts are"
        " exact, their timing is not"
    )


def envoy_attempts(numbered_by: str | None, call: str) -> str:
    """`numbered_by`: the field that numbers the attempts (None: START_TIME)."""
    return (
        f"one entry per downstream request = one client attempt, numbered by"
        f" {numbered_by or 'START_TIME'} within each call (the call is {call}); execution_id"
        " unknown from Envoy logs"
    )


def envoy_upstream_retried(n: int) -> str:
    return f"{n} entries were retried upstream by Envoy (UPSTREAM_REQUEST_ATTEMPT_COUNT > 1)"


def litellm_tries_unlogged(n: int, calls: int) -> str:
    return (
        f"retry amplification is not measurable for {n} of {calls} calls: attempted_retries"
        " and attempted_fallbacks are null, so they are stored as one attempt each"
    )


def mapped(mapping: str, numbered_by: str | None) -> str:
    """`numbered_by`: the mapped attempt field (None: start time within each call)."""
    return (
        f"read through the mapping {mapping}; attempts numbered by"
        f" {numbered_by or 'start time within each call'}"
    )


def first_byte_unstored(field: str) -> str:
    return (
        f"first byte ({field}) checked but not stored: the attempts table has no first-byte"
        " column yet"
    )


def nginx_combined_tail(n: int) -> str:
    return (
        f"{n} lines are `combined` with more fields after it: their timings read by name (rt=,"
        " urt=, us=, ua=) or by position (the first bare seconds value as $request_time, the"
        " second as $upstream_response_time); give --nginx-format to read them exactly"
    )


def unkeyed_lines(n: int, call_key: str) -> str:
    return (
        f"{n} lines without the call key {call_key} (health checks, probes): each is a call of"
        " its own"
    )


# --- load tests: how the runs were placed ----------------------------------------------------


def bench_run_placed(line: int, requests: int, date: str | None, at_once: bool) -> str:
    """`date`: the run's date it was placed by (None: by --bench-start); `at_once`: the run
    had no start_times."""
    how = (
        "by --bench-start"
        if date is None
        else f"by its date {date} (local time of the benchmark machine, taken as UTC)"
    )
    if at_once:
        how += (
            "; no start_times: request_rate inf without max_concurrency, so every request"
            " starts at the run's start"
        )
    return f"run on line {line} ({requests} requests) placed {how}"


def bench_summary(
    line: int, label: str, date: str | None, figures: Sequence[tuple[str, float | int, str]]
) -> str:
    """`figures`: (name, value, unit) of the summary's figures; a float to 4 significant
    digits, a whole number as it is."""
    shown = ", ".join(
        f"{name} {sig(v, 4)}{unit}" if isinstance(v, float) else f"{name} {v}{unit}"
        for name, v, unit in figures
    )
    return (
        f"line {line}: a `vllm bench serve` run summary ({label}, {date}), not per-request"
        f" data: {shown}; rerun with --save-detailed for one attempt per request"
    )


def guidellm_sampled(benchmark: int, held: int, total: int) -> str:
    return f"benchmarks[{benchmark}] lists {held} of {total} requests (a sample)"


def guidellm_never_sent(n: int) -> str:
    return f"{n} requests were never sent (no request_start): not stored as attempts"


# --- metrics: what was dropped, how the scrape time was found --------------------------------


def points_dropped(outside: int, repeated: int) -> str:
    return (
        f"dropped {outside} points outside the requested window and {repeated} repeated points"
        " (same series and time) that the server sent"
    )


def names_matched(n: int, match: str) -> str:
    return f"{n} metric names matched {match!r}"


def created_series(series: int, samples: int) -> str:
    return (
        f"dropped {series} `_created` series ({samples} samples: counter creation times, not"
        " samples of the counter)"
    )


def alias_dropped(n: int, alias: str, name: str) -> str:
    return (
        f"dropped {n} samples of the deprecated alias {alias}: the same source has {name} (same"
        " series, counted once)"
    )


def created_samples(n: int) -> str:
    return f"dropped {n} `_created` samples (counter creation times, not samples of the counter)"


def old_metric_name(old: str, new: str) -> str:
    return f"old vLLM metric name {old} stored as exported (newer name: {new})"


def scrape_time_from_name(time: str) -> str:
    return f"scrape time {time} from the file name"


def scrape_lines(
    total: int, stored: int, meta: int, created: int, ignored: int, rejected: int
) -> str:
    return (
        f"{total} lines: {stored} samples stored, {meta} # HELP/# TYPE/# EOF lines"
        f" (metric_meta), {created} _created samples dropped, {ignored} blank or comment lines"
        f" ignored, {rejected} rejected"
    )


def untyped_names(names: Sequence[str]) -> str:
    """The first five of `names`, then `...`."""
    more = ", ..." if len(names) > 5 else ""
    return (
        f"{len(names)} sample names without a # TYPE line in the file (a fragment?):"
        f" {', '.join(names[:5])}{more}"
    )


# --- traces: what the spans held -------------------------------------------------------------


def _times(counts: Mapping[str, int]) -> str:
    """`name 3x, other 1x`, sorted by name."""
    return ", ".join(f"{k} {v}x" for k, v in sorted(counts.items()))


def span_counts(
    spans: int,
    name: str,
    stored: int,
    merged: int,
    other: Mapping[str, int],
    rejected: int,
    events: int,
    ids: int,
) -> str:
    """`other`: the spans of other names by name, most common first (the first five shown)."""
    shown = ", ".join(f"{n} {k}x" for n, k in list(other.items())[:5])
    more = len(other) - 5
    others = f" ({shown}{f', {more} more names' if more > 0 else ''})" if other else ""
    return (
        f"{spans} spans: {stored} {name} spans stored, {merged} duplicate {name} spans merged,"
        f" {sum(other.values())} other spans ignored{others}, {rejected} records rejected;"
        f" {events} events, {ids} request ids"
    )


def aborts_may_miss(name: str, aborted: int) -> str:
    return (
        f"aborted requests may be missing: older vLLM releases export no {name} span for a"
        " request the client abandoned (newer ones export one with finish reason abort:"
        f" {aborted} here)"
    )


def no_request_span(name: str) -> str:
    return (
        f"no {name} span: vLLM exports them with --otlp-traces-endpoint (service"
        " vllm.llm_engine's tracer); this file holds other services' spans only"
    )


def finish_reasons(endings: Mapping[str, int]) -> str:
    return f"finish reasons: {_times(endings)} (abort and error stored as aborted)"


def spans_without(missing: Mapping[str, int]) -> str:
    return f"spans without: {_times(missing)} (no event where a time is missing)"


def latencies_nulled(nulled: Mapping[str, int]) -> str:
    return f"negative or non-numeric latencies stored as NULL: {_times(nulled)}"


def request_ids_repeated(n: int) -> str:
    return (
        f"{n} spans repeat an earlier gen_ai.request.id (a resent X-Request-Id): stored as"
        " <id>#2, #3, ... so executions stay distinct"
    )


def completion_unstored(tokens: int, spans: int) -> str:
    return (
        f"gen_ai.usage.completion_tokens ({tokens} output tokens on {spans} spans) is not"
        " stored: the events table has no output-token column"
    )


def span_replicas(replicas: Mapping[str, int]) -> str:
    if replicas:
        return f"replica from resource attributes: {_times(replicas)}"
    return (
        "no replica: the spans' resource has no k8s.pod.name, service.instance.id or host.name"
        " (set OTEL_RESOURCE_ATTRIBUTES on each vLLM server)"
    )


# --- vLLM's log: its year --------------------------------------------------------------------


def year_read(year: int | None, how: str, seen: str) -> str:
    """`how`: where the year came from (relplan.ingest.vllm.clock.YearFrom), `seen`: the
    date it was read from."""
    source = {
        "file": f"from the file ({seen})",
        "file_name": f"from the file name ({seen})",
        "mtime": f"inferred from the file's modification time ({seen})",
    }.get(how, how)
    return f"vLLM's MM-DD timestamps read in {year} {source}; pass --year to set it"


def year_advanced(n: int) -> str:
    return f"year advanced {n} time(s) at a December-January turn"


def late_december_lines(n: int) -> str:
    return f"{n} December lines after a New Year turn kept in the old year"


# --- vLLM's log: what its lines held ---------------------------------------------------------


def log_lines(lines: Mapping[str, int], events: int, ids: int) -> str:
    """`lines`: the log's lines by category (`stored`, `merged: what`, `ignored: what`,
    `rejected: why`), each group shown with its parts."""
    groups: dict[str, dict[str, int]] = {}
    for cat, k in lines.items():
        head, _, what = cat.partition(": ")
        group = groups.setdefault(head, {})
        group[what or head] = group.get(what or head, 0) + k

    def part(head: str) -> str:
        c = groups.get(head, {})
        inner = ", ".join(f"{v} {k}" for k, v in sorted(c.items()) if k != head)
        return f"{sum(c.values())} {head}" + (f" ({inner})" if inner else "")

    return (
        f"{sum(lines.values())} lines: {part('stored')}, {part('merged')}, {part('ignored')},"
        f" {part('rejected')}; {events} events, {ids} request ids"
    )


def prompt_tokens_logged(known: int, of: int) -> str:
    return (
        f"prompt_tokens from logged prompt_token_ids on {known} of {of} arrivals (NULL where not"
        " logged or possibly cut by --max-log-len)"
    )


def ids_derived(n: int) -> str:
    return (
        f"{n} external ids derived by removing the engine's 8-hex suffix (no Received line to"
        " pair with)"
    )


def failed_requests(failed: Mapping[str, int]) -> str:
    return (
        f"failed requests: {_times(failed)} ((bad request)/(input error) stored as rejected,"
        " others as aborted)"
    )


def admission_rejections(admissions: Mapping[str, int], unnamed: int, stored_as: str) -> str:
    """`unnamed`: rejections logged without an id, stored as `stored_as`N."""
    none = (
        f"; {unnamed} logged as `rejecting request None` (no id: stored as {stored_as}N, N the"
        " line, joined to no gateway attempt)"
        if unnamed
        else ""
    )
    return f"admission rejections (HTTP 503, stored as rejected): {_times(admissions)}{none}"


def access_lines(access: Mapping[str, int], rejected: int) -> str:
    """`rejected`: the admission rejections the log names by request (503s beyond them name
    none)."""
    unnamed = access.get("503", 0) - rejected
    queue_cap = (
        f"; {unnamed} 503s name no request: queue-cap rejections are logged by request only at"
        " DEBUG (--max-num-queued-reqs/--max-num-queued-tokens)"
        if unnamed > 0
        else ""
    )
    return (
        f"uvicorn access lines by status (not stored, they name no request): {_times(access)}"
        f"{queue_cap}"
    )


# --- vLLM's log: its stats lines -------------------------------------------------------------


def stats_lines(lines: int, samples: int, names: int) -> str:
    return (
        f"{lines} stats lines -> {samples} metric samples of {names} vllm: gauges (throughput:"
        " tokens/s over the interval)"
    )


def _fields(counts: Mapping[str, int]) -> str:
    """`field (3x), other (1x)`, sorted by field."""
    return ", ".join(f"{k} ({v}x)" for k, v in sorted(counts.items()))


def stats_fields_unmapped(fields: Mapping[str, int]) -> str:
    return f"stats fields not stored: {_fields(fields)}"


def stats_fields_unread(fields: Mapping[str, int]) -> str:
    return f"stats fields skipped, value not a number with a unit: {_fields(fields)}"


def engines_aggregated(engines: int, lines: int) -> str:
    return (
        f"{lines} stats lines sum {engines} engines ('{engines} Engines Aggregated:'): stored"
        " without an engine label"
    )


def iteration_lines(n: int, dummy: int) -> str:
    ignored = f"; {dummy} dummy iterations (DP padding) ignored" if dummy else ""
    return (
        f"{n} iteration-detail lines -> engine_stats rows (step = Iteration(N), num_running ="
        " context + generation requests, num_batched_tokens = context + generation tokens,"
        " kv_usage; t_issue = the line's time, whole seconds), vllm_log:iteration_elapsed_seconds"
        " samples and the counts apart as"
        f" vllm_log:iteration_{{context,generation}}_{{requests,tokens}}{ignored}"
    )


def stats_metric_help(help: str) -> str:
    """The help stored in metric_meta for a gauge of vLLM's stats log line."""
    return f"from vLLM's stats log line: {help}"


# --- inputs relplan cannot tell --------------------------------------------------------------


def _first(names: Sequence[str], n: int) -> str:
    return ", ".join(names[:n])


def parquet_columns(columns: Sequence[str]) -> str:
    """`columns` sorted; the first eight shown."""
    return f"a Parquet file with columns {_first(columns, 8)}"


def record_keys(keys: Sequence[str]) -> str:
    return f"JSON records with keys {_first(keys, 8)}"


def document_keys(keys: Sequence[str]) -> str:
    return f"a JSON document with keys {_first(keys, 8)}"


def csv_header(header: str) -> str:
    return f"a CSV file with header {header[:80]}"


def unknown_parquet(columns: Sequence[str]) -> str:
    return (
        f"cannot tell what this Parquet file holds (columns: {', '.join(columns)}); expected the"
        " proxy columns (call_id, attempt, t_sent, t_end, outcome, ...) or the engine columns"
        " (type, t, execution_id, step, ...)"
    )


def map_hint(fields: Sequence[str]) -> str:
    """The end of a message for content relplan cannot tell: a --map FILE, with the field
    names seen (the first eight)."""
    if fields:
        return (
            f"; for another gateway's log, a --map FILE naming which of its fields"
            f" ({_first(fields, 8)}) hold the time, status and call (docs/formats.md)"
        )
    return (
        "; for another gateway's log, a --map FILE whose pattern (named groups) finds the time,"
        " status and call in each line: no named fields were seen (docs/formats.md)"
    )


def unknown_records(keys: Sequence[str], closest: str) -> str:
    return (
        f"cannot tell what these JSON records hold (keys: {_first(keys, 12)}); closest formats:"
        f" {closest}, or pass --kind"
    )


def unknown_document(keys: Sequence[str] | None, closest: str) -> str:
    shown = f" (keys: {_first(keys, 12)})" if keys is not None else ""
    return f"a JSON document{shown} that is none of relplan's inputs; closest formats: {closest}"


def unknown_csv(csv: bool, first: str, closest: str) -> str:
    """`csv`: the file is named .csv (its first line a header), else a text log."""
    what, line = ("CSV file", "header") if csv else ("file", "a text log, first line")
    return f"cannot tell what this {what} holds ({line}: {first[:120]}); closest formats: {closest}"


def unknown_text(starts: str, closest: str) -> str:
    return (
        f"cannot tell what this file holds: text whose lines start with {starts!r}; closest"
        f" formats: {closest} (or pass --kind/--format)"
    )


def workload_trace(trace: str) -> str:
    return (
        f"{trace}: relplan simulate replays it as workload.trace in a scenario (docs/simulate.md)"
    )


# --- cluster events --------------------------------------------------------------------------


def kube_events(objects: int, occurrences: int) -> str:
    return (
        f"{objects} event objects standing for {occurrences} occurrences (the API server merges"
        " repeats into one object with a count)"
    )


# --- gateways: how the calls were told -------------------------------------------------------


def envoy_request_id_calls() -> str:
    return (
        "calls are grouped by x-request-id: Envoy makes a fresh one per downstream request"
        " unless the caller sends it, so client retries group into one call only when the"
        " caller reuses it (else name the caller's header with call_key)"
    )


def kong_attempts() -> str:
    return (
        "one object per request, one attempt per entry of `tries`; a failed try ends when the"
        " next one starts; execution_id unknown from Kong logs"
    )


def kong_request_id_calls() -> str:
    return (
        "calls are Kong's request.id, fresh per request: retries by the client are not linked"
        " across requests (name the caller's header with call_key)"
    )


def litellm_tries_per_call() -> str:
    return (
        "LiteLLM counts retries and fallbacks per call (metadata.attempted_retries,"
        " attempted_fallbacks), not per attempt: only the last attempt of a call has its times"
        " and deployment"
    )


def litellm_times_utc() -> str:
    return "times without an offset (startTime, endTime) are taken as UTC"


def drill_headers(call: str, attempt: str | None) -> str:
    """`call`, `attempt`: the headers relplan drill sends, found in the log."""
    numbered = f" (attempt number: {attempt})" if attempt else ""
    return (
        f"calls linked by {call}{numbered}: the call-key header relplan drill sends, logged by"
        " relplan lab's nginx; --call-key names another"
    )


def nginx_tries_placed() -> str:
    return (
        "tries placed back to back from the call's start ($msec or $time_local minus"
        " $request_time) by $upstream_response_time; nginx logs no start per try"
    )


def nginx_whole_seconds() -> str:
    return "times from $time_local/$time_iso8601 have whole-second resolution"


def nginx_no_duration() -> str:
    return "no $request_time logged: each request is placed at its end with zero length"


def nginx_no_upstream() -> str:
    return (
        "no $upstream_* logged: one attempt per line, by the status the client got (nginx's own"
        " refusals cannot be told from the upstream's)"
    )


def nginx_lines_are_calls(all_ids: bool) -> str:
    """`all_ids`: every line has a request id."""
    no_ids = (
        ""
        if all_ids
        else " and some lines have no request id: client retry amplification is not measurable"
        " from this source (name the caller's header with call_key)"
    )
    return (
        "each line is one call with its upstream tries; retries by the client (new requests)"
        f" are not linked across lines{no_ids}"
    )


def nginx_json_keys(by_template: bool) -> str:
    """`by_template`: a JSON log_format was given."""
    how = "by the given JSON log_format" if by_template else "by their names"
    return f"keys read as nginx variables {how}"


# --- load tests, metrics, attached files: what the source is ---------------------------------


def guidellm_calls() -> str:
    return (
        "one call per GuideLLM request (no retries); no HTTP status or replica in the report;"
        " records are named by their place in the document (source_row is its first line)"
    )


def bench_perf_counter() -> str:
    return (
        "start_times are time.perf_counter() (monotonic): relative times are exact, the absolute"
        " placement is not"
    )


def bench_no_status() -> str:
    return "no HTTP status, replica or request id in the file"


def no_eof() -> str:
    return "no # EOF line at the end: the file may be truncated"


def scrapes(n: int) -> str:
    return f"{n} scrapes"


def scrape_time_given() -> str:
    return "scrape time from --at"


def nothing_matched() -> str:
    return "no metric name matched; nothing pulled"


def hive_partitions(partitions: Sequence[str]) -> str:
    return f"Hive partitions as columns: {', '.join(partitions)}"


# --- the closing lines of relplan ingest, each (render_ingest) --------------------------------


def nothing_new() -> str:
    return "nothing new ingested"


def source_note(source: int, note: str) -> str:
    return f"note: source {source}: {note}"


def skipped_input(path: str, reason: str) -> str:
    return f"skipped {path}: {reason}"


# --- relplan inspect (render_inspect) --------------------------------------------------------


def inspect_ignored_columns(source: int, columns: Sequence[str]) -> str:
    return f"  source {source}: ignored columns {', '.join(columns)}"


def inspect_source_note(source: int, note: str) -> str:
    return f"  source {source}: {note}"


def no_sources_yet() -> str:
    return "No sources yet: run `relplan ingest PATH`."


def rejected_records(total: int, shown: int) -> str:
    """`shown`: how many of the `total` are listed below."""
    first = f" (first {shown} shown)" if total > shown else ""
    return f"Rejected records: {total}{first}"


def manifest_heading(name: str, source: int) -> str:
    return f"Manifest {name!r} (source {source}):"


# --- files that are no input -----------------------------------------------------------------


def not_a_known_input(what: str) -> str:
    return f"not a known input ({what})"


def not_a_regular_file() -> str:
    return "not a regular file (a FIFO, a device, a socket or a broken link): not opened"


def otel_proto_file() -> str:
    return (
        "an OpenTelemetry Collector file-exporter file in proto format or compressed (a 4-byte"
        " length before each message); relplan reads the exporter's `format: json` output"
        " without compression (docs/formats.md)"
    )


# What a file that is no input is (relplan/ingest/foreign.py tells the kind).
FILE_KINDS = {
    "png": "a PNG image",
    "jpeg": "a JPEG image",
    "gif": "a GIF image",
    "pdf": "a PDF document",
    "zip": "a zip archive (unpack it first)",
    "zstd": "a zstd-compressed file (unpack it first)",
    "bzip2": "a bzip2-compressed file (unpack it first)",
    "xz": "an xz-compressed file (unpack it first)",
    "markdown": "a Markdown document",
    "rst": "a reStructuredText document",
    "html": "an HTML page",
    "svg": "an SVG image",
    "image": "an image",
    "yaml": "a YAML file",
    "toml": "a TOML file (a gateway mapping file is passed with --map)",
    "python": "a Python file",
    "shell": "a shell script",
    "duckdb": "a DuckDB database (a relplan workspace is opened with --db)",
    "text": "a text document",
}


def file_kind(kind: str | None, suffix: str) -> str:
    """`kind`: a key of FILE_KINDS, or None for a file known only by its `suffix` (or none)."""
    if kind is not None:
        return FILE_KINDS[kind]
    return f"a {suffix} file" if suffix else "a file without a known extension"


# --- the tables of `relplan ingest` and `relplan inspect` ------------------------------------


def iso(t: float | None) -> str:
    """UTC time as RFC 3339 to the millisecond, or '-'."""
    if t is None:
        return "-"
    stamp = dt.datetime.fromtimestamp(t, tz=dt.timezone.utc)
    return stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def span(t_min: float | None, t_max: float | None) -> str:
    if t_min is None or t_max is None:
        return "-"
    return f"{iso(t_min)} +{num(t_max - t_min, 1)} s"


class _Source(Protocol):
    """What the Sources table reads of a source (outcome.SourceReport, contents.InspectSource)."""

    @property
    def source_id(self) -> int: ...
    @property
    def path(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def format(self) -> str: ...
    @property
    def rows(self) -> int: ...
    @property
    def rejected(self) -> int: ...
    @property
    def t_min(self) -> float | None: ...
    @property
    def t_max(self) -> float | None: ...


def sources_table(sources: Sequence[_Source], width: int | None = None) -> str:
    """The Sources table of `ingest` and `inspect`; with `width`, when the paths make it wider,
    they move under it, one line each (`source 3: PATH`), and the table keeps the rest."""

    def table(with_path: bool) -> str:
        headers = ["source", "kind", "format", "rows", "rejected", "span (UTC)"]
        rows = [
            [
                str(s.source_id),
                s.kind,
                s.format,
                num(s.rows),
                num(s.rejected),
                span(s.t_min, s.t_max),
            ]
            for s in sources
        ]
        if with_path:
            headers.append("path")
            rows = [[*r, display_path(s.path)] for r, s in zip(rows, sources, strict=True)]
        return format_table(headers, rows, left=(1, 2, 5, 6))

    full = table(True)
    if width is None or max(len(line) for line in full.splitlines()) <= width:
        return full
    return "\n".join(
        [table(False), *(f"  source {s.source_id}: {display_path(s.path)}" for s in sources)]
    )


def render_ingest(rep: IngestReport) -> str:
    """What `relplan ingest` prints: the sources added, their notes, and what was skipped."""
    lines: list[str] = []
    if rep.sources:
        lines.append(sources_table(rep.sources))
    else:
        lines.append(nothing_new())
    for s in rep.sources:
        for note in s.notes:
            lines.append(source_note(source=s.source_id, note=note))
        if s.unknown_columns:
            lines.append(ignored_columns(source=s.source_id, columns=s.unknown_columns))
        if s.rejected:
            lines.append(records_refused(source=s.source_id, n=s.rejected))
    for sk in rep.skipped:
        lines.append(skipped_input(path=sk.path, reason=sk.reason))
    return "\n".join(lines)


WIDTH = 100  # inspect fits a 100-column terminal (issue 23)


def render_inspect(rep: InspectReport) -> str:
    """What `relplan inspect` prints: rows per table, sources, rejects, metrics, manifests."""
    out = [format_table(["table", "rows"], [[t, num(n)] for t, n in rep.tables.items()])]
    out.append("")
    if rep.sources:
        out.append("Sources:")
        out.append(sources_table(rep.sources, WIDTH))
        for s in rep.sources:
            if s.unknown_columns:
                out.append(inspect_ignored_columns(source=s.source_id, columns=s.unknown_columns))
            for note in s.notes:
                out.extend(_fit(inspect_source_note(source=s.source_id, note=note)))
    else:
        out.append(no_sources_yet())
    if rep.rejects_total:
        out.append("")
        out.append(rejected_records(total=rep.rejects_total, shown=len(rep.rejects)))
        for r in rep.rejects:
            out.append(f"  {display_path(r.path)}:{r.line}: {r.reason}")
    if rep.metrics:
        out.append("")
        out.extend(_metrics_table(rep.metrics))
    for m in rep.manifests:
        out.append("")
        out.append(manifest_heading(name=m.name, source=m.source_id))
        fields = {
            "capacity_calls_per_s": m.capacity_calls_per_s,
            "deadline_s": m.deadline_s,
            "delivery_window_s": m.delivery_window_s,
            "overload_phase": m.overload_phase,
            "t0": iso(m.t0) if m.t0 is not None else None,
            "notes": m.notes,
        }
        for k, v in fields.items():
            if v is not None:
                out.append(f"  {k}: {v}")
        if m.phases:
            out.append(
                "  phases: "
                + ", ".join(
                    f"{p['name']}={short(p['start_s'])}:{short(p['end_s'])}" for p in m.phases
                )
            )
    return "\n".join(out)


def _fit(line: str) -> list[str]:
    """A note line, wrapped at WIDTH (continuations indented) when longer."""
    if len(line) <= WIDTH:
        return [line]
    return textwrap.wrap(line, WIDTH, subsequent_indent="      ", break_on_hyphens=False)


def summarise_keys(keys: list[str], budget: int) -> str:
    """Label keys in at most `budget` characters: all of them when they fit, else as many as
    fit and how many there are (`40 keys: block_size, cache_dtype, ...`)."""
    full = ", ".join(keys) or "-"
    if len(full) <= budget:
        return full
    head = f"{len(keys)} keys: "
    shown: list[str] = []
    for k in keys:
        if len(head + ", ".join([*shown, k]) + ", ...") > budget:
            break
        shown.append(k)
    return head + ", ".join([*shown, "..."]) if shown else f"{len(keys)} keys (see --json)"


def _metrics_table(metrics: list[InspectMetric]) -> list[str]:
    """The Metrics table within WIDTH: unchanged when it fits; else one span for all names in
    the heading when they share it, and wide label sets summarised (--json has them all)."""
    spans = [span(m.t_min, m.t_max) for m in metrics]

    def table(keys: list[str], with_span: bool) -> str:
        headers = ["name", "type", "samples", "series", "label keys"]
        rows = [
            [m.name, m.type or "-", num(m.samples), num(m.series), k]
            for m, k in zip(metrics, keys, strict=True)
        ]
        if with_span:
            headers.append("span (UTC)")
            rows = [[*r, sp] for r, sp in zip(rows, spans, strict=True)]
        return format_table(headers, rows, left=(0, 1, 4, 5))

    full = table([", ".join(m.label_keys) or "-" for m in metrics], True)
    if max(len(line) for line in full.splitlines()) <= WIDTH:
        return ["Metrics:", full]
    one_span = len(set(spans)) == 1
    with_span = not one_span
    fixed = table(["-"] * len(metrics), with_span)
    if with_span and max(len(line) for line in fixed.splitlines()) > WIDTH - 20:
        with_span = False  # no room for spans that differ: --json has each name's
        fixed = table(["-"] * len(metrics), False)
    heading = (
        f"Metrics (all {spans[0]}):"
        if one_span
        else "Metrics:"
        if with_span
        else "Metrics (each name's span: --json):"
    )
    others = max(len(line) for line in fixed.splitlines()) - len("label keys")
    budget = max(20, WIDTH - others)
    keys = [summarise_keys(m.label_keys, budget) for m in metrics]
    return [heading, table(keys, with_span)]


def render_formats(rep: FormatsReport) -> str:
    """`relplan inspect --formats`: one row per input format this build reads."""
    return format_table(
        ["format", "kind", "family", "tables", "options", "what"],
        [
            [
                f.name,
                "/".join(f.kinds),
                f.family,
                ", ".join(f.tables) or "-",
                ", ".join(f.options) or "-",
                f.summary,
            ]
            for f in rep.formats
        ],
    )


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        already_stored,
        attached_already,
        repeated_in_ingest,
        already_attached,
        attached_in_place,
        whole_second_twin,
        whole_second_finer,
        refined_times,
        hidden_tries,
        envoy_attempts,
        envoy_upstream_retried,
        litellm_tries_unlogged,
        mapped,
        first_byte_unstored,
        nginx_combined_tail,
        unkeyed_lines,
        bench_run_placed,
        bench_summary,
        guidellm_sampled,
        guidellm_never_sent,
        points_dropped,
        names_matched,
        created_series,
        alias_dropped,
        created_samples,
        old_metric_name,
        scrape_time_from_name,
        scrape_lines,
        untyped_names,
        span_counts,
        aborts_may_miss,
        no_request_span,
        finish_reasons,
        spans_without,
        latencies_nulled,
        request_ids_repeated,
        completion_unstored,
        span_replicas,
        year_read,
        year_advanced,
        late_december_lines,
        log_lines,
        prompt_tokens_logged,
        ids_derived,
        failed_requests,
        admission_rejections,
        access_lines,
        stats_lines,
        stats_fields_unmapped,
        stats_fields_unread,
        engines_aggregated,
        iteration_lines,
        stats_metric_help,
        parquet_columns,
        record_keys,
        document_keys,
        csv_header,
        unknown_parquet,
        map_hint,
        unknown_records,
        unknown_document,
        unknown_csv,
        unknown_text,
        workload_trace,
        kube_events,
        envoy_request_id_calls,
        kong_attempts,
        kong_request_id_calls,
        litellm_tries_per_call,
        litellm_times_utc,
        drill_headers,
        nginx_tries_placed,
        nginx_whole_seconds,
        nginx_no_duration,
        nginx_no_upstream,
        nginx_lines_are_calls,
        nginx_json_keys,
        guidellm_calls,
        bench_perf_counter,
        bench_no_status,
        no_eof,
        scrapes,
        scrape_time_given,
        nothing_matched,
        hive_partitions,
        not_a_known_input,
        not_a_regular_file,
        otel_proto_file,
        file_kind,
    )
}
