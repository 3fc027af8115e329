"""Issue 27's table in one go: the report (cold, warm, --no-whatif), start-up against
`import typer`, and optionally the test suite and the fast loop, each against its goal.

    python bench/speed.py [--repeat 3] [--suite] [--jobs 2] [--no-cold] [--before REF]
                          [--ingest ROWS...] [--no-report] [--smoke] [PATH]

Every figure is a whole process run from this checkout with this interpreter, its wall time
and (in the last column) its CPU time, user + system, of the process and every descendant:
the replay's worker (forked from the report process, or, where that cannot fork, a child of
multiprocessing's fork server, which outlives the report process by a moment and is waited
for here: this process is their subreaper). On a shared machine the CPU seconds move less
than the wall.
- report, cold: `relplan report PATH` with an empty RELPLAN_CACHE_DIR (the what-if replay runs,
  the Vega bundle is read from the package or built, the page is computed and kept); each cold
  run has a cache folder of its own, empty;
- report, warm: the same command again: the page cache serves it (relplan/report/cache.py);
- report, computed: RELPLAN_REPORT_CACHE=0 and RELPLAN_ANALYSIS_CACHE=0, so the analyses,
  charts and page run again while the what-if replay is read from its cache and the ingested
  workspace from the report's workspace cache (relplan/report/workspace_cache.py);
- report, computed, analyses cached: RELPLAN_REPORT_CACHE=0 alone, so the analyses' result is
  read from the analysis cache kept beside that workspace (relplan/report/analysis_cache.py):
  a second report of the same inputs with other page flags;
- report, computed with ingest: RELPLAN_REPORT_CACHE=0 and RELPLAN_WORKSPACE_CACHE=0, so the
  inputs are ingested again too (no analysis cache without a kept workspace: new inputs whose
  replay happens to be cached, everything but the replay);
- report --no-whatif, warm, computed, analyses cached and with ingest: the same without the
  what-if section;
- each report figure, cold included, is the median of --repeat runs;
- peak MB: the largest resident set of the report process or any of its descendants (the
  replay's worker), from wait4's rusage: the peak of one process, not a sum; printed for each
  report figure (the largest over its runs) and, against the goal, the largest of all;
- start-up: `relplan budget ...`, `relplan pulse ...`, `--version`, `-h` against
  `python -c "import typer"`, interleaved, median of --repeat x 3 runs, the ratio of the wall
  medians (the CPU column: the ratio of the CPU medians); goal <= 3x;
- with --ingest ROWS...: `relplan ingest` of an engine trace of ROWS step rows, JSON Lines and
  Parquet, against DuckDB's bare copy of the same file (bench/ingest.py's files and
  measurements: in-process, best wall and least CPU of --repeat runs, interleaved); goal
  <= 1.3x the copy; the CPU column is the ratio of CPU seconds;
- with --suite: `pytest -q -n JOBS` (the whole suite) and `pytest -q -n JOBS -m "not slow"`,
  one run each (they take minutes: run them once, at a quiet time).
Bytecode: every process runs relplan as an installed package does, its modules compiled once.
Where the environment says not to write bytecode (PYTHONDONTWRITEBYTECODE, as on the
project's shared machine) the measured processes keep it under the temporary folder
(PYTHONPYCACHEPREFIX, bench/ingest.py's `bytecode_env`), and one report of each checkout runs
first, unmeasured, to fill it: otherwise every process would compile relplan from source
(0.1-0.3 CPU s) where an installed copy would not.
The load average at the start and the end is printed: on a shared machine it says how far the
figures are from a quiet one's.

With --before REF (a git ref, checked out into a temporary worktree, or a checkout's folder)
every report figure, cold included, is measured for REF too, each run of REF next to the same
run of this checkout (REF first in odd rounds, this checkout first in even ones, so other
jobs' load falls on both alike), --repeat runs each, and a second table sets them side by
side: median wall, CPU and peak RSS, before and after, and the least wall and CPU of the cold
runs.

--smoke is for the script's own test (tests/test_bench_speed.py), not for reading: the same
tables at a fraction of the cost. The unmeasured bytecode runs are left out, the start-up
commands run --repeat times instead of --repeat x 3, and with --before REF is measured for
the last report figure alone (`report --no-whatif, with ingest`, which reads no cache, so
REF's caches are not filled either): the side-by-side table has that one row.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/startup.py's checkout

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "pulse-retry-cancel"
GOALS = {
    "cold": 3.0,
    "warm": 1.5,
    "no-whatif": 1.0,
    "peak_mb": 300.0,
    "startup": 3.0,
    "ingest": 1.3,
}
SUITE_GOAL_S = 240.0
FAST_GOAL_S = 60.0
STARTUP: tuple[tuple[str, ...], ...] = (
    ("budget", "--crashes", "10", "--concurrency", "40"),
    ("pulse", "--capacity", "2.78", "--pulse", "2.7", "--pulse-seconds", "107"),
    ("--version",),
    ("-h",),
)


def _subreaper() -> None:
    """Make this process the reaper of its orphaned descendants (Linux PR_SET_CHILD_SUBREAPER),
    so the replay's workers, which are children of multiprocessing's fork server and outlive
    the report process by a moment, are waited for here and their CPU and memory counted."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def timed(cmd: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    """(wall s, peak RSS MB, CPU s) of one process and every descendant (the fork server and
    the replay's workers included), failing loudly when it fails. The wall time ends when the
    command exits; the descendants it left are then waited for (they hold no output)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd), cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr is not None else ""
    peak = usage.ru_maxrss
    cpu = usage.ru_utime + usage.ru_stime
    while True:  # orphans reparented here (see _subreaper)
        try:
            _, _, more = os.wait4(-1, 0)
        except ChildProcessError:
            break
        peak = max(peak, more.ru_maxrss)
        cpu += more.ru_utime + more.ru_stime
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    return wall, peak / 1024.0, cpu


