"""Parameter sweeps: every combination of `--vary key=v1,v2,...` values x seeds, run in
parallel over processes, one summary row per run (the planning view: which control, which
pulse size, which step budget recovers).

Each run writes its four files (into `OUT/runs/<run>/` with `keep_runs`, else a temporary
directory) and is summarized from them by `summary.py`, exactly like `relplan simulate`.
Combinations are validated in the parent before anything runs, so a bad key or value fails
at once with one message. Rows come back in combination-then-seed order whatever the
parallelism, so the table is deterministic.
"""

from __future__ import annotations

import itertools
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import polars as pl

from relplan.errors import InputError
from relplan.sim.pool import spawn_context
from relplan.sim.run import prepare, run_prepared
from relplan.sim.summary import summarize
from relplan.sim.writer import check_out_dir, write_outputs


def parse_vary(items: list[str]) -> list[tuple[str, list[str]]]:
    out = []
    for item in items:
        if "=" not in item:
            raise InputError(
                f"--vary {item!r}: expected key=v1,v2,... e.g. proxy.coalesce=false,true"
            )
        key, vals = item.split("=", 1)
        values = [v.strip() for v in vals.split(",") if v.strip()]
        if not key.strip() or not values:
            raise InputError(f"--vary {item!r}: expected key=v1,v2,...")
        out.append((key.strip(), values))
    return out


def _run_one(task: tuple[str, list[str], int, str, dict[str, str]]) -> dict[str, Any]:
    ref, sets, seed, out_dir, varied = task
    t = time.perf_counter()
    p = prepare(ref, sets, seed)
    sim = run_prepared(p)
    write_outputs(
        sim,
        Path(out_dir),
        {"scenario": p.scenario.name, "scenario_source": p.source, "sets": sets},
    )
    s = summarize(Path(out_dir), seed)
    wall = time.perf_counter() - t
    row: dict[str, Any] = {"run": Path(out_dir).name, "seed": seed, **varied}
    row.update(
        {
            "capacity_calls_per_s": s.capacity_calls_per_s,
            "verdict": s.verdict,
            "recovered_after_pulse_s": s.recovered_after_pulse_s,
        }
    )
    for name, ph in s.phases.items():
        row[f"{name}_delivered_share"] = ph.delivered_share
        row[f"{name}_on_time_share"] = ph.on_time_share
        row[f"{name}_accepted_rate_x_capacity"] = ph.accepted_rate_x_capacity
    row.update(
        {
            "retry_share_of_executions": s.retry_share_of_executions,
            "prefill_aborted_share": s.prefill.aborted_share,
            "prefill_in_flight_share_of_aborted": s.prefill.in_flight_share_of_aborted,
            "prefill_before_first_token_share": s.prefill.before_first_token_share,
            "deadline_saturation": s.littles_law.deadline_saturation,
            "counter_shortfall_hold": s.counter_shortfall_hold,
            "wall_s": round(wall, 3),
        }
    )
    return row


def sweep(
    ref: str,
    vary: list[str],
    *,
    seeds: int,
    jobs: int,
    out: Path,
    sets: list[str] | None = None,
    keep_runs: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[pl.DataFrame, float]:
    """Run the sweep; write OUT/sweep.parquet and OUT/sweep.csv; return the table and wall s."""
    axes = parse_vary(vary)
    combos = list(itertools.product(*[vals for _, vals in axes])) if axes else [()]
    planned = []
    for ci, combo in enumerate(combos):
        assigns = [f"{k}={v}" for (k, _), v in zip(axes, combo, strict=False)]
        varied = {k: v for (k, _), v in zip(axes, combo, strict=False)}
        for seed in range(1, seeds + 1):
            all_sets = [*(sets or []), *assigns]
            prepare(ref, all_sets, seed)  # fail fast on a bad key or value
            planned.append((all_sets, seed, f"run{ci + 1:03d}-seed{seed}", varied))
    check_out_dir(out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = None if keep_runs else tempfile.TemporaryDirectory(prefix="relplan-sweep-")
    base = out / "runs" if keep_runs else Path(tmp.name)  # type: ignore[union-attr]
    tasks = [(ref, a, seed, str(base / name), v) for a, seed, name, v in planned]
    t = time.perf_counter()
    try:
        rows: list[dict[str, Any]] = []
        if jobs > 1 and len(tasks) > 1:
            with ProcessPoolExecutor(max_workers=jobs, mp_context=spawn_context()) as pool:
                for row in pool.map(_run_one, tasks):
                    rows.append(row)
                    if progress is not None:
                        progress(len(rows), len(tasks))
        else:
            for task in tasks:
                rows.append(_run_one(task))
                if progress is not None:
                    progress(len(rows), len(tasks))
    finally:
        if tmp is not None:
            tmp.cleanup()
    wall = time.perf_counter() - t
    df = pl.DataFrame(rows, infer_schema_length=None)
    df.write_parquet(out / "sweep.parquet")
    df.write_csv(out / "sweep.csv")
    return df, wall
