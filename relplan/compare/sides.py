"""Sides: what each argument of `relplan compare` names, found and analysed.

A side is one argument. It names one run or several (whose spread is then its noise band):
- a workspace file (`*.duckdb`);
- a drill output folder (it holds `drill.duckdb`);
- an input folder or a `relplan simulate` output (logs, traces, metrics, run.json): ingested
  into a temporary workspace that is removed afterwards;
- an incident recorded on `relplan lab` (docs/lab.md, Recording an incident): `operator/`
  (the server's logs and metrics) and `client/` (the drill's own record and plan), two records
  of one run: the operator's files are ingested with the drill's plan (`client/run.json`);
- `A1,A2,A3`: those runs, grouped;
- a folder of runs (every subfolder is one of the above and of one kind, e.g. one per seed).

Each run is analysed by relplan.analyses (the analyses compare reads, and the verdict), and
what compare reads of it extracted (relplan/compare/extract.py), or found in compare's cache.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from relplan.compare.model import RunFigures
from relplan.errors import InputError, NoDataError

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

RunKind = Literal["workspace", "input folder", "drill output", "lab recording"]
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
    if _has_inputs(path):
        return "input folder"
    if (path / "client" / "run.json").is_file() and _has_inputs(path / "operator"):
        return "lab recording"
    return None


def _has_inputs(path: Path) -> bool:
    return path.is_dir() and any(
        p.is_file() and p.name.endswith(_INPUT_SUFFIXES) for p in path.iterdir()
    )


def _inputs_of(run: RunSpec) -> list[Path]:
    """What is ingested for a run that is not a workspace yet."""
    if run.kind == "lab recording":
        return [run.path / "operator", run.path / "client" / "run.json"]
    return [run.path]


def _alike(folder: Path, runs: list[RunSpec]) -> None:
    """The runs found in a folder of runs are runs of one kind (seeds, repeated drills): an
    InputError when they differ, e.g. the two records of one run (a drill's own record and
    the server's logs) side by side, which are not two runs."""

    def shape(r: RunSpec) -> str:
        if r.kind != "input folder":
            return r.kind
        names = sorted(
            p.name.removesuffix(".gz")
            for p in r.path.iterdir()
            if p.is_file() and p.name.endswith(_INPUT_SUFFIXES)
        )
        return ", ".join(names)

    advice = (
        "a folder of runs holds one run per subfolder, alike (e.g. one per seed): compare a"
        " subfolder, or name the runs of a side with commas (A1,A2)"
    )
    shapes = {r.path.name: shape(r) for r in runs}
    if len(set(shapes.values())) > 1:
        listed = "; ".join(f"{name}/: {what}" for name, what in shapes.items())
        raise InputError(
            f"its subfolders are not runs of one kind ({listed}); {advice}", str(folder)
        )
    made = {r.path.name: _how_made(r) for r in runs}
    keys = sorted({k for m in made.values() for k in m})
    differ = [
        k for k in keys if len({json.dumps(m.get(k), sort_keys=True) for m in made.values()}) > 1
    ]
    if differ:
        listed = "; ".join(
            f"{name}/: " + ", ".join(f"{k}={json.dumps(m.get(k))}" for k in differ)
            for name, m in made.items()
        )
        raise InputError(f"its runs were made differently ({listed}); {advice}", str(folder))


# Settings of run.json's meta that differ between seeds of one drill or simulation.
_PER_RUN = frozenset({"seed", "name", "out", "progress", "json"})


def _how_made(run: RunSpec) -> dict[str, object]:
    """What made a run, from its run.json (a drill's flags and phase plan, a simulation's
    scenario and --set values), without what differs between seeds; {} for a workspace or a
    run without a readable run.json."""
    plan = {
        "workspace": None,
        "drill output": run.path / "run.json",
        "input folder": run.path / "run.json",
        "lab recording": run.path / "client" / "run.json",
    }[run.kind]
    try:
        meta = json.loads(plan.read_text("utf-8")).get("meta") if plan is not None else None
    except (OSError, ValueError, AttributeError):
        return {}
    if not isinstance(meta, dict):
        return {}
    flags = meta.get("flags")
    made: dict[str, object] = {}
    if isinstance(flags, dict):
        made |= {k: v for k, v in flags.items() if k not in _PER_RUN}
    # a simulation's scenario and --set values; a drill's phase plan (rates × Ĉ), which a
    # drill sweep varies while its flags stay the same (relplan/drill/sweep.py)
    for k in ("scenario", "sets", "phases"):
        if k in meta:
            made[k] = meta[k]
    return made


def resolve(spec: str) -> list[RunSpec]:
    """The runs a side argument names; an InputError naming the path when it names none."""
    runs: list[RunSpec] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            raise InputError("an empty name in a comma-separated side", spec)
        path = Path(part)
        if not path.exists():
            raise InputError("no such file or folder", part)
        if (path / "sweep.parquet").is_file():  # relplan/sim/sweep.py's OUT
            raise InputError(
                "a relplan simulate sweep (its summary, not a run): compare its runs (kept"
                " with --keep-runs under runs/), one configuration's seeds a side, e.g."
                f" {path / 'runs' / 'run001-seed1'},{path / 'runs' / 'run001-seed2'}",
                part,
            )
        kind = _run_kind(path)
        if kind is not None:
            runs.append(RunSpec(path, kind))
            continue
        subs = sorted(p for p in path.iterdir() if p.is_dir()) if path.is_dir() else []
        found = [RunSpec(p, k) for p in subs if (k := _run_kind(p)) is not None]
        if not found:
            raise InputError(
                "expected a workspace (*.duckdb), a drill or simulate output, an input folder,"
                " a relplan lab recording (operator/, client/run.json) or a folder of such runs",
                part,
            )
        _alike(path, found)
        others = [p.name for p in subs if not p.name.startswith(".") and _run_kind(p) is None]
        if others:
            # a subfolder that is no run would otherwise be left out without a word
            named = ",".join(str(r.path) for r in found[:2])
            raise InputError(
                f"a folder of runs whose subfolder(s) {', '.join(others[:5])} are not runs"
                " (a workspace, a drill or simulate output, an input folder or a lab"
                f" recording); name the runs of the side with commas ({named},...) or move"
                " the others out",
                part,
            )
        runs.extend(found)
    return runs


def labels_of(specs: list[str]) -> list[str]:
    """Short labels: each side's first path's name (a workspace's stem), with as many parent
    folders as it takes to tell the sides apart (`no-retries/client`); `+` marks a group."""
    firsts = [Path(spec.split(",")[0].strip()).resolve() for spec in specs]
    parts = [(p.with_suffix("") if p.suffix == ".duckdb" else p).parts[1:] for p in firsts]
    marks = ["+" if "," in spec else "" for spec in specs]
    depth = 1
    while True:
        out = ["/".join(x[-depth:]) + m for x, m in zip(parts, marks, strict=True)]
        if len(set(out)) == len(out) or depth >= max(len(x) for x in parts):
            break
        depth += 1
    if len(set(out)) < len(out):  # the same path given twice: as short as the first pass
        out = [x[-1] + m if x else m for x, m in zip(parts, marks, strict=True)]
    return [f"{n}#{i + 1}" if out.count(n) > 1 else n for i, n in enumerate(out)]


@contextmanager
def workspace_of(run: RunSpec, inputs: IngestOptions | None = None) -> Iterator[Path]:
    """The workspace file of a run; an input folder or lab recording is ingested (with
    `inputs`, the input flags of `relplan compare`) once into compare's cache
    (relplan/compare/cache.py, keyed by the folder and the flags), else into a temporary
    workspace removed afterwards."""
    if run.kind == "workspace":
        yield run.path
    elif run.kind == "drill output":
        yield run.path / "drill.duckdb"
    else:
        from relplan.compare import cache
        from relplan.ingest import IngestOptions, ingest_paths

        given = inputs or IngestOptions()

        def ingest(db: Path) -> None:
            ingest_paths(db, _inputs_of(run), given)

        kept = cache.ingested(run.path, ingest, _variant(run, given))
        if kept is not None:
            yield kept
            return
        with tempfile.TemporaryDirectory(prefix="relplan-compare-") as tmp:
            db = Path(tmp) / "side.duckdb"
            ingest(db)
            yield db


def _variant(run: RunSpec, inputs: IngestOptions) -> str:
    """What, besides the folder's files, the ingested workspace depends on."""
    return repr(inputs) if run.kind == "input folder" else f"{run.kind}: {inputs!r}"


def _options(opts: AnalyzeOptions | None) -> str:
    return "defaults" if opts is None else opts.model_dump_json()


def cached(
    run: RunSpec, opts: AnalyzeOptions | None, inputs: IngestOptions | None = None
) -> Run | None:
    """The run's figures if compare's cache has them (nothing is ingested or analysed)."""
    from relplan.compare import cache
    from relplan.ingest import IngestOptions

    if run.kind in ("input folder", "lab recording"):
        db = cache.ingested_before(run.path, _variant(run, inputs or IngestOptions()))
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
        from relplan.compare.extract import extract, samples
        from relplan.workspace import open_workspace

        used = (opts or AnalyzeOptions()).model_copy(update={"only": USED_ANALYSES})
        con = stack.enter_context(open_workspace(db, read_only=True, threads=threads))
        try:
            result = analyze(con, used, detail=False)  # only what compare reads
        except NoDataError as e:  # name the side's path: the workspace may be a temporary one
            raise NoDataError(f"{run.path}: {e}") from None
        result.verdict = assess(con, result.context, result)
        figures = extract(result, samples(con, result))
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