# (label, extra flags, the caches turned off, goal)
_PAGE = {"RELPLAN_REPORT_CACHE": "0"}
_RUN = {**_PAGE, "RELPLAN_ANALYSIS_CACHE": "0"}
_INGEST = {**_PAGE, "RELPLAN_WORKSPACE_CACHE": "0"}
REPORT_RUNS: tuple[tuple[str, tuple[str, ...], dict[str, str], float], ...] = (
    ("report, warm (page cache)", (), {}, GOALS["warm"]),
    ("report, computed (what-if cached)", (), _RUN, GOALS["warm"]),
    ("report, computed, analyses cached", (), _PAGE, GOALS["warm"]),
    ("report, computed with ingest", (), _INGEST, GOALS["warm"]),
    ("report --no-whatif, warm", ("--no-whatif",), {}, GOALS["no-whatif"]),
    ("report --no-whatif, computed", ("--no-whatif",), _RUN, GOALS["no-whatif"]),
    ("report --no-whatif, analyses cached", ("--no-whatif",), _PAGE, GOALS["no-whatif"]),
    ("report --no-whatif, with ingest", ("--no-whatif",), _INGEST, GOALS["no-whatif"]),
)

Row = tuple[str, float, float, float, float]  # label, median wall s, peak MB, goal s, median CPU s


Run = tuple[float, float, float]  # wall s, peak MB, CPU s


def report_rows(
    path: Path, repeat: int, cold: bool, roots: Sequence[Path], smoke: bool = False
) -> tuple[list[list[Row]], list[list[Run]]]:
    """The report figures of each checkout in `roots` (runs interleaved, root after root,
    the order alternating between rounds), and each root's cold runs. With `smoke` (see
    --smoke above) no bytecode runs, and the roots before the last measure the last figure
    alone, their caches not filled."""
    rows: list[list[Row]] = [[] for _ in roots]
    colds: list[list[Run]] = [[] for _ in roots]
    with tempfile.TemporaryDirectory(prefix="relplan-speed-") as tmp:
        work = Path(tmp)
        cmd = [sys.executable, "-m", "relplan", "report", str(path), "--out", str(work / "r.html")]

        def env_of(root: Path, cache: Path) -> dict[str, str]:
            env = {**os.environ, "PYTHONPATH": str(root), "RELPLAN_CACHE_DIR": str(cache)}
            for switch in (
                "RELPLAN_REPORT_CACHE",
                "RELPLAN_ANALYSIS_CACHE",
                "RELPLAN_WHATIF_CACHE",
                "RELPLAN_WORKSPACE_CACHE",
            ):
                env.pop(switch, None)
            return env

        def rounds() -> Iterator[list[int]]:
            order = list(range(len(roots)))
            for r in range(repeat):
                yield order if r % 2 == 0 else order[::-1]

        # Each root's caches for the warm and computed figures, never shared between roots
        # (one's Vega bundle or replay would be the other's): filled by its last cold run,
        # else by a run of its own; then the --no-whatif page is kept.
        envs = [env_of(root, work / f"cache-{i}") for i, root in enumerate(roots)]
        for i, root in enumerate(roots if not smoke else ()):  # the bytecode, unmeasured
            timed(cmd, env_of(root, work / f"bytecode-{i}"), work)  # (see Bytecode above)
        if cold:
            for r, order in enumerate(rounds()):
                for i in order:
                    envs[i] = env_of(roots[i], work / f"cold-{i}-{r}")
                    colds[i].append(timed(cmd, envs[i], work))
            for i in range(len(roots)):
                rows[i].append(_row("report, cold (empty caches)", colds[i], GOALS["cold"]))
        every = range(len(roots))
        full = every if not smoke else range(len(roots) - 1, len(roots))  # every figure
        for i in full:
            if not cold:
                timed(cmd, envs[i], work)
            timed([*cmd, "--no-whatif"], envs[i], work)
        for label, extra, switches, goal in REPORT_RUNS:
            runs: list[list[Run]] = [[] for _ in roots]
            measured = every if label == REPORT_RUNS[-1][0] else full  # (it reads no cache)
            for order in rounds():
                for i in order:
                    if i in measured:
                        runs[i].append(timed([*cmd, *extra], {**envs[i], **switches}, work))
            for i, mine in enumerate(runs):
                if mine:
                    rows[i].append(_row(label, mine, goal))
    return rows, colds


