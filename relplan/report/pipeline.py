"""`relplan report` from end to end: inputs -> workspace -> analyses -> page and files.

Flow (compute, then render): a workspace -> `relplan.analyses.analyze` (every registered
analysis) and `relplan.workspace.facts.workspace_facts` -> `build.build_report_data` (the
`ReportData` model) ->
`charts.chart_specs` (Vega-Lite) -> `html.render_html` (one self-contained page) -> files
(`export.py`, the only writer).

PATH may be a workspace file (a DuckDB file, recognised by its header), a directory of raw
inputs or a single raw input file. Raw inputs are ingested first, through `relplan.ingest`,
into `--db FILE` when given (kept, re-usable), else into the report's workspace cache
(relplan/report/workspace_cache.py: a later report of the same inputs opens it instead of
ingesting), else (the cache off or not writable) into a temporary workspace file; a
report never writes beside the inputs. For a workspace the workspace cache keeps, the
analyses' result is kept too (relplan/report/analysis_cache.py): a later report with the same
analysis flags reads it instead of running the analyses. Without PATH the workspace is
`--db`, `$RELPLAN_DB` or `./relplan.duckdb`.

The default output is `reports/<run name>.html`, the run name being run.json's `name`, else
the input's file or directory name, reduced to a safe file name.
"""

from __future__ import annotations

import importlib
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, suppress
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Protocol

import duckdb
from pydantic import BaseModel

from relplan import __version__, workspace
from relplan.analyses import AnalyzeOptions, analyze
from relplan.errors import InputError, NoDataError, UsageError
from relplan.ingest import IngestOptions, ingest_paths
from relplan.report import analysis_cache, workspace_cache
from relplan.report import cache as page_cache
from relplan.report.build import build_report_data
from relplan.report.data import ReportData
from relplan.report.export import export_images, write_atomic
from relplan.report.files import (
    REPORTS_DIR,
    ReportFiles,
    check_targets,
    default_out,
    is_workspace_file,
    run_name_of,
)
from relplan.report.html import render_html
from relplan.report.section import EXTRA_SECTIONS, report_sections
from relplan.workspace.facts import workspace_facts

__all__ = [
    "REPORTS_DIR",
    "ReportFiles",
    "collect_report_data",
    "default_out",
    "is_workspace_file",
    "make_report",
    "render_page",
]


class ChartDrawer(Protocol):
    """Draws the charts elsewhere once told to prepare (relplan/report/chart_worker.py)."""

    @property
    def prepared(self) -> bool: ...

    def prepare(self) -> None: ...

    def specs(self, data: ReportData) -> dict[str, dict[str, Any]]: ...


# An extra section's computation: (workspace, the analyses' options) -> its result model, or
# what gives it once called (work started before the analyses, finished after them).
ExtraSection = Callable[
    [duckdb.DuckDBPyConnection, AnalyzeOptions], BaseModel | Callable[[], BaseModel]
]


def collect_report_data(
    con: duckdb.DuckDBPyConnection,
    opts: AnalyzeOptions,
    *,
    fallback_name: str,
    generated_at: datetime,
    extras: Mapping[str, ExtraSection] | None = None,
    workspace_key: str | None = None,
    charts: ChartDrawer | None = None,
    while_waiting: Callable[[ReportData], object] | None = None,
) -> ReportData:
    """Run the analyses on a workspace, read its facts, and arrange both into the report.

    `extras` computes the extra sections (relplan/report/section.py, EXTRA_SECTIONS) from the
    same workspace; one that raises NoDataError is listed with its reason. They start before
    the analyses: one that returns a callable (the what-if replay, whose workers replay while
    the analyses run here) is finished after them. `workspace_key` names a workspace the
    report's workspace cache keeps: the analyses' result is then read from (or kept in) the
    analysis cache (relplan/report/analysis_cache.py). `charts`, a chart worker
    (relplan/report/chart_worker.py), is told to prepare when no extra section is left to
    finish after the analyses and the analyses run: it then imports Altair beside them and
    draws the charts (`make_report`), and this process does not import Altair.
    `while_waiting`, when an extra section is left to finish, is called first with the
    report's data without it (the analyses' sections all there), to draw their charts."""
    started: dict[str, BaseModel | Callable[[], BaseModel] | str] = {}
    for name, compute in (extras or {}).items():
        try:
            started[name] = compute(con, opts)
        except NoDataError as exc:
            started[name] = str(exc)
    key = analysis_cache.key_for(workspace_key, opts)
    result = None if key is None else analysis_cache.load(key)
    # The worker imports what drawing needs beside the analyses; with nothing to run (the
    # analyses from their cache) that import would only be waited for, so the charts are
    # drawn here unless it was told to prepare already.
    elsewhere = (
        charts is not None
        and all(isinstance(begun, (BaseModel, str)) for begun in started.values())
        and (result is None or charts.prepared)
    )
    if charts is not None and elsewhere:
        charts.prepare()
    if result is None:
        result = analyze(con, opts)
        if key is not None:
            analysis_cache.save(key, result)
    if not elsewhere:
        _import_altair_meanwhile()
    facts = workspace_facts(con, fallback_name)
    computed: dict[str, BaseModel | str] = {
        name: begun for name, begun in started.items() if isinstance(begun, (BaseModel, str))
    }
    if while_waiting is not None and len(computed) < len(started):
        while_waiting(build_report_data(result, facts, generated_at, __version__, computed))
    for name, begun in started.items():
        if isinstance(begun, (BaseModel, str)):
            continue  # in `computed` already
        try:
            computed[name] = begun()
        except NoDataError as exc:
            computed[name] = str(exc)
    return build_report_data(result, facts, generated_at, __version__, computed)


