"""One `relplan ingest` call: read every input, check it, store it, in ONE transaction.

Flow, all inside one DuckDB transaction: expand the paths; detect each file's kind and
format; stage its records into staging tables (created in the transaction, dropped before
it commits, so never visible); hash the file meanwhile (content already in the workspace, or
repeated in this call, is dropped and reported as skipped); summarise the checks
(queries/ingest/source_summary_*.sql, over the staging tables that hold rows). In fail mode the first refused record (the lowest line of
the first file, in argument order) stops the ingest with `FILE:LINE: reason` and a rollback.
Otherwise the sources rows, the data, the rejects and the manifests are inserted and the
transaction commits. A crash, Ctrl-C or kill before the commit leaves the workspace as it
was: DuckDB discards an uncommitted transaction on recovery.

Fast readers (DuckDB's typed JSON reader; direct inserts of engine Parquet) abort the
transaction when a record does not fit; the call then starts again with `exact` readers,
which name the record. Inputs larger than half the memory limit stage in the workspace file
(inside the transaction) rather than in temp tables: DuckDB then writes compressed row groups
instead of spilling raw ones, a third less time for 10M rows.

Source ids are max(source_id) + 1, 2, ... inside the workspace (one writer per DuckDB file).
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import duckdb

from relplan import sql
from relplan.errors import InputError
from relplan.ingest import foreign, registry
from relplan.ingest.attach import refuse_copied_attached
from relplan.ingest.base import FastPathFailed, IngestOptions, Staged
from relplan.ingest.detect import UnknownContent, detect
from relplan.ingest.files import KNOWN_SUFFIXES, FileInfo, digest, duck_path, expand, peek
from relplan.ingest.outcome import IngestReport, SkippedInput, SourceReport, display_path, say
from relplan.ingest.same_records import refuse_same_records
from relplan.ingest.stage import (
    CHECKS,
    FULL_CHECKS,
    create_checks,
    create_macros,
    create_stage,
    drop_stage,
    filled,
)
from relplan.workspace import memory_limit_bytes

# progress(done_bytes, total_bytes, current_path)
Progress = Callable[[int, int, str], None]
# How often the progress of DuckDB's running query is read for a terminal's bar, seconds.
POLL_S = 0.2

# (table, its insert, the staging table it reads: an empty one inserts nothing, so its insert
# is not run)
_INSERTS = (
    ("attempts", "ingest/insert_attempts", "stage_proxy"),
    ("events", "ingest/insert_events", "stage_engine"),
    ("steps", "ingest/insert_steps", "stage_engine"),
    ("engine_stats", "ingest/insert_engine_stats", "stage_engine"),
    ("request_ids", "ingest/insert_engine_request_ids", "stage_engine"),
    ("metric_samples", "ingest/insert_metric_samples", "stage_metrics"),
)
_SUMMARIES = {
    "stage_proxy": "ingest/source_summary_proxy",
    "stage_engine": "ingest/source_summary_engine",
    "stage_metrics": "ingest/source_summary_metrics",
}


class Session:
    """Staging state of one ingest call on one connection."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        opts: IngestOptions,
        input_bytes: int = 0,
        *,
        macros: bool = True,
    ) -> None:
        self.con = con
        self.opts = opts
        self.staged: list[Staged] = []
        self.skipped: list[SkippedInput] = []
        self.hashes: dict[str, str] = {}
        # staging tables holding rows (as of the last summary) and those with checking views
        self.filled: list[str] = []
        self.checked: set[str] = set()
        row = sql.one(con, "ingest/next_source_id") or {}
        self.next_id = int(row.get("source_id") or 1)
        # The tables of an attachment, when the workspace has one (none is made by an ingest).
        self.attached_files = bool(row.get("attached_files"))
        self.attachments = bool(row.get("attachments"))
        # No source in the workspace before this ingest: every source it will hold is one of
        # this ingest's reports, so the checks that compare sources need no query to know
        # there is nothing to compare (commit: twins, whole seconds, the same records).
        self.fresh = self.next_id == 1
        create_stage(con, on_disk=input_bytes > memory_limit_bytes() // 2, macros=macros)

    def check(self, tables: Iterable[str]) -> None:
        """The checking views over `tables`, each created once in this transaction."""
        new = [t for t in tables if t not in self.checked]
        create_checks(self.con, new)
        self.checked.update(new)

    def new_id(self) -> int:
        sid = self.next_id
        self.next_id += 1
        return sid

    def known(self, sha256: str, path: str) -> str | None:
        """Why this content adds nothing (already stored or repeated), else None."""
        stored = sql.rows(self.con, "ingest/source_by_hash", {"sha256": sha256})
        if stored:
            first = stored[0]
            shown = display_path(first["path"])
            same = shown in (display_path(str(Path(path).resolve())), path)
            return say("already_stored", source=first["source_id"], path=None if same else shown)
        if self.attached_files and (
            hit := sql.rows(self.con, "ingest/attached_by_hash", {"sha256": sha256})
        ):
            return say(
                "attached_already",
                source=hit[0]["source_id"],
                path=display_path(str(hit[0]["path"])),
            )
        if sha256 in self.hashes:
            return say("repeated_in_ingest", path=self.hashes[sha256])
        self.hashes[sha256] = path
        return None


def ingest_files(
    con: duckdb.DuckDBPyConnection,
    paths: Iterable[Path],
    opts: IngestOptions,
    progress: Progress | None = None,
) -> IngestReport:
    paths = list(paths)
    files, dir_skipped = expand(paths)
    # Named on the command line: a file that is no known input is an error. Found in a
    # directory: it is skipped and listed in the report.
    named = {p.resolve() for p in paths if p.is_file()}
    special = say("not_a_regular_file")
    by_name = [
        SkippedInput(path=str(p), reason=foreign.not_an_input(p) if p.is_file() else special)
        for p in dir_skipped
    ]
    if not files:
        listed = "; ".join(f"{s.path}: {s.reason}" for s in by_name[:5])
        raise InputError(
            "no input files found (directories are searched for "
            + ", ".join(KNOWN_SUFFIXES)
            + " files, gzipped or not)"
            + (f"; skipped {listed}" if listed else "")
        )

    def run(session: Session) -> None:
        session.skipped.extend(by_name)
        total = sum(f.stat().st_size for f in files)
        done = 0
        with ThreadPoolExecutor(max_workers=1) as pool:
            for f in files:
                size = f.stat().st_size
                if progress is not None:
                    progress(done, total, str(f))
                with within_file(session.con, progress, done, size, total, str(f)):
                    stage_file(session, f, pool, from_dir=f.resolve() not in named)
                done += size
        if progress is not None:
            progress(total, total, "")

    # gzip: about 8x the stored bytes once inflated.
    input_bytes = sum(f.stat().st_size * (8 if f.suffix == ".gz" else 1) for f in files)
    return in_transaction(con, opts, run, input_bytes, progress)


@contextmanager
def within_file(
    con: duckdb.DuckDBPyConnection,
    progress: Progress | None,
    base: int,
    size: int,
    total: int,
    path: str,
) -> Iterator[None]:
    """Progress inside one file: while it is read, DuckDB's progress of the running query
    (bytes of the file read, for its readers) is polled every POLL_S seconds and reported
    as base + that share of `size`. Never goes backwards when a file takes several queries."""
    if progress is None:
        yield
        return
    sql.run(con, "workspace/enable_progress")
    stop = threading.Event()
    shown = [base]

    def poll() -> None:
        while not stop.wait(POLL_S):
            pct = con.query_progress()
            now = base + int(size * min(max(pct, 0.0), 100.0) / 100.0)
            if now > shown[0]:
                shown[0] = now
                progress(now, total, path)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        stop.set()
        watcher.join()


def in_transaction(
    con: duckdb.DuckDBPyConnection,
    opts: IngestOptions,
    stage: Callable[[Session], None],
    input_bytes: int = 0,
    progress: Progress | None = None,
) -> IngestReport:
    """Stage with `stage` and commit, all in one transaction; once more with exact readers
    if a fast reader gave up. With `progress`, storing is a second pass of the bar (its
    current path ''): Parquet in the canonical types is read only then."""
    registry.check_options(opts)
    # Once per call, outside the transaction: temp macros are this connection's (never in the
    # file), so the exact readers' second try needs none made again.
    create_macros(con)
    for exact in (False, True):
        con.begin()
        try:
            session = Session(con, opts.replace(exact=exact), input_bytes, macros=False)
            stage(session)
            with within_file(con, progress, 0, input_bytes, input_bytes, ""):
                report = commit(session)
            con.commit()
            return report
        except FastPathFailed:
            con.rollback()
            sql.run(con, "ingest/free_insertion_order")
            if exact:
                raise
        except BaseException:
            # A failed write (disk full) may have ended the transaction already: the
            # rollback's own error must not hide the cause.
            with suppress(duckdb.Error):
                con.rollback()
                sql.run(con, "ingest/free_insertion_order")
            raise
    raise AssertionError("unreachable")


def stage_file(
    session: Session, path: Path, pool: ThreadPoolExecutor, *, from_dir: bool = False
) -> None:
    """Stage one file. Its hash and line count are computed in `pool` while DuckDB reads it;
    content already in the workspace is then dropped from staging and reported as skipped.
    A file whose content is no known input is skipped and listed when it was found in a
    directory (`from_dir`), an error when it was named."""
    size, gz, head = peek(path)
    # The words true/false matter only to JSON Lines (the typed reader): looked for only when
    # the content starts as a JSON object does.
    info = FileInfo(path, size, gz, head, pool.submit(digest, path, head.lstrip()[:1] == b"{"))
    # A mapping file (--map) or a log format string (--log-format) says how to read the
    # inputs, unless --format says otherwise.
    fmt = registry.chosen_by(session.opts)
    try:
        det = detect(info, session.opts.kind, fmt)
    except UnknownContent as exc:
        known = foreign.recognise(head)
        if from_dir:
            what = known or exc.what
            session.skipped.append(
                SkippedInput(path=str(path), reason=say("not_a_known_input", what=what))
            )
            return
        if known is not None:
            raise InputError(f"not an incident record relplan ingests: {known}", str(path)) from exc
        raise
    staged = Staged(
        source_id=session.new_id(),
        path=str(path.resolve()),
        kind=det.kind,
        format=det.format,
        sha256="",
    )
    sql.run(session.con, "ingest/stage_source", {"source_id": staged.source_id, "path": str(path)})
    registry.adapters()[det.format].read(session.con, info, staged, session.opts)
    staged.sha256 = info.sha256
    why = session.known(info.sha256, str(path))
    if why is not None:
        _unstage(session.con, staged.source_id)
        session.skipped.append(SkippedInput(path=str(path), reason=why))
        return
    session.staged.append(staged)


def _unstage(con: duckdb.DuckDBPyConnection, source_id: int) -> None:
    for query in (
        "ingest/delete_stage_proxy",
        "ingest/delete_stage_engine",
        "ingest/delete_stage_direct_engine",
        "ingest/delete_stage_metrics",
    ):
        sql.run(con, query, {"source_id": source_id})


def add_staged(session: Session, staged: Staged) -> None:
    """For readers that are not files (a live pull): register an already-staged source."""
    why = session.known(staged.sha256, staged.path)
    if why is not None:
        session.skipped.append(SkippedInput(path=staged.path, reason=why))
        _unstage(session.con, staged.source_id)
        return
    session.staged.append(staged)


def _summaries(session: Session) -> dict[int, dict[str, Any]]:
    """Per source: kept and refused records, the kept ones' time span, the first refused
    record (lowest line) and its reason, over the staging tables that hold rows (a source may
    have rows in several)."""
    session.filled = filled(session.con)
    session.check(session.filled)
    out: dict[int, dict[str, Any]] = {}
    for table in session.filled:
        found = sql.rows(session.con, _SUMMARIES[table])
        if table in FULL_CHECKS and any(r["refused"] for r in found):
            # The quick test refused some record: the table again, with every reason.
            sql.run(session.con, FULL_CHECKS[table])
            found = sql.rows(session.con, _SUMMARIES[table])
        for r in found:
            sid = int(r["source_id"])
            have = out.get(sid)
            if have is None:
                out[sid] = r
                continue
            have["kept"] += r["kept"]
            have["refused"] += r["refused"]
            have["t_min"] = min(
                (t for t in (have["t_min"], r["t_min"]) if t is not None), default=None
            )
            have["t_max"] = max(
                (t for t in (have["t_max"], r["t_max"]) if t is not None), default=None
            )
            line = r["first_bad_line"]
            if line is not None and (
                have["first_bad_line"] is None or line < have["first_bad_line"]
            ):
                have["first_bad_line"] = line
                have["first_bad_reason"] = r["first_bad_reason"]
    return out


def commit(session: Session) -> IngestReport:
    """Check what is staged, then store it and drop the staging tables (the caller's
    transaction commits)."""
    con, opts = session.con, session.opts
    # Only direct sources (fail mode's engine JSONL and Parquet): the staging tables the
    # checks, the summary and the staged inserts read are empty, so none of them runs.
    staged_any = any(not s.direct for s in session.staged)
    summary = _summaries(session) if staged_any else {}
    refused_somewhere = any(r["refused"] for r in summary.values())
    if not opts.skip and refused_somewhere and any(s.direct for s in session.staged):
        # Name the first bad record in argument order: direct sources must be checked too,
        # which the exact readers do.
        raise FastPathFailed("a staged file has a bad record; check the direct ones too")
    if opts.skip and any(
        s.restage_with_raw is not None and summary.get(s.source_id, {}).get("refused")
        for s in session.staged
    ):
        for s in session.staged:
            if s.restage_with_raw is not None and summary.get(s.source_id, {}).get("refused"):
                s.restage_with_raw()
        session.checked.clear()  # made again from what is staged now
        summary = _summaries(session)
    if not opts.skip:
        for s in session.staged:
            row = summary.get(s.source_id)
            if row and row["refused"]:
                shown = display_path(s.path)
                raise InputError(str(row["first_bad_reason"]), shown, int(row["first_bad_line"]))
    reports: list[SourceReport] = []
    now = dt.datetime.now(dt.timezone.utc)
    counts: dict[str, int] = {}
    for s in session.staged:
        if s.direct:
            continue
        row = summary.get(s.source_id, {})
        kept = int(row.get("kept") or 0) + s.extra_rows
        refused = int(row.get("refused") or 0)
        _insert_source(con, s, kept, refused, row.get("t_min"), row.get("t_max"), now)
        reports.append(
            SourceReport(
                source_id=s.source_id,
                path=s.path,
                kind=s.kind,
                format=s.format,
                rows=kept,
                rejected=refused,
                t_min=row.get("t_min"),
                t_max=row.get("t_max"),
                unknown_columns=s.unknown_columns,
                notes=s.notes,
            )
        )
    refused_total = sum(int(r.get("refused") or 0) for r in summary.values())
    if refused_total:
        session.check(CHECKS)  # the rejects and the kept rows read every checking view
        sql.run(con, "ingest/engine_rows_kept")
        sql.run(con, "ingest/metrics_rows_kept")
        # Rejects first: the checks read the workspace (attempt numbers already stored),
        # so they must run before this ingest's own attempts are in it.
        counts["rejects"] = sql.affected(con, "ingest/insert_rejects")
    elif staged_any:
        if "stage_engine" in session.filled:
            sql.run(con, "ingest/engine_rows_all")
        if "stage_metrics" in session.filled:
            sql.run(con, "ingest/metrics_rows_all")
    for table, name, source in _INSERTS if staged_any else ():
        if source not in session.filled:
            continue
        n = sql.affected(con, name)
        if n:
            counts[table] = n
    for s in session.staged:
        if s.direct:
            reports.append(_insert_direct(con, s, counts, now))
    for s in session.staged:
        for fn in s.finish:
            fn(con)
    if (sql.one(con, "ingest/any_ids_to_join") or {}).get("found"):
        sql.run(con, "ingest/join_request_ids")  # gateway X-Request-Ids -> vLLM executions
    _drop_whole_second_twins(con, reports, counts, fresh=session.fresh)
    _refine_whole_seconds(con, reports, fresh=session.fresh)
    refuse_same_records(con, reports, fresh=session.fresh)
    refuse_copied_attached(con, reports, attachments=session.attachments)
    drop_stage(con)
    reports.sort(key=lambda r: r.source_id)
    return IngestReport(sources=reports, skipped=session.skipped, rows_by_table=counts)


def _drop_whole_second_twins(
    con: duckdb.DuckDBPyConnection,
    reports: list[SourceReport],
    counts: dict[str, int],
    *,
    fresh: bool = False,
) -> None:
    """A gateway log that tells, in whole seconds, the same requests as a finer log of the
    same server (nginx's `combined` beside its `$msec` JSON log) keeps its source row and
    drops its attempts, so each request is counted once, at the finer time. `fresh`: the
    workspace held no source before this ingest, so a pair is two of `reports`."""
    ids = [r.source_id for r in reports if r.kind == "proxy"]
    if not ids:
        return
    mine = {r.source_id: r for r in reports}
    dropped: set[int] = set()
    # Formats one server may write twice for the same requests (Adapter.server).
    servers: dict[str, list[str]] = {}
    for a in registry.adapters().values():
        if a.server:
            servers.setdefault(a.server, []).append(a.name)
    twins = [
        t
        for formats in servers.values()
        if len(formats) > 1 and (not fresh or sum(r.format in formats for r in reports) > 1)
        for t in sql.rows(con, "ingest/whole_second_twins", {"formats": formats, "sources": ids})
    ]
    for t in twins:
        coarse, fine = int(t["coarse"]), int(t["fine"])
        if coarse in dropped or fine in dropped:
            continue
        dropped.add(coarse)
        n = sql.affected(con, "ingest/drop_source_attempts", {"source_id": coarse})
        sql.run(con, "ingest/set_source_rows", {"source_id": coarse, "rows": 0})
        note = say("whole_second_twin", n=n, fine=fine, matched=int(t["matched"]))
        sql.run(con, "ingest/append_source_note", {"source_id": coarse, "note": note})
        if coarse in mine:
            mine[coarse].notes.append(note)
            mine[coarse].rows = 0
            counts["attempts"] = counts.get("attempts", 0) - n
        if fine in mine:
            mine[fine].notes.append(say("whole_second_finer", coarse=coarse))


def _refine_whole_seconds(
    con: duckdb.DuckDBPyConnection, reports: list[SourceReport], *, fresh: bool = False
) -> None:
    """Whole-second event times (vLLM's log) take a finer source's time of the same event
    inside that second; the note goes on the source of this ingest the pair involves.
    `fresh`: the workspace held no source before this ingest (its sources are `reports`)."""
    formats = [a.name for a in registry.adapters().values() if a.whole_seconds]
    ids = [r.source_id for r in reports]
    if not formats or not ids:
        return
    if fresh:
        if not any(r.format in formats for r in reports):
            return
    elif not (sql.one(con, "ingest/any_source_of_formats", {"formats": formats}) or {}).get(
        "found"
    ):
        return
    sql.run(con, "ingest/whole_second_witnesses", {"formats": formats, "sources": ids})
    counts = sql.rows(con, "ingest/refined_counts")
    if counts:
        sql.run(con, "ingest/refine_whole_seconds")
    sql.run(con, "ingest/drop_refined")
    mine = {r.source_id: r for r in reports}
    for c in counts:
        coarse, fine = int(c["coarse_source"]), int(c["fine_source"])
        note = say(
            "refined_times",
            n=c["refined"],
            coarse=coarse,
            fine=fine,
            by_engine=c["by_kind"] == "engine",
        )
        where = mine.get(coarse) or mine[fine]
        where.notes.append(note)
        sql.run(con, "ingest/append_source_note", {"source_id": where.source_id, "note": note})


def _insert_direct(
    con: duckdb.DuckDBPyConnection, s: Staged, counts: dict[str, int], now: dt.datetime
) -> SourceReport:
    kept = 0
    given = {"path": duck_path(s.path), "source_id": s.source_id}
    for name in s.direct:
        table = name.removeprefix("ingest/direct_").removeprefix("parquet_").removeprefix("jsonl_")
        params = {k: v for k, v in given.items() if k in sql.load(name).params}
        try:
            n = sql.affected(con, name, params)
        except duckdb.Error as exc:
            raise FastPathFailed(str(exc)) from exc
        if table != "request_ids":  # a second row of an arrived event, not a record
            kept += n
        if n:
            counts[table] = counts.get(table, 0) + n
    span = sql.one(con, "ingest/direct_span", {"source_id": s.source_id}) or {}
    t_min, t_max = span.get("t_min"), span.get("t_max")
    _insert_source(con, s, kept, 0, t_min, t_max, now)
    return SourceReport(
        source_id=s.source_id,
        path=s.path,
        kind=s.kind,
        format=s.format,
        rows=kept,
        rejected=0,
        t_min=t_min,
        t_max=t_max,
        unknown_columns=s.unknown_columns,
        notes=s.notes,
    )


def _insert_source(
    con: duckdb.DuckDBPyConnection,
    s: Staged,
    kept: int,
    refused: int,
    t_min: float | None,
    t_max: float | None,
    now: dt.datetime,
) -> None:
    sql.run(
        con,
        "ingest/insert_source",
        {
            "source_id": s.source_id,
            "path": s.path,
            "kind": s.kind,
            "format": s.format,
            "sha256": s.sha256,
            "rows": kept,
            "rejected": refused,
            "t_min": t_min,
            "t_max": t_max,
            "unknown_columns": s.unknown_columns,
            "notes": s.notes,
            "ingested_at": now,
        },
    )