def _row(label: str, runs: Sequence[Run], goal: float) -> Row:
    """A figure's row: the median wall, the largest peak, the goal and the median CPU."""
    return (
        label,
        statistics.median(w for w, _, _ in runs),
        max(m for _, m, _ in runs),
        goal,
        statistics.median(c for _, _, c in runs),
    )


def print_side_by_side(
    ref: str, before: list[Row], after: list[Row], colds: list[list[Run]], repeat: int
) -> None:
    print(
        f"\nreport figures, {ref} (before) and this checkout (after), runs interleaved,"
        f" median of {repeat} each"
    )
    head = ("wall s", "", "CPU s", "", "peak MB", "")
    print(f"{'figure':<36}  " + "  ".join(f"{h:>8}" for h in head))
    print(f"{'':<36}  " + "  ".join(f"{h:>8}" for h in ("before", "after") * 3))
    after_of = {a[0]: a for a in after}  # every figure; `before` may have fewer (--smoke)
    for b in before:
        a = after_of[b[0]]
        cells = (b[1], a[1], b[4], a[4], b[2], a[2])
        print(f"{a[0]:<36}  " + "  ".join(f"{c:>8.2f}" for c in cells), flush=True)
    if colds[0]:
        least = (
            min(w for w, _, _ in colds[0]),
            min(w for w, _, _ in colds[1]),
            min(c for _, _, c in colds[0]),
            min(c for _, _, c in colds[1]),
        )
        label = "report, cold: least of the runs"
        print(f"{label:<36}  " + "  ".join(f"{c:>8.2f}" for c in least), flush=True)