def _analyses_charts(data: ReportData) -> dict[str, dict[str, Any]]:
    """The charts of the analyses' sections (not the extra sections') of `data`."""
    from relplan.report.charts import chart_specs

    return chart_specs(data, only=[a.name for a, _ in report_sections()])


def render_page(data: ReportData) -> str:
    from relplan.report.charts import chart_specs

    return render_html(data, chart_specs(data))


def _import_altair_meanwhile() -> threading.Thread:
    """Import Altair (about a third of a CPU second, all Python) on a thread of its own while
    this one reads the workspace's facts and finishes the extra sections; the charts, which
    need it, wait for it (the import's lock). Started once the analyses are done, not before
    the ingest: their DuckDB queries set the report process's peak memory, and Altair's 30 MB
    then stayed resident under it (docs/benchmarks.md, "The cold report, fourth wave"). Altair imports nothing of relplan's, so the two threads never wait
    on each other's modules; a failed import is left for the charts to raise."""

    def load() -> None:
        with suppress(ImportError):
            importlib.import_module("altair")

    thread = threading.Thread(target=load, name="relplan-import-altair", daemon=True)
    thread.start()
    return thread


@contextmanager
def _open_inputs(
    path: Path | None,
    db: Path | None,
    inputs: IngestOptions,
    on_new_inputs: Callable[[], object] | None = None,
    ingested: Callable[[], Path | None] | None = None,
) -> Iterator[tuple[duckdb.DuckDBPyConnection, str, str | None]]:
    """A connection on the workspace to report on, a fallback run name, and the workspace
    cache's key when the workspace is one it keeps (else None); raw inputs are ingested with
    `inputs` (the input flags). `on_new_inputs` is called before the ingest of inputs the
    workspace cache does not hold; `ingested`, when given, is asked first for the workspace
    another process ingested them into (None: ingested here)."""
    if path is None:
        ws = workspace.resolve_db(db)
        with workspace.open_workspace(ws, read_only=True) as con:
            yield con, ws.stem, None
        return
    if not path.exists():
        raise InputError("no such file or directory", str(path))
    if path.is_file() and is_workspace_file(path):
        if db is not None:
            raise UsageError("--db", f"give a workspace as PATH or with --db, not both ({path})")
        with workspace.open_workspace(path, read_only=True) as con:
            yield con, path.stem, None
        return
    name = run_name_of(path)
    # relplan.ingest.ingest_paths imports the ingest's modules when it runs: a report that
    # opens a workspace, or the one the workspace cache keeps, ingests nothing (0.012 CPU s).
    if db is not None:
        ingest_paths(db, [path], inputs)
        # Read back read-only, as a kept workspace is: the report only reads, what the ingest
        # held in memory is let go, and the what-if's workers may open the same file.
        with workspace.open_workspace(db, read_only=True) as con:
            yield con, name, None
        return
    key = workspace_cache.key_of(path, inputs)
    kept = None if key is None or ingested is None else ingested()
    if key is not None and kept is None:
        kept = workspace_cache.workspace_for(path, inputs, key, on_new_inputs)
    if key is not None and kept is not None:
        try:
            con = workspace.connect(kept, read_only=True)
        except (duckdb.Error, InputError, NoDataError, OSError):
            # Removed since it was checked, or unreadable for this DuckDB: ingested into
            # memory below, and into the cache again by the next report.
            workspace_cache.forget(key)
        else:
            try:
                yield con, name, key
            finally:
                con.close()
            return
    # A workspace file in a temporary folder rather than one in memory: DuckDB compresses
    # what it checkpoints to a file (the sample's workspace file is 6 MB; ingested in memory,
    # the process holds about 150 MB more), so the report's peak is 20-30 MB lower, for
    # 0.1-0.3 CPU s more on the sample (bench/report_profile.py, --memory).
    with tempfile.TemporaryDirectory(prefix="relplan-report-") as tmp:
        scratch = Path(tmp) / "inputs.duckdb"
        ingest_paths(scratch, [path], inputs)
        with workspace.open_workspace(scratch, read_only=True) as con:
            yield con, name, None


