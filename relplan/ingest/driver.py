"""One `relplan ingest` call: stage every input, check it, store it in ONE transaction.

Flow: expand the paths; hash each file (a file whose content is already in the workspace, or
repeated in this call, adds nothing and is reported as skipped); detect its kind and format;
stage its records into temp tables (no workspace writes yet); summarise the checks
(queries/ingest_source_summary.sql). In fail mode the first refused record (the lowest line of
the first file, in argument order) stops the ingest with `FILE:LINE: reason`. Otherwise one
transaction inserts the sources rows, the data, the rejects and the manifests, and commits.
A crash, Ctrl-C or kill before the commit leaves the workspace as it was: staging lives in
temp tables, and DuckDB discards an uncommitted transaction on recovery.

Source ids are max(source_id) + 1, 2, ... inside the workspace (one writer per DuckDB file).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb

from relplan import sql
from relplan.errors import InputError
from relplan.ingest import canonical, envoy, manifest, metrics_text, promjson, vllm_log
from relplan.ingest.base import IngestOptions, Staged
from relplan.ingest.detect import detect
from relplan.ingest.files import FileInfo, digest, expand, peek
from relplan.ingest.report import IngestReport, SkippedInput, SourceReport
from relplan.ingest.stage import create_stage

# progress(done_bytes, total_bytes, current_path)
Progress = Callable[[int, int, str], None]

Reader = Callable[[duckdb.DuckDBPyConnection, FileInfo, Staged, IngestOptions], None]

READERS: dict[str, Reader] = {
    "jsonl": canonical.stage_jsonl,
    "csv": canonical.stage_table,
    "parquet": canonical.stage_table,
    "openmetrics": metrics_text.stage_openmetrics,
    "scrape": metrics_text.stage_scrape,
    "query_range": promjson.stage_query_range_file,
    "vllm_log": vllm_log.stage_vllm_log,
    "envoy": envoy.stage_envoy,
    "run_json": manifest.stage_manifest,
}

_INSERTS = (
    ("attempts", "ingest_insert_attempts"),
    ("events", "ingest_insert_events"),
    ("steps", "ingest_insert_steps"),
    ("engine_stats", "ingest_insert_engine_stats"),
    ("metric_samples", "ingest_insert_metric_samples"),
)


class Session:
    """Staging state of one ingest call on one connection."""

    def __init__(self, con: duckdb.DuckDBPyConnection, opts: IngestOptions) -> None:
        self.con = con
        self.opts = opts
        self.staged: list[Staged] = []
        self.skipped: list[SkippedInput] = []
        self.hashes: dict[str, str] = {}
        row = con.execute(sql.load("ingest_next_source_id").text).fetchone()
        self.next_id = int(row[0]) if row else 1
        create_stage(con)

    def new_id(self) -> int:
        sid = self.next_id
        self.next_id += 1
        return sid

    def known(self, sha256: str, path: str) -> str | None:
        """Why this content adds nothing (already stored or repeated), else None."""
        q = sql.load("ingest_source_by_hash")
        row = self.con.execute(q.text, q.bind({"sha256": sha256})).fetchone()
        if row is not None:
            return f"same content as {row[1]} (source {row[0]}), already in the workspace"
        if sha256 in self.hashes:
            return f"same content as {self.hashes[sha256]} earlier in this ingest"
        self.hashes[sha256] = path
        return None


def ingest_files(
    con: duckdb.DuckDBPyConnection,
    paths: Iterable[Path],
    opts: IngestOptions,
    progress: Progress | None = None,
) -> IngestReport:
    files, dir_skipped = expand(list(paths))
    if not files:
        raise InputError("no input files found (directories are searched for .jsonl, .csv,"
                         " .parquet, .json, .txt, .om, .prom, .log files)")
    session = Session(con, opts)
    for p in dir_skipped:
        session.skipped.append(SkippedInput(path=str(p), reason="not a known input file type"))
    total = sum(f.stat().st_size for f in files)
    done = 0
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            for f in files:
                if progress is not None:
                    progress(done, total, str(f))
                stage_file(session, f, pool)
                done += f.stat().st_size
        if progress is not None:
            progress(total, total, "")
        return commit(session)
    finally:
        create_stage(con)  # empty the staging tables


def stage_file(session: Session, path: Path, pool: ThreadPoolExecutor) -> None:
    """Stage one file. Its hash and line count are computed in `pool` while DuckDB reads it;
    content already in the workspace is then dropped from staging and reported as skipped."""
    size, gz, head = peek(path)
    info = FileInfo(path, size, gz, head, pool.submit(digest, path))
    det = detect(info, session.opts.kind, session.opts.fmt)
    staged = Staged(
        source_id=session.new_id(), path=str(path.resolve()), kind=det.kind, format=det.format,
        sha256="",
    )
    q = sql.load("ingest_stage_source")
    session.con.execute(q.text, q.bind({"source_id": staged.source_id, "path": str(path)}))
    READERS[det.format](session.con, info, staged, session.opts)
    staged.sha256 = info.sha256
    why = session.known(info.sha256, str(path))
    if why is not None:
        _unstage(session.con, staged.source_id)
        session.skipped.append(SkippedInput(path=str(path), reason=why))
        return
    session.staged.append(staged)


def _unstage(con: duckdb.DuckDBPyConnection, source_id: int) -> None:
    for kind in ("proxy", "engine", "metrics"):
        q = sql.load(f"ingest_delete_stage_{kind}")
        con.execute(q.text, q.bind({"source_id": source_id}))


def add_staged(session: Session, staged: Staged) -> None:
    """For readers that are not files (a live pull): register an already-staged source."""
    why = session.known(staged.sha256, staged.path)
    if why is not None:
        session.skipped.append(SkippedInput(path=staged.path, reason=why))
        _unstage(session.con, staged.source_id)
        return
    session.staged.append(staged)


def _summaries(con: duckdb.DuckDBPyConnection) -> dict[int, dict[str, Any]]:
    cur = con.execute(sql.load("ingest_source_summary").text)
    names = [d[0] for d in cur.description or []]
    return {int(r[0]): dict(zip(names, r, strict=True)) for r in cur.fetchall()}


class _DirectRefused(Exception):
    """A direct Parquet insert refused a record (or could not convert one)."""


def commit(session: Session) -> IngestReport:
    """Store everything staged in one transaction. Direct (unstaged) Parquet sources that
    refuse a record are staged after the rollback, so the next attempt names the record."""
    try:
        return _commit(session)
    except _DirectRefused:
        _stage_direct_sources(session)
        return _commit(session)


def _stage_direct_sources(session: Session) -> None:
    for s in session.staged:
        if s.direct and s.stage_instead is not None:
            s.direct = []
            s.stage_instead()


def _commit(session: Session) -> IngestReport:
    con, opts = session.con, session.opts
    summary = _summaries(con)
    refused_somewhere = any(r["refused"] for r in summary.values())
    if not opts.skip and refused_somewhere and any(s.direct for s in session.staged):
        # Name the first bad record in argument order: direct sources must be checked too.
        _stage_direct_sources(session)
        summary = _summaries(con)
    if opts.skip and any(
        s.restage_with_raw is not None and summary.get(s.source_id, {}).get("refused")
        for s in session.staged
    ):
        for s in session.staged:
            if s.restage_with_raw is not None and summary.get(s.source_id, {}).get("refused"):
                s.restage_with_raw()
        summary = _summaries(con)
    if not opts.skip:
        for s in session.staged:
            row = summary.get(s.source_id)
            if row and row["refused"]:
                shown = _display_path(s.path)
                raise InputError(str(row["first_bad_reason"]), shown, int(row["first_bad_line"]))
    reports: list[SourceReport] = []
    now = dt.datetime.now(dt.timezone.utc)
    counts: dict[str, int] = {}
    con.execute("begin transaction")
    try:
        for s in session.staged:
            if s.direct:
                continue
            row = summary.get(s.source_id, {})
            kept = int(row.get("kept") or 0) + s.extra_rows
            refused = int(row.get("refused") or 0)
            q = sql.load("ingest_insert_source")
            con.execute(q.text, q.bind({
                "source_id": s.source_id, "path": s.path, "kind": s.kind, "format": s.format,
                "sha256": s.sha256, "rows": kept, "rejected": refused,
                "t_min": row.get("t_min"), "t_max": row.get("t_max"),
                "unknown_columns": s.unknown_columns, "notes": s.notes, "ingested_at": now,
            }))
            reports.append(SourceReport(
                source_id=s.source_id, path=s.path, kind=s.kind, format=s.format, rows=kept,
                rejected=refused, t_min=row.get("t_min"), t_max=row.get("t_max"),
                unknown_columns=s.unknown_columns, notes=s.notes,
            ))
        refused_total = sum(int(r.get("refused") or 0) for r in summary.values())
        variant = "kept" if refused_total else "all"
        con.execute(sql.load(f"ingest_engine_rows_{variant}").text)
        con.execute(sql.load(f"ingest_metrics_rows_{variant}").text)
        if refused_total:
            # Rejects first: the checks read the workspace (attempt numbers already stored),
            # so they must run before this ingest's own attempts are in it.
            res = con.execute(sql.load("ingest_insert_rejects").text).fetchone()
            counts["rejects"] = int(res[0]) if res else 0
        for table, name in _INSERTS:
            res = con.execute(sql.load(name).text).fetchone()
            if res and res[0]:
                counts[table] = int(res[0])
        for s in session.staged:
            if s.direct:
                reports.append(_insert_direct(con, s, counts, now))
        for s in session.staged:
            for fn in s.finish:
                fn(con)
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise
    return IngestReport(sources=reports, skipped=session.skipped, rows_by_table=counts)


def _insert_direct(
    con: duckdb.DuckDBPyConnection, s: Staged, counts: dict[str, int], now: dt.datetime
) -> SourceReport:
    kept = 0
    for name in s.direct:
        table = name.removeprefix("ingest_direct_parquet_")
        q = sql.load(name)
        try:
            res = con.execute(q.text, q.bind({"path": s.path, "source_id": s.source_id})).fetchone()
        except duckdb.Error as exc:
            raise _DirectRefused(str(exc)) from exc
        n = int(res[0]) if res else 0
        kept += n
        if n:
            counts[table] = counts.get(table, 0) + n
    qs = sql.load("ingest_direct_span")
    span = con.execute(qs.text, qs.bind({"source_id": s.source_id})).fetchone() or (None, None)
    q = sql.load("ingest_insert_source")
    con.execute(q.text, q.bind({
        "source_id": s.source_id, "path": s.path, "kind": s.kind, "format": s.format,
        "sha256": s.sha256, "rows": kept, "rejected": 0, "t_min": span[0], "t_max": span[1],
        "unknown_columns": s.unknown_columns, "notes": s.notes, "ingested_at": now,
    }))
    return SourceReport(
        source_id=s.source_id, path=s.path, kind=s.kind, format=s.format, rows=kept, rejected=0,
        t_min=span[0], t_max=span[1], unknown_columns=s.unknown_columns, notes=s.notes,
    )


def _display_path(path: str) -> str:
    """The path as the user is likely to recognise it: relative to the cwd when inside it."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