def startup_rows(repeat: int, rounds: int = 3) -> list[tuple[str, float, float, float]]:
    """(command, median wall s, wall ratio to `import typer`, CPU ratio) per command, of
    `repeat` x `rounds` runs each."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    typer_cmd = [sys.executable, "-c", "import typer"]
    with tempfile.TemporaryDirectory() as cwd:
        base: list[tuple[float, float]] = []
        times: dict[tuple[str, ...], list[tuple[float, float]]] = {args: [] for args in STARTUP}
        for _ in range(repeat * rounds):
            wall, _, cpu = timed(typer_cmd, env, Path(cwd))
            base.append((wall, cpu))
            for args in STARTUP:
                wall, _, cpu = timed([sys.executable, "-m", "relplan", *args], env, Path(cwd))
                times[args].append((wall, cpu))
    typer_s = statistics.median(w for w, _ in base)
    typer_cpu = statistics.median(c for _, c in base)
    rows = [("import typer", typer_s, 1.0, typer_cpu)]
    for args, ts in times.items():
        s = statistics.median(w for w, _ in ts)
        cpu = statistics.median(c for _, c in ts)
        rows.append(("relplan " + " ".join(args[:1]), s, s / typer_s, cpu / typer_cpu))
    return rows


def ingest_rows(sizes: Sequence[int], repeat: int) -> Iterator[tuple[str, float, float]]:
    """(label, wall ratio, CPU ratio) of relplan's ingest to DuckDB's bare copy, per file."""
    import ingest  # bench/ingest.py

    ingest.ENV.clear()
    ingest.ENV.update(os.environ)
    with tempfile.TemporaryDirectory(prefix="relplan-speed-ingest-") as tmp:
        work = Path(tmp)
        for n in sizes:
            files = ingest.generate(work, n)
            if n == sizes[0]:
                ingest.warm_up(files["jsonl"], work)
            for label, key in (("JSONL", "jsonl"), ("Parquet", "parquet")):
                best = ingest.measure(str(files[key]), work, repeat)
                copy, ing = best["copy"], best["ingest"]
                yield (
                    f"ingest {label} {n / 1e6:g}M / bare copy",
                    ing["wall"] / copy["wall"],
                    ing["cpu"] / copy["cpu"],
                )
            for f in files.values():
                f.unlink(missing_ok=True)


def suite_rows(jobs: int) -> Iterator[tuple[str, float, float]]:
    for label, extra, goal in (
        ("suite (whole)", [], SUITE_GOAL_S),
        ('fast loop (-m "not slow")', ["-m", "not slow"], FAST_GOAL_S),
    ):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-n", str(jobs), *extra],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
        lines = done.stdout.strip().splitlines()
        tail = lines[-1:] or ["(no output)"]
        print(f"{label}: exit {done.returncode}; {tail[0]}", file=sys.stderr, flush=True)
        for failed in (ln for ln in lines if ln.startswith(("FAILED ", "ERROR "))):
            print(f"  {failed}", file=sys.stderr, flush=True)
        yield label, wall, goal


def use_measuring_environ() -> None:
    """Make this process's environment the one every measured process inherits: the same,
    but bytecode kept under the temporary folder where PYTHONDONTWRITEBYTECODE is set
    (bench/ingest.py `bytecode_env`, see Bytecode above). It is read before it is replaced:
    read after `os.environ.clear()`, it was empty, and the measured processes ran with no PATH
    or HOME (the suite inside --suite then skipped nginx's tests: 3 more skips)."""
    from ingest import bytecode_env

    env = bytecode_env(compile_each_run=False)
    os.environ.clear()
    os.environ.update(env)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=SAMPLE)
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (cold included)")
    parser.add_argument("--no-cold", action="store_true", help="leave out the cold report")
    parser.add_argument(
        "--ingest",
        type=int,
        nargs="+",
        metavar="ROWS",
        help="also time `relplan ingest` of ROWS step rows against the bare copy",
    )
    parser.add_argument("--no-report", action="store_true", help="leave out the report figures")
    parser.add_argument("--suite", action="store_true", help="also time the suite (minutes)")
    parser.add_argument("--jobs", type=int, default=2, help="pytest -n for --suite")
    parser.add_argument(
        "--before",
        metavar="REF",
        help="also measure every report figure at REF (a git ref or a checkout's folder)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="the script's test: no bytecode runs, start-up x1, REF measured for one figure",
    )
    ns = parser.parse_args(argv)
    if ns.repeat < 1:
        parser.error("--repeat must be 1 or more")
    _subreaper()
    use_measuring_environ()
    load0 = os.getloadavg()
    # Rows are printed as they are measured (flushed), so a long --suite run shows the rest.
    print(
        f"relplan {ROOT}; {os.cpu_count()} cores; load average at start"
        f" {load0[0]:.1f}/{load0[1]:.1f}/{load0[2]:.1f}",
        flush=True,
    )
    print(f"{'figure':<36}  {'value':>9}  {'goal':>9}  {'':>6}  {'cpu':>9}  {'peak':>7}")
    print(f"{'-' * 36}  {'-' * 9}  {'-' * 9}  {'-' * 6}  {'-' * 9}  {'-' * 7}", flush=True)

    def row(label: str, value: float, goal: float, unit: str, cpu: str = "", mb: str = "") -> None:
        verdict = "meets" if value <= goal else "misses"
        print(
            f"{label:<36}  {value:>8.2f}{unit}  {goal:>8.2f}{unit}  {verdict:>6}  {cpu:>9}"
            f"  {mb:>7}".rstrip(),
            flush=True,
        )

    measured: list[list[Row]] = []
    colds: list[list[Run]] = []
    if not ns.no_report:
        with contextlib.ExitStack() as stack:
            from startup import checkout

            roots = (
                [ROOT] if ns.before is None else [stack.enter_context(checkout(ns.before)), ROOT]
            )
            measured, colds = report_rows(
                ns.path.resolve(), ns.repeat, not ns.no_cold, roots, ns.smoke
            )
        reports = measured[-1]
        for label, wall, mb, goal, cpu in reports:
            row(label, wall, goal, "s", f"{cpu:.2f}s", f"{mb:.0f}MB")
        row("report peak RSS (MB)", max(r[2] for r in reports), GOALS["peak_mb"], " ")
    for label, s, ratio, cpu_ratio in startup_rows(ns.repeat, 1 if ns.smoke else 3):
        if label == "import typer":
            print(
                f"{'import typer (s)':<36}  {s:>8.3f}s  {'':>9}  {'':>6}  {cpu_ratio:>8.3f}s",
                flush=True,
            )
        else:
            row(f"{label} / import typer", ratio, GOALS["startup"], "x", f"{cpu_ratio:.2f}x")
    for label, wall_ratio, cpu_ratio in ingest_rows(ns.ingest or (), ns.repeat):
        row(label, wall_ratio, GOALS["ingest"], "x", f"{cpu_ratio:.2f}x")
    if ns.suite:
        for label, wall, goal in suite_rows(ns.jobs):
            row(label, wall, goal, "s")
    if ns.before is not None and measured:
        print_side_by_side(ns.before, measured[0], measured[-1], colds, ns.repeat)
    load1 = os.getloadavg()
    print(f"load average at end {load1[0]:.1f}/{load1[1]:.1f}/{load1[2]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
