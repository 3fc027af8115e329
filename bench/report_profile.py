"""Where a computed `relplan report` spends its time, in one process: per stage and per query.

    python bench/report_profile.py [PATH] [--runs 3] [--no-whatif] [--top 25]

PATH is a directory of raw inputs (default sample_data/pulse-retry-cancel). Each run does what
`relplan report PATH` does on a page-cache miss without the workspace cache (so without the
analysis cache either: relplan/report/analysis_cache.py), stage by stage: the ingest into a
workspace file in a temporary folder (as relplan/report/pipeline.py does; `--memory`: into a
workspace in memory, as it did before; PATH a workspace file: no ingest, it is opened
read-only, as the report's "computed" figure opens the workspace its cache kept), the
analyses (and each analysis), the workspace facts,
the what-if section (read from its cache in RELPLAN_CACHE_DIR when present, else replayed and
kept), the data model, the chart specs and the page, with the peak RSS after each. Every query
run through `relplan.sql` is timed too, wall and CPU (the process's CPU: DuckDB's threads
included), the most costly first. Figures are means per run over the runs after the first
(which pays the lazy imports; with --runs 1, that run). Not a test: timings vary with the
machine's load; compare figures from the same run.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _now() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


class Clock:
    def __init__(self) -> None:
        self.stages: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.peak: dict[str, float] = {}
        self.queries: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.depth = 0

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        w, c = _now()
        yield
        w2, c2 = _now()
        self.stages[name].append((w2 - w, c2 - c))
        self.peak[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(con: Any, name: str, params: Any = None) -> Any:
            if self.depth:
                return fn(con, name, params)
            self.depth += 1
            w, c = _now()
            try:
                return fn(con, name, params)
            finally:
                w2, c2 = _now()
                self.depth -= 1
                self.queries[name].append((w2 - w, c2 - c))

        return timed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", nargs="?", default=ROOT / "sample_data/pulse-retry-cancel", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-whatif", action="store_true")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--memory", action="store_true", help="ingest into a workspace in memory")
    args = ap.parse_args()
    clock = Clock()
    w0, c0 = _now()
    from relplan import __version__, sql, workspace
    from relplan.analyses import AnalyzeOptions, analyze
    from relplan.ingest import IngestOptions
    from relplan.ingest.driver import ingest_files
    from relplan.report.build import build_report_data
    from relplan.report.charts import chart_specs
    from relplan.report.files import is_workspace_file
    from relplan.report.html import render_html
    from relplan.workspace.facts import workspace_facts

    w1, c1 = _now()
    mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    from dataclasses import replace

    from relplan.analyses import registry

    def staged(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(inputs: Any) -> Any:
            with clock.stage(f"  analysis {name}"):
                return fn(inputs)

        return run

    registry.ANALYSES = tuple(replace(a, run=staged(a.name, a.run)) for a in registry.ANALYSES)
    for fn in ("run", "rows", "one", "arrow", "affected", "columns"):
        setattr(sql, fn, clock.wrap(getattr(sql, fn)))
    kept = args.path.is_file() and is_workspace_file(args.path)
    for i in range(args.runs):
        first = i == 0
        with (
            tempfile.TemporaryDirectory(prefix="relplan-profile-") as tmp,
            clock.stage("total"),
        ):
            if kept:
                opened = workspace.open_workspace(args.path, read_only=True)
            elif args.memory:
                opened = workspace.scratch_workspace(Path(tmp))
            else:
                opened = workspace.open_workspace(Path(tmp) / "inputs.duckdb")
            with opened as con:
                if not kept:
                    with clock.stage("ingest"):
                        ingest_files(con, [args.path], IngestOptions())
                opts = AnalyzeOptions()
                with clock.stage("analyses"):
                    result = analyze(con, opts)
                with clock.stage("facts"):
                    facts = workspace_facts(con, args.path.stem if kept else args.path.name)
                computed: dict[str, Any] = {}
                if not args.no_whatif:
                    with clock.stage("whatif"):
                        from relplan.whatif.for_report import report_whatif

                        computed["whatif"] = report_whatif(con, opts)()
            with clock.stage("data model"):
                data = build_report_data(
                    result, facts, datetime.now(timezone.utc), __version__, computed
                )
            with clock.stage("chart specs"):
                specs = chart_specs(data)
            with clock.stage("page"):
                render_html(data, specs)
        if first and args.runs > 1:  # after "total" closed: the first run's total goes too
            for v in clock.stages.values():
                v.clear()
            for v in clock.queries.values():
                v.clear()
            print(f"first run (with its lazy imports) done; measuring {args.runs - 1} more")
    n = max(args.runs - 1, 1)
    print(f"imports at start: wall {w1 - w0:.2f} s, CPU {c1 - c0:.2f} s, peak {mb:.0f} MB")
    print(f"{'stage':<28} {'wall s':>8} {'CPU s':>8} {'peak MB':>8}  (mean of {n} runs)")
    for name, v in clock.stages.items():
        if v:
            print(
                f"{name:<28} {sum(x for x, _ in v) / n:>8.3f} {sum(y for _, y in v) / n:>8.3f}"
                f" {clock.peak[name]:>8.0f}"
            )
    print(f"\n{'query':<50} {'calls':>5} {'wall s':>8} {'CPU s':>8}")
    ranked = sorted(clock.queries.items(), key=lambda kv: -sum(c for _, c in kv[1]))
    for name, v in ranked[: args.top]:
        print(
            f"{name:<50} {len(v) / n:>5.0f} {sum(x for x, _ in v) / n:>8.3f}"
            f" {sum(y for _, y in v) / n:>8.3f}"
        )
    rest = ranked[args.top :]
    print(
        f"{'(the other ' + str(len(rest)) + ')':<50} {'':>5}"
        f" {sum(x for _, v in rest for x, _ in v) / n:>8.3f}"
        f" {sum(y for _, v in rest for _, y in v) / n:>8.3f}"
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB")


if __name__ == "__main__":
    main()
