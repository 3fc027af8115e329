"""Sides: what each argument of `relplan compare` names, found and analysed.

A side is one argument. It names one run or several (whose spread is then its noise band):
- a workspace file (`*.duckdb`);
- a drill output folder (it holds `drill.duckdb`);
- an input folder or a `relplan simulate` output (logs, traces, metrics, run.json): ingested
  into a temporary workspace that is removed afterwards;
- `A1,A2,A3`: those runs, grouped;
- a folder of runs (every subfolder is one of the above, e.g. one per seed).

Each run is analysed by relplan.analyses (the analyses compare reads, and the verdict).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from relplan.analyses.options import AnalyzeOptions
from relplan.analyses.result import AnalyzeResult
from relplan.errors import InputError

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
    result: AnalyzeResult


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
def workspace_of(run: RunSpec) -> Iterator[Path]:
    """The workspace file of a run; an input folder is ingested into a temporary one."""
    if run.kind == "workspace":
        yield run.path
    elif run.kind == "drill output":
        yield run.path / "drill.duckdb"
    else:
        from relplan.ingest import IngestOptions, ingest_paths

        with tempfile.TemporaryDirectory(prefix="relplan-compare-") as tmp:
            db = Path(tmp) / "side.duckdb"
            ingest_paths(db, [run.path], IngestOptions())
            yield db


def analyse(run: RunSpec, opts: AnalyzeOptions) -> Run:
    from relplan.analyses import analyze
    from relplan.analyses.assessment import assess
    from relplan.workspace import open_workspace

    with ExitStack() as stack:
        db = stack.enter_context(workspace_of(run))
        con = stack.enter_context(open_workspace(db, read_only=True))
        result = analyze(con, opts.model_copy(update={"only": USED_ANALYSES}))
        result.verdict = assess(con, result.context, result)
    return Run(run, result)


def load_sides(specs: list[str], opts: AnalyzeOptions) -> list[Side]:
    resolved = [(s, resolve(s)) for s in specs]  # every path checked before any work
    from concurrent.futures import ThreadPoolExecutor

    # Runs are analysed side by side: DuckDB releases the GIL while a query runs.
    flat = [r for _, runs in resolved for r in runs]
    with ThreadPoolExecutor(max_workers=min(4, len(flat))) as pool:
        done = iter(list(pool.map(lambda r: analyse(r, opts), flat)))
    return [
        Side(label, spec, [next(done) for _ in runs])
        for label, (spec, runs) in zip(labels_of(specs), resolved, strict=True)
    ]
