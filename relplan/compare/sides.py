"""Sides: what each argument of `relplan compare` names, found and analysed.

A side is one argument. It names one run or several (whose spread is then its noise band):
- a workspace file (`*.duckdb`);
- a drill output folder (it holds `drill.duckdb`);
- an input folder or a `relplan simulate` output (logs, traces, metrics, run.json): ingested
  into a temporary workspace that is removed afterwards;
- `A1,A2,A3`: those runs, grouped;
- a folder of runs (every subfolder is one of the above, e.g. one per seed).

Each run is analysed by relplan.analyses (the analyses compare reads, and the verdict), and
what compare reads of it extracted (relplan/compare/extract.py), or found in compare's cache.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from relplan.compare.model import RunFigures
from relplan.errors import InputError

if TYPE_CHECKING:
    from relplan.analyses.options import AnalyzeOptions
    from relplan.ingest.base import IngestOptions

# The analyses compare reads figures from (relplan/analyses/registry.py names).
USED_ANALYSES = [
    "amplification",
    "delivery",
    "wasted_prefill",
    "counters",
    "littles_law",
    "restarts",
]

RunKind = Literal["workspace", "input folder", "drill output"]
_INPUT_SUFFIXES = (".parquet", ".jsonl", ".json", ".log", ".txt", ".gz", ".csv", ".om")


@dataclass(frozen=True)
class RunSpec:
    path: Path
    kind: RunKind


@dataclass(frozen=True)
class Run:
    spec: RunSpec
    figures: RunFigures


@dataclass(frozen=True)
class Side:
    label: str
    spec: str
    runs: list[Run]


def _run_kind(path: Path) -> RunKind | None:
    if path.is_file():
        return "workspace" if path.suffix == ".duckdb" else None
    if not path.is_dir():
        return None
    if (path / "drill.duckdb").is_file():
        return "drill output"
    if any(p.is_file() and p.name.endswith(_INPUT_SUFFIXES) for p in path.iterdir()):
        return "input folder"
    return None


def resolve(spec: str) -> list[RunSpec]:
    """The runs a side argument names; an InputError naming the path when it names none."""
    runs: list[RunSpec] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            raise InputError("an empty name in a comma-separated side", spec)
        path = Path(part)
        if not path.exists():
            raise InputError("no such file or folder", part)
        kind = _run_kind(path)
        if kind is not None:
            runs.append(RunSpec(path, kind))
            continue
        subs = sorted(p for p in path.iterdir() if p.is_dir()) if path.is_dir() else []
        found = [RunSpec(p, k) for p in subs if (k := _run_kind(p)) is not None]
        if not found:
            raise InputError(
                "expected a workspace (*.duckdb), a drill or simulate output, an input folder"
                " or a folder of such runs",
                part,
            )
        runs.extend(found)
    return runs


def labels_of(specs: list[str]) -> list[str]:
    """Short labels: each side's first path's name (a workspace's stem), with as many parent
    folders as it takes to tell the sides apart (`no-retries/client`); `+` marks a group."""
    firsts = [Path(spec.split(",")[0].strip()).resolve() for spec in specs]
    parts = [(p.with_suffix("") if p.suffix == ".duckdb" else p).parts[1:] for p in firsts]
    depth = 1
    while True:
        names = ["/".join(x[-depth:]) for x in parts]
        if len(set(names)) == len(names) or depth >= max(len(x) for x in parts):
            break
        depth += 1
    out = [n + ("+" if "," in spec else "") for n, spec in zip(names, specs, strict=True)]
    return [f"{n}#{i + 1}" if out.count(n) > 1 else n for i, n in enumerate(out)]


@contextmanager
def workspace_of(run: RunSpec, inputs: IngestOptions | None = None) -> Iterator[Path]:
    """The workspace file of a run; an input folder is ingested (with `inputs`, the input
    flags of `relplan compare`) once into compare's cache (relplan/compare/cache.py, keyed by
    the folder and the flags), else into a temporary workspace removed afterwards."""
    if run.kind == "workspace":
        yield run.path
    elif run.kind == "drill output":
        yield run.path / "drill.duckdb"
    else:
        from relplan.compare import cache
        from relplan.ingest import IngestOptions, ingest_paths

        given = inputs or IngestOptions()

        def ingest(db: Path) -> None:
            ingest_paths(db, [run.path], given)

        kept = cache.ingested(run.path, ingest, repr(given))
        if kept is not None:
            yield kept
            return
        with tempfile.TemporaryDirectory(prefix="relplan-compare-") as tmp:
            db = Path(tmp) / "side.duckdb"
            ingest(db)
            yield db


def _options(opts: AnalyzeOptions | None) -> str:
    return "defaults" if opts is None else opts.model_dump_json()


def cached(
    run: RunSpec, opts: AnalyzeOptions | None, inputs: IngestOptions | None = None
) -> Run | None:
    """The run's figures if compare's cache has them (nothing is ingested or analysed)."""
    from relplan.compare import cache
    from relplan.ingest import IngestOptions

    if run.kind == "input folder":
        db = cache.ingested_before(run.path, repr(inputs or IngestOptions()))
        if db is None:
            return None
    else:
        db = run.path if run.kind == "workspace" else run.path / "drill.duckdb"
    body = cache.load(cache.result_key(db, _options(opts), USED_ANALYSES))
    return None if body is None else Run(run, RunFigures.model_validate_json(body))


def analyse(
    run: RunSpec,
    opts: AnalyzeOptions | None,
    inputs: IngestOptions | None = None,
    threads: int | None = None,
) -> Run:
    """The run's figures: from compare's cache when this workspace, these options and this
    relplan were analysed before, else analysed (relplan.analyses, then the verdict; DuckDB
    with `threads` threads, default one per core), extracted and kept. The analyses are
    imported only when a run is analysed."""
    from relplan.compare import cache

    with ExitStack() as stack:
        db = stack.enter_context(workspace_of(run, inputs))
        key = cache.result_key(db, _options(opts), USED_ANALYSES)
        body = cache.load(key)
        if body is not None:
            return Run(run, RunFigures.model_validate_json(body))
        from relplan.analyses import AnalyzeOptions, analyze
        from relplan.analyses.assessment import assess
        from relplan.compare.extract import extract
        from relplan.workspace import open_workspace

        used = (opts or AnalyzeOptions()).model_copy(update={"only": USED_ANALYSES})
        con = stack.enter_context(open_workspace(db, read_only=True, threads=threads))
        result = analyze(con, used, detail=False)  # only what compare reads
        result.verdict = assess(con, result.context, result)
        figures = extract(result)
    cache.store(key, figures.model_dump_json())
    return Run(run, figures)


def _cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def load_sides(
    specs: list[str], opts: AnalyzeOptions | None = None, inputs: IngestOptions | None = None
) -> list[Side]:
    resolved = [(s, resolve(s)) for s in specs]  # every path checked before any work
    flat = [r for _, runs in resolved for r in runs]
    done = [cached(r, opts, inputs) for r in flat]
    todo = [i for i, d in enumerate(done) if d is None]
    if len(todo) == 1:
        done[todo[0]] = analyse(flat[todo[0]], opts, inputs)
    elif todo:
        from concurrent.futures import ThreadPoolExecutor

        # Runs are analysed side by side (DuckDB releases the GIL while a query runs), sharing
        # the cores: each run's queries get its share of them rather than every core each
        # (two runs on two cores: 10 % less CPU time, the same rows).
        workers = min(4, len(todo))
        threads = max(1, _cores() // workers)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for i, run in zip(
                todo,
                pool.map(lambda i: analyse(flat[i], opts, inputs, threads), todo),
                strict=True,
            ):
                done[i] = run
    it = iter(done)
    return [
        Side(label, spec, [r for _ in runs if (r := next(it)) is not None])
        for label, (spec, runs) in zip(labels_of(specs), resolved, strict=True)
    ]