def make_report(
    path: Path | None,
    *,
    db: Path | None = None,
    out: Path | None = None,
    png_dir: Path | None = None,
    svg_dir: Path | None = None,
    json_path: Path | None = None,
    opts: AnalyzeOptions | None = None,
    generated_at: datetime | None = None,
    inputs: IngestOptions | None = None,
    extras: Mapping[str, ExtraSection] | None = None,
    cache_key: str | None = None,
    on_new_inputs: Callable[[], object] | None = None,
    ingested: Callable[[], Path | None] | None = None,
    charts: ChartDrawer | None = None,
) -> ReportFiles:
    """Ingest if needed, analyse, render; write the page (and images, JSON). Returns paths.

    `on_new_inputs` is called before raw inputs the workspace cache does not hold are
    ingested into it (the what-if's workers then import what they need meanwhile: the
    what-if of new inputs is not in its cache either); `ingested` gives the workspace cache's
    file of new inputs that another process ingested (relplan/report/ingest_worker.py; None
    when it did not, and they are ingested here). `charts`: the chart worker `relplan report`
    forked (relplan/report/chart_worker.py), which draws the charts when it was told to
    prepare (`collect_report_data`); without one they are drawn here.

    With `cache_key` (relplan/report/cache.py, `key_for`), the page and the data JSON are
    rendered with the cache's placeholder time, kept under that key, and written stamped with
    `generated_at`: the same texts a later hit writes."""
    when = generated_at or datetime.now(timezone.utc).replace(microsecond=0)
    check_targets(out, png_dir, svg_dir)
    opened = _open_inputs(path, db, inputs or IngestOptions(), on_new_inputs, ingested)
    # The analyses' charts, drawn here while an extra section (the what-if's replay) is
    # still running on other processes; the extra sections' charts once they are done.
    early: dict[str, dict[str, Any]] = {}
    with opened as (con, fallback, ws_key):
        data = collect_report_data(
            con,
            opts or AnalyzeOptions(),
            fallback_name=fallback,
            generated_at=when,
            extras=extras,
            workspace_key=ws_key,
            charts=charts,
            while_waiting=lambda partial: early.update(_analyses_charts(partial)),
        )
    if early:
        from relplan.report.charts import chart_specs

        specs = {**early, **chart_specs(data, only=EXTRA_SECTIONS)}
    elif charts is not None:
        specs = charts.specs(data)
    else:
        from relplan.report.charts import chart_specs

        specs = chart_specs(data)
    if cache_key is None:
        page, data_json = render_html(data, specs), data.model_dump_json(indent=2) + "\n"
    else:
        placeholder = data.model_copy(
            update={"footer": data.footer.model_copy(update={"generated_at": page_cache.SENTINEL})}
        )
        kept = page_cache.CachedReport(
            run_name=data.run_name,
            html=render_html(placeholder, specs),
            data_json=placeholder.model_dump_json(indent=2) + "\n",
        )
        page_cache.save(cache_key, kept)
        page, data_json = page_cache.stamp(kept, when)
    target = out or default_out(data.run_name)
    files = ReportFiles(html=write_atomic(target, page), html_bytes=len(page.encode("utf-8")))
    if png_dir is not None:
        files.images += export_images(specs, png_dir, "png")
    if svg_dir is not None:
        files.images += export_images(specs, svg_dir, "svg")
    if json_path is not None:
        files.json = write_atomic(json_path, data_json)
    return files
