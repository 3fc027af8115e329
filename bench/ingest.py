"""Ingest benchmark (issue 3): engine traces of 2M and 10M step rows, JSONL and Parquet, plus a
matching proxy log; prints rows, file size, ingest wall time, rows/s, peak RSS, and the ratios
to DuckDB's bare scan and bare copy of the same file, measured in the same run.

    python bench/ingest.py            # 2M and 10M step rows (several minutes)
    python bench/ingest.py --quick    # 2M only
    python bench/ingest.py --sizes 200000 --repeat 3

Each measurement runs in a fresh subprocess (so peak RSS is its own) and times only the
operation itself, up to the database file being closed; every figure is the best of --repeat
runs, the modes interleaved (the machine is shared). The bare copy uses the workspace's
DuckDB settings (memory limit, no insertion order), so the ratio is the cost of relplan's
typing, validation, provenance and the split into tables.

The last three columns time whole processes from outside (issue 16, item 4): DuckDB's bare
`create table t as select * from read_json/read_parquet(FILE)` as a Python one-liner with
the same settings, and `python -m relplan ingest FILE --db DB`; start-up, imports and
closing the database file included.

Beside the wall ratios, the CPU ratios (issue 27): user + system seconds of the operation in
its process (every DuckDB thread and the hashing thread included), and of each whole process
(getrusage of the children), each the best of --repeat like the wall times. On a machine
shared with other jobs the wall time is mostly waiting for a core; the CPU seconds are what
the work costs. The load average at the start and end goes to stderr.

Bytecode: relplan runs as an installed package does, its modules compiled once. When the
environment says not to write bytecode (PYTHONDONTWRITEBYTECODE, as on the project's shared
machine), the measuring processes keep it under the temporary folder instead
(PYTHONPYCACHEPREFIX, as tests/helpers/bytecode.py does for the suite), and one tiny ingest
(and an import of numpy, which the digest of a large file uses) runs first to fill it; otherwise every ingest process would compile relplan's
modules from source (about 0.25 s of CPU) and the bare copy would not. `--compile-each-run`
measures that case.

Before and after in one run: `--before DIR` (a checkout of an earlier commit, e.g. made with
`git worktree add /tmp/before REF`) also runs that checkout's ingest, in-process and as a
whole process, interleaved with this checkout's and the bare copy in every round, and prints a
second table: each side's CPU seconds and CPU ratio to the bare copy (least and median of the
runs), so the two are compared under the same load.

--smoke is for the script's own test (tests/test_bench_ingest.py), not for reading: the same
tables at about two thirds of the processes. The unmeasured warm-up runs are left out, and
with --before that checkout is measured for the first file alone (the engine trace in JSON
Lines): the side-by-side table has that one row.

Targets: ingest <= 1.3x the bare copy (in-process and as whole processes); peak RSS <= 2 GB
at 10M rows.
Generated files go to bench/out/ (gitignored) unless --out says otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
T0 = 1764460800.0
BATCH = 32  # executions per engine step
STEPS_PER_EXEC = 200  # steps an execution stays in the batch

# The engine trace: `n` step rows (BATCH executions per step, each running STEPS_PER_EXEC
# steps: a 512-token prefill, then one decode token per step), one stats row per step and
# four lifecycle events per execution, interleaved in time order like a tracing hook writes.
_ENGINE_ROWS = """
with s as (
    select
        i, i // {batch} as step,
        (i % {batch}) + {batch} * (i // ({batch} * {per})) as ex,
        (i // {batch}) % {per} = 0 as first
    from range({n}) t(i)
)
select * from (
    select
        i * 4 as o, 'step' as type, step, ({t0} + step * 0.03)::double as t_issue,
        ({t0} + step * 0.03 + 0.025)::double as t_done, 'cmpl-' || ex || '-0' as execution_id,
        case when first then 512 else 0 end as prompt_computed,
        case when first then 64 else 0 end as prompt_cached,
        case when first then 0 else 1 end as decode_tokens,
        null::double as t, null::varchar as event, null::bigint as prompt_tokens,
        null::bigint as num_running, null::bigint as num_waiting,
        null::bigint as num_batched_tokens, null::double as kv_usage, 'r0' as replica
    from s
    union all
    select
        step * {batch} * 4 + 1, 'stats', step, ({t0} + step * 0.03)::double, null, null, null,
        null, null,
        null, null, null, {batch}, 3, {batch} * 17, 0.62, 'r0'
    from range({steps}) t(step)
    union all
    select
        (ex * {per} * {batch} // {batch}) * 4 + k, 'event', null, null, null,
        'cmpl-' || ex || '-0', null, null, null,
        ({t0} + (ex // {batch}) * {per} * 0.03 + k * 0.01)::double,
        ['arrived', 'scheduled', 'first_token', 'finished'][k + 1], case when k = 0 then 576 end,
        null, null, null, null, 'r0'
    from range({execs}) e(ex), range(4) k(k)
)
"""

_JSON_LINE = """
select case type
    when 'step' then json_object('type', type, 'step', step, 't_issue', t_issue,
        't_done', t_done, 'execution_id', execution_id, 'prompt_computed', prompt_computed,
        'prompt_cached', prompt_cached, 'decode_tokens', decode_tokens, 'replica', replica)
    when 'stats' then json_object('type', type, 'step', step, 't_issue', t_issue,
        'num_running', num_running, 'num_waiting', num_waiting,
        'num_batched_tokens', num_batched_tokens, 'kv_usage', kv_usage, 'replica', replica)
    else json_object('type', type, 't', t, 'execution_id', execution_id, 'event', event,
        'prompt_tokens', prompt_tokens, 'replica', replica)
    end::varchar as line
from e order by o
"""

# One call per execution; every 10th call first timed out (client_gone) and retried.
_PROXY_LINE = """
select json_object(
    'call_id', 'call-' || ex, 'attempt', a, 't_sent', {t0} + (ex // {batch}) * {per} * 0.03 - 0.5 + a * 0.1,
    't_end', {t0} + (ex // {batch}) * {per} * 0.03 + {per} * 0.03 + a * 0.1,
    'outcome', case when ex % 10 = 0 and a = 0 then 'client_gone' else 'delivered' end,
    'execution_id', 'cmpl-' || ex || '-0', 'attached', a = 1, 'status', 200,
    'model', 'llama-8b', 'replica', 'r0', 'prompt_tokens', 576, 'max_tokens', 256)::varchar
from range({execs}) e(ex), range(2) a(a)
where a = 0 or ex % 10 = 0
order by ex, a
"""


def generate(out: Path, n: int) -> dict[str, Path]:
    import duckdb

    steps = -(-n // BATCH)
    execs = -(-n // (BATCH * STEPS_PER_EXEC)) * BATCH
    params = {
        "n": n,
        "batch": BATCH,
        "per": STEPS_PER_EXEC,
        "t0": T0,
        "steps": steps,
        "execs": execs,
    }
    files = {
        "jsonl": out / f"engine-{n}.jsonl",
        "parquet": out / f"engine-{n}.parquet",
        "proxy": out / f"proxy-{n}.jsonl",
    }
    if all(f.exists() for f in files.values()):
        return files
    con = duckdb.connect()
    con.execute("set preserve_insertion_order = true")
    # Generated text only: sizes and paths come from this script, not from input.
    con.execute("create temp table e as " + _ENGINE_ROWS.format(**params))

    def copy_lines(select: str, path: Path) -> None:
        tmp = path.with_suffix(path.suffix + ".part")
        con.execute(
            f"copy ({select}) to '{tmp}' (format csv, header false, quote '', escape '',"
            " delimiter '\x1f')"
        )
        tmp.rename(path)

    copy_lines(_JSON_LINE, files["jsonl"])
    tmp = files["parquet"].with_suffix(".part")
    con.execute(f"copy (select * exclude (o) from e order by o) to '{tmp}' (format parquet)")
    tmp.rename(files["parquet"])
    copy_lines(_PROXY_LINE.format(**params), files["proxy"])
    con.close()
    return files


# --- one measurement, in its own process -----------------------------------------------------


def _cpu(who: int = resource.RUSAGE_SELF) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _one(mode: str, path: str, db: str, root: Path = ROOT) -> None:
    import duckdb

    reader = ("read_parquet" if path.endswith(".parquet") else "read_json") + "($p)"
    if mode == "ingest":
        sys.path.insert(0, str(root))
        from relplan.ingest import IngestOptions, ingest_paths

        paths = [Path(p) for p in path.split(",")]
        t, c = time.perf_counter(), _cpu()
        rep = ingest_paths(Path(db), paths, IngestOptions())
        wall, cpu = time.perf_counter() - t, _cpu() - c
        rows = sum(rep.rows_by_table.values())
    else:
        con = duckdb.connect(db if mode == "copy" else ":memory:")
        con.execute("set memory_limit = '1GB'")
        con.execute("set preserve_insertion_order = false")
        t, c = time.perf_counter(), _cpu()
        if mode == "copy":
            con.execute(f"create table t as select * from {reader}", {"p": path})
            row = con.execute("select count(*) from t").fetchone()
        else:
            col = "prompt_tokens" if "proxy" in Path(path).name else "prompt_computed"
            row = con.execute(f"select count(*), sum({col}) from {reader}", {"p": path}).fetchone()
        con.close()  # the copy is in the database file once it is closed (checkpoint)
        wall, cpu = time.perf_counter() - t, _cpu() - c
        rows = int(row[0]) if row else 0
    # This process's own peak resident set, DuckDB's buffers included (VmHWM, Linux).
    rss_mb = 0.0
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            rss_mb = int(line.split()[1]) / 1024.0
    print(json.dumps({"wall": wall, "cpu": cpu, "rows": rows, "rss_mb": rss_mb}))


def bytecode_env(compile_each_run: bool) -> dict[str, str]:
    """The environment of the measuring processes: see the module docstring, Bytecode."""
    env = dict(os.environ)
    if compile_each_run or not env.get("PYTHONDONTWRITEBYTECODE") or env.get("PYTHONPYCACHEPREFIX"):
        return env
    import tempfile

    env.pop("PYTHONDONTWRITEBYTECODE")
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / f"relplan-pycache-{os.getuid()}")
    return env


def warm_up(engine_jsonl: Path, work: Path) -> None:
    """One `relplan ingest` of the trace's first lines (and a bare copy), and an import of
    numpy (a large file's digest scans with it, a tiny one's does not), so that everything the
    measured processes import has its bytecode cached."""
    tiny = work / "warm.jsonl"
    with engine_jsonl.open("rb") as f:
        tiny.write_bytes(b"".join(f.readline() for _ in range(8)))
    for mode in ("process-copy", "process-ingest", *BEFORE_MODES[1:] * (BEFORE is not None)):
        run_process(mode, str(tiny), work)
    subprocess.run([sys.executable, "-c", "import numpy"], cwd=ROOT, env=ENV, check=True)


def run_once(mode: str, path: str, work: Path) -> dict[str, float]:
    db = work / f"{mode}.duckdb"
    for f in (db, db.with_name(db.name + ".wal")):
        f.unlink(missing_ok=True)
    shutil.rmtree(db.with_name(db.name + ".tmp"), ignore_errors=True)
    root = ["--root", str(BEFORE)] if mode == "before-ingest" else []
    one = mode.removeprefix("before-")
    proc = subprocess.run(
        [sys.executable, __file__, "--one", one, path, str(db), *root],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=ENV,
        timeout=3600,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{mode} {path} failed (exit {proc.returncode})")
    res: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return res


# Whole processes, timed from outside (start-up, imports and closing the file included):
# DuckDB's bare copy as a Python one-liner with the workspace's settings, and the CLI.
_BARE_PROCESS = """
import sys, duckdb
con = duckdb.connect(sys.argv[2], config={"memory_limit": "1GB", "preserve_insertion_order": False})
p = sys.argv[1]
reader = "read_parquet($p)" if p.endswith(".parquet") else "read_json($p)"
con.execute("create table t as select * from " + reader, {"p": p})
con.close()
"""


def run_process(mode: str, path: str, work: Path) -> dict[str, float]:
    db = work / f"{mode}.duckdb"
    for f in (db, db.with_name(db.name + ".wal")):
        f.unlink(missing_ok=True)
    shutil.rmtree(db.with_name(db.name + ".tmp"), ignore_errors=True)
    if mode == "process-copy":
        cmd = [sys.executable, "-c", _BARE_PROCESS, path, str(db)]
    else:
        cmd = [sys.executable, "-m", "relplan", "ingest", path, "--db", str(db)]
    # `python -m` puts its working directory first on the path: the before checkout's relplan.
    cwd = BEFORE if mode == "before-process-ingest" else ROOT
    t, c = time.perf_counter(), _cpu(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(
        cmd, capture_output=True, text=True, cwd=cwd, env=ENV, timeout=3600, check=False
    )
    wall, cpu = time.perf_counter() - t, _cpu(resource.RUSAGE_CHILDREN) - c
    if proc.returncode != 0:
        raise SystemExit(f"{mode} {path} failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return {"wall": wall, "cpu": cpu}


ENV = dict(os.environ)
BEFORE: Path | None = None  # --before: an earlier checkout, measured beside this one

MODES = ("scan", "copy", "ingest", "process-copy", "process-ingest")
BEFORE_MODES = ("before-ingest", "before-process-ingest")


def measure(
    path: str,
    work: Path,
    repeat: int,
    cpus: dict[str, list[float]] | None = None,
    before: bool = True,
) -> dict[str, dict[str, float]]:
    """Best of `repeat` runs per mode, the modes interleaved (scan, copy, ingest, scan, ...)
    so that load from other jobs on the machine hits them alike. The least CPU time is kept
    apart from the best wall time (`cpu`), as the two need not come from one run. Every run's
    CPU seconds go to `cpus` by mode, when given. `before`: the --before checkout's modes too
    (when there is one)."""
    best: dict[str, dict[str, float]] = {}
    modes = MODES + (BEFORE_MODES if BEFORE is not None and before else ())
    for _ in range(repeat):
        for mode in modes:
            if "process-" in mode:
                res = run_process(mode, path, work)
            else:
                res = run_once(mode, path, work)
            if cpus is not None:
                cpus.setdefault(mode, []).append(res["cpu"])
            least_cpu = min(res["cpu"], best[mode]["cpu"]) if mode in best else res["cpu"]
            if mode not in best or res["wall"] < best[mode]["wall"]:
                best[mode] = res
            best[mode]["cpu"] = least_cpu
    return best


def _side_by_side(label: str, cpus: dict[str, list[float]]) -> str:
    """One row of the before/after table: CPU seconds least / median, and ratios to the copy."""

    def fig(mode: str) -> tuple[float, float]:
        runs = sorted(cpus[mode])
        return runs[0], runs[len(runs) // 2]

    cells = [label]
    for copy, modes in (
        ("copy", ("before-ingest", "ingest")),
        ("process-copy", ("before-process-ingest", "process-ingest")),
    ):
        c_least, c_med = fig(copy)
        cells.append(f"{c_least:.2f} / {c_med:.2f}")
        for mode in modes:
            least, med = fig(mode)
            cells.append(f"{least:.2f} / {med:.2f} | {least / c_least:.2f} / {med / c_med:.2f}")
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--one", nargs=3, metavar=("MODE", "FILE", "DB"), help=argparse.SUPPRESS)
    ap.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    ap.add_argument(
        "--before", type=Path, help="an earlier checkout, measured beside this one (see above)"
    )
    ap.add_argument("--quick", action="store_true", help="2M step rows only")
    ap.add_argument("--sizes", type=int, nargs="*", help="step rows per trace")
    ap.add_argument("--repeat", type=int, default=2, help="runs per figure (best is kept)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument(
        "--smoke",
        action="store_true",
        help="the script's own test: no warm-up, --before for the first file (see above)",
    )
    ap.add_argument(
        "--compile-each-run",
        action="store_true",
        help="no bytecode cache when PYTHONDONTWRITEBYTECODE is set (see Bytecode above)",
    )
    args = ap.parse_args()
    if args.one:
        _one(*args.one, root=args.root)
        return
    global BEFORE
    BEFORE = args.before.resolve() if args.before else None
    ENV.clear()
    ENV.update(bytecode_env(args.compile_each_run))
    cached = "no" if ENV.get("PYTHONDONTWRITEBYTECODE") else ENV.get("PYTHONPYCACHEPREFIX", "yes")
    print(f"bytecode cached: {cached}", file=sys.stderr)
    sizes = args.sizes or ([2_000_000] if args.quick else [2_000_000, 10_000_000])
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"load average at the start: {_load()}", file=sys.stderr)
    print(
        "| trace | rows stored | file size | ingest wall | rows/s | peak RSS |"
        " × bare scan | × bare copy | CPU s: copy / ingest | CPU × copy |"
        " process CPU × copy | process: bare copy | process: relplan ingest | × |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    beside: list[str] = []
    for n in sizes:
        files = generate(args.out, n)
        if n == sizes[0] and not args.smoke:
            warm_up(files["jsonl"], args.out)
        for label, key in (("JSONL", "jsonl"), ("Parquet", "parquet"), ("proxy JSONL", "proxy")):
            path = str(files[key])
            cpus: dict[str, list[float]] = {}
            before = not args.smoke or (n, key) == (sizes[0], "jsonl")
            best = measure(path, args.out, args.repeat, cpus, before)
            if BEFORE is not None and before:
                beside.append(_side_by_side(f"{label} {n / 1e6:g}M steps", cpus))
            scan, copy, ing = best["scan"], best["copy"], best["ingest"]
            p_copy, p_ing = best["process-copy"]["wall"], best["process-ingest"]["wall"]
            p_cpu = best["process-ingest"]["cpu"] / best["process-copy"]["cpu"]
            size = Path(path).stat().st_size / 1e6
            print(
                f"| {label} {n / 1e6:g}M steps | {ing['rows']:,} | {size:,.0f} MB |"
                f" {ing['wall']:.2f} s | {ing['rows'] / ing['wall']:,.0f} |"
                f" {ing['rss_mb']:,.0f} MB | {ing['wall'] / scan['wall']:.2f} |"
                f" {ing['wall'] / copy['wall']:.2f} |"
                f" {copy['cpu']:.2f} / {ing['cpu']:.2f} | {ing['cpu'] / copy['cpu']:.2f} |"
                f" {p_cpu:.2f} | {p_copy:.2f} s | {p_ing:.2f} s | {p_ing / p_copy:.2f} |",
                flush=True,
            )
    if beside:
        print(
            f"\nCPU seconds, least / median of {args.repeat}, before = {BEFORE}:\n\n"
            "| trace | copy | before | × copy | this | × copy |"
            " process: copy | before | × copy | this | × copy |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        )
        print("\n".join(beside))
    print(f"load average at the end: {_load()}", file=sys.stderr)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    main()
