"""A tiny ingest in-process (issue 27, item 4): what a test pays for each workspace it builds.

    python bench/ingest_tiny.py [--before REF] [--repeat 20]

`tests/helpers/ingest.py`'s `ingest` of nginx's first example (the format's examples in the
registry, 8 lines) into a new workspace, then a read-only open of that workspace
(`relplan.workspace.connect`, as every analysis does), each timed inside one Python process
after a first ingest that pays the imports: wall and CPU seconds (user + system of the
process, every DuckDB thread included), and how many SQL files `relplan.sql.run` ran for the
ingest. With `--before REF` the same is measured on a git ref checked out with `git worktree
add` into a temporary folder, the two sides' processes interleaved (before, after, after,
before, ...) so the load of other jobs falls on both alike; each figure is the median of the
runs. Every process has a cache folder of its own (`RELPLAN_CACHE_DIR`); its first timed
ingest starts from an empty one (what the cache keeps is made then) and is shown apart.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = "tests/data/published/nginx_ingress_upstreaminfo_issue4312_499_retries.log"
FIGURES = ("ingest, empty cache", "ingest", "read-only open", "sql.run per ingest")


def measure(tree: Path, repeat: int) -> dict[str, float]:
    """The figures of one process whose relplan is `tree`'s (imported from there)."""
    sys.path.insert(0, str(tree))  # relplan and its tests are imported from `tree`
    from relplan import sql
    from relplan.workspace import connect
    from tests.helpers.ingest import ingest

    example = tree / EXAMPLE
    calls = [0]
    real_run = sql.run

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real_run(*args, **kwargs)

    sql.run = counted  # type: ignore[assignment]  # rows/one/affected call it too
    with tempfile.TemporaryDirectory(prefix="relplan-tiny-") as tmp:
        os.environ["RELPLAN_CACHE_DIR"] = str(Path(tmp) / "cache")
        ingest(Path(tmp) / "imports.duckdb", example)  # the imports
        # An empty cache (and none in memory, where relplan keeps one: the empty workspace).
        os.environ["RELPLAN_CACHE_DIR"] = str(Path(tmp) / "cache-first")
        getattr(sys.modules.get("relplan.workspace.template"), "_BYTES", {}).clear()
        t0, c0 = time.perf_counter(), time.process_time()
        ingest(Path(tmp) / "first.duckdb", example)
        first = (time.perf_counter() - t0, time.process_time() - c0)
        walls: list[float] = []
        cpus: list[float] = []
        opens: list[float] = []
        open_cpus: list[float] = []
        runs: list[int] = []
        for i in range(repeat):
            db = Path(tmp) / f"w{i}.duckdb"
            calls[0] = 0
            t0, c0 = time.perf_counter(), time.process_time()
            ingest(db, example)
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
            runs.append(calls[0])
            t0, c0 = time.perf_counter(), time.process_time()
            connect(db, read_only=True).close()
            opens.append(time.perf_counter() - t0)
            open_cpus.append(time.process_time() - c0)
    return {
        "ingest, empty cache": first[0],
        "ingest, empty cache cpu": first[1],
        "ingest": statistics.median(walls),
        "ingest cpu": statistics.median(cpus),
        "read-only open": statistics.median(opens),
        "read-only open cpu": statistics.median(open_cpus),
        "sql.run per ingest": statistics.median(runs),
    }


def in_process(tree: Path, repeat: int) -> dict[str, float]:
    """measure() in a fresh interpreter (so each side imports its own relplan)."""
    done = subprocess.run(
        [sys.executable, __file__, "--measure", str(tree), "--repeat", str(repeat)],
        capture_output=True,
        text=True,
        check=False,
        cwd=tree,
    )
    if done.returncode != 0:
        raise SystemExit(f"measuring {tree} failed:\n{done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="git ref to compare with")
    parser.add_argument("--repeat", type=int, default=20, help="ingests per process")
    parser.add_argument("--rounds", type=int, default=3, help="processes per side")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    if ns.repeat < 1 or ns.rounds < 1:
        parser.error("--repeat and --rounds must be 1 or more")
    if ns.measure is not None:
        print(json.dumps(measure(ns.measure.resolve(), ns.repeat)))
        return 0
    load0 = os.getloadavg()
    print(f"load average at start {load0[0]:.1f}/{load0[1]:.1f}/{load0[2]:.1f}", flush=True)
    sides: dict[str, list[dict[str, float]]] = {"after": []}
    if ns.before:
        sides["before"] = []
    from startup import checkout  # bench/startup.py: a git ref in a temporary worktree

    with checkout(ns.before) if ns.before else _nothing() as before:
        for r in range(ns.rounds):
            order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
            for side in order:
                if side in sides:
                    tree = ROOT if side == "after" else before
                    sides[side].append(in_process(tree, ns.repeat))
    keys = [k for f in FIGURES for k in (f, f"{f} cpu") if k in sides["after"][0]]
    head = f"{'figure':<24}" + "".join(f"  {s:>10}" for s in sides)
    print(head + ("  after/before" if ns.before else ""))
    for k in keys:
        vals = [statistics.median(m[k] for m in sides[s]) for s in sides]
        unit = "" if k.startswith("sql.run") else "s"
        cells = "".join(f"  {v:>10.0f}" if not unit else f"  {v * 1000:>8.1f}ms" for v in vals)
        ratio = f"  {vals[0] / vals[1]:>12.2f}" if ns.before and vals[1] else ""
        print(f"{k:<24}{cells}{ratio}")
    load1 = os.getloadavg()
    print(f"load average at end {load1[0]:.1f}/{load1[1]:.1f}/{load1[2]:.1f}")
    return 0


@contextmanager
def _nothing() -> Iterator[Path]:
    yield ROOT


if __name__ == "__main__":
    raise SystemExit(main())
