"""Attach benchmark (issue 16, item 1): engine Parquet read in place, at fleet size.

    python bench/attach.py                       # 100M step rows, 50 replicas, 24 h
    python bench/attach.py --rows 2000000 --replicas 4 --hours 4

Generates an engine trace inside DuckDB and writes it with DuckDB's own
`COPY ... (FORMAT parquet, PARTITION_BY (replica))`, one hour at a time into
`day=YYYY-MM-DD/hour=HH/`: steps at a steady rate over
--hours hours, spread over --replicas replicas, each execution running 200 steps with an
`arrived` and a `finished` event. Then, each in a fresh process (so its peak RSS is its
own, VmHWM): `relplan ingest --attach` of the partitions (the type and record checks read
every file); `relplan analyze` with a one-hour window (--from/--to); and, in this
process, the number of files that window's scan reads (EXPLAIN ANALYZE, `Total Files
Read`) against the files of that hour. The generated files are deleted at the end unless
--keep. Targets: peak RSS <= 2 GB; the one-hour analyze reads only that hour's files.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
T0 = 1764460800.0  # 2025-11-30T00:00:00Z
STEPS_PER_EXEC = 200

# Step i of the fleet: replica i % R, its own step number i // R, at a steady rate over the
# span; execution (replica, i // (R * 200)) runs 200 consecutive steps of its replica.
# Events: `arrived` at its first step's t_issue, `finished` at its last step's t_done.
# Written one hour at a time into day=YYYY-MM-DD/hour=HH/ (each COPY partitions its hour by
# replica), so the generator never holds more than an hour of the fleet.
GENERATE = """
copy (
    with s as (
        select i, i % $replicas as r, i // $replicas as k,
               $t0 + i * ($span / $rows) as t
        from range($lo, $hi) x(i)
    ),
    rows as (
        select 'step' as type, null::double as t, 'x' || r || '-' || (k // 200) as execution_id,
               null::varchar as event, null::bigint as prompt_tokens, k as step,
               t as t_issue, t + 0.03 as t_done,
               case when k % 200 = 0 then 2048 else 0 end::bigint as prompt_computed,
               0::bigint as prompt_cached, case when k % 200 = 0 then 0 else 1 end::bigint
                   as decode_tokens, r
        from s
        union all
        select 'event', t + case when k % 200 = 0 then 0 else 0.03 end,
               'x' || r || '-' || (k // 200),
               case when k % 200 = 0 then 'arrived' else 'finished' end,
               case when k % 200 = 0 then 2048 end, null, null, null, null, null, null, r
        from s where k % 200 in (0, 199)
    )
    select * exclude (r), 'r' || lpad(r::varchar, 3, '0') as replica
    from rows
) to '{out}' (format parquet, partition_by (replica), row_group_size 122880)
"""


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    return 0.0


def one(argv: list[str]) -> None:
    """A whole relplan command in this (fresh) process; prints wall s and peak RSS."""
    from relplan.cli import app

    t = time.perf_counter()
    try:
        app(argv, standalone_mode=False)
    finally:
        wall = time.perf_counter() - t
        print(json.dumps({"wall": wall, "rss_mb": rss_mb()}), file=sys.stderr)


def run(argv: list[str]) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, __file__, "--one", json.dumps(argv)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=7200,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"relplan {' '.join(argv)} failed:\n{proc.stderr[-3000:]}")
    res: dict[str, float] = json.loads(proc.stderr.strip().splitlines()[-1])
    return res


def files_read(db: Path, t_from: float, t_to: float) -> tuple[int, int]:
    """Files the steps scan reads with the window as analyze narrows it, and all files."""
    from relplan.workspace import open_workspace
    from relplan.workspace.attached import narrow

    with open_workspace(db, read_only=True) as con:
        narrow(con, t_from, t_to)
        plan = "\n".join(
            str(r[1])
            for r in con.execute(
                "explain analyze select sum(prompt_computed) from steps"
            ).fetchall()
        )
    read = re.search(r"Total Files Read: (\d+)", plan)
    scanning = re.search(r"Scanning Files: (\d+)/(\d+)", plan)
    if read is None or scanning is None:
        raise SystemExit("no file counts in the plan:\n" + plan)
    return int(read.group(1)), int(scanning.group(2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--rows", type=int, default=100_000_000, help="step rows in all")
    ap.add_argument("--replicas", type=int, default=50)
    ap.add_argument("--hours", type=int, default=24)
    ap.add_argument("--out", type=Path, default=Path("/work/tmp/relplan-attach-bench"))
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    args = ap.parse_args()
    if args.one:
        one(json.loads(args.one))
        return
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    parts, db = args.out / "traces", args.out / "ws.duckdb"
    try:
        t = time.perf_counter()
        # The generator's own memory is bounded too (the machine is shared); DuckDB spills.
        con = duckdb.connect(
            config={
                "memory_limit": "2GB",
                "preserve_insertion_order": False,
                "temp_directory": str(args.out / "gen.tmp"),
            }
        )
        span = args.hours * 3600.0
        per_hour = args.rows // args.hours
        for h in range(args.hours):
            day = time.strftime("%Y-%m-%d", time.gmtime(T0 + h * 3600))
            out = parts / f"day={day}" / f"hour={time.gmtime(T0 + h * 3600).tm_hour:02d}"
            out.parent.mkdir(parents=True, exist_ok=True)
            hi = args.rows if h == args.hours - 1 else (h + 1) * per_hour
            con.execute(
                GENERATE.replace("{out}", str(out).replace("'", "''")),
                {
                    "replicas": args.replicas,
                    "rows": args.rows,
                    "span": span,
                    "t0": T0,
                    "lo": h * per_hour,
                    "hi": hi,
                },
            )
        con.close()
        gen = time.perf_counter() - t
        files = list(parts.rglob("*.parquet"))
        size = sum(f.stat().st_size for f in files)
        glob = f"{parts}/day=*/hour=*/replica=*/*.parquet"
        attach = run(["ingest", "--attach", glob, "--db", str(db)])
        hour = args.hours // 2  # a one-hour window in the middle of the trace
        t_from, t_to = T0 + hour * 3600 + 1, T0 + hour * 3600 + 3599
        window = ["--from", f"{t_from:.0f}", "--to", f"{t_to:.0f}"]
        analyze = run(["analyze", "--db", str(db), *window, "--json"])
        read, total = files_read(db, t_from, t_to)
        hour_files = len(list(parts.glob(f"day=*/hour={hour:02d}/replica=*/*.parquet")))
    finally:
        if not args.keep:
            shutil.rmtree(args.out, ignore_errors=True)
    peak = max(attach["rss_mb"], analyze["rss_mb"])
    print(
        f"relplan attach benchmark: {args.rows:,} step rows, {args.replicas} replicas,"
        f" {args.hours} h; {len(files):,} Parquet files, {size / 2**20:,.0f} MiB;"
        f" generated in {gen:.1f} s"
    )
    print(f"{'step':<40} {'wall s':>8} {'peak RSS MiB':>13}")
    print(
        f"{'ingest --attach (checks every row)':<40} {attach['wall']:>8.2f} {attach['rss_mb']:>13,.0f}"
    )
    print(f"{'analyze, one-hour window':<40} {analyze['wall']:>8.2f} {analyze['rss_mb']:>13,.0f}")
    print(
        f"one-hour window: the steps scan reads {read} of {total} files; that hour has {hour_files}"
    )
    ok = peak <= 2048 and read == hour_files
    print(
        f"peak RSS {peak:,.0f} MiB, {read}/{hour_files} of the hour's files:"
        f" {'meets' if ok else 'misses'} the target (<= 2 GB, only that hour's files)"
    )


if __name__ == "__main__":
    main()
