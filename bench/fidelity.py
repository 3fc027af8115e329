"""Fidelity table (not a test): every built-in scenario over seeds 1-8, next to what the
published experiment found (docs/simulate.md, Fidelity).

Each run is simulated, written and summarized as `relplan simulate` does; per scenario the
table gives, for each figure, the median over the seeds and its range (min-max), and the
published outcome beside the verdicts. Figures: the verdict count, hold and steady-window
delivered share, steady-window on-time share, retry share of executions, accepted and
completed x C^, calls failed (never delivered), and the share of computed prefill that is
recomputation after preemption. Nothing is tuned per scenario, seed or figure: the runs are
the built-in scenarios as shipped.

    python bench/fidelity.py [--seeds 8] [--jobs 2] [--scenarios a,b] [--time-scale 1.0]

`--time-scale` multiplies every phase's length (0.05 for a smoke run); `--markdown` prints
the table as Markdown (the form pasted into docs/simulate.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from relplan.sim.run import prepare, run_prepared
from relplan.sim.scenario import builtin_names, load_scenario
from relplan.sim.summary import summarize
from relplan.sim.writer import write_outputs
from relplan.tables import format_table

# What the published experiment found for each condition, in our words (qualitative: the
# experiment reports recovery or not; "-" where it states no outcome for the condition).
PUBLISHED: dict[str, str] = {
    "pulse-noretry": "recovers once the backlog drains",
    "pulse-noretry-cancel": "recovers (retries off)",
    "pulse-retry": "never recovers, though the hold is under capacity",
    "pulse-retry-cancel": "never recovers: cancellation does not fix it",
    "pulse-retry-cancel-2048": "never recovers (2,048 tokens per step)",
    "pulse-retry-budget": "service restored",
    "pulse-retry-coalesce": "service restored (cancellation deferred past the backoff)",
    "pulse-retry-coalesce-cancel": "-",
    "pulse-retry-enginecap": "-",
    "pulse-retry-proxycap-newest": "-",
    "pulse1.5-retry": "recovers even with retries",
    "ramp": "C^ = 2.78 +- 0.15 calls/s",
}

FIGURES = (
    ("hold delivered", "hold_delivered"),
    ("steady delivered", "steady_delivered"),
    ("steady on time", "steady_on_time"),
    ("steady retry share", "steady_retry_share"),
    ("steady accepted xC", "steady_accepted_x"),
    ("steady completed xC", "steady_completed_x"),
    ("calls failed", "calls_failed"),
    ("recomputed prefill", "recomputed_share"),
)


def _sets(name: str, time_scale: float) -> list[str]:
    if time_scale == 1.0:
        return []
    phases = load_scenario(name).workload.phases
    return [f"workload.phases.{i}.seconds={p.seconds * time_scale:g}" for i, p in enumerate(phases)]


def run_one(args: tuple[str, int, float]) -> dict[str, Any]:
    """One scenario and seed: simulate, write, summarize; the figures of the table."""
    name, seed, time_scale = args
    p = prepare(name, _sets(name, time_scale), seed)
    sim = run_prepared(p)
    with tempfile.TemporaryDirectory() as d:
        write_outputs(sim, Path(d), {"scenario": name})
        s = summarize(Path(d), seed)
    hold = s.phases.get(s.littles_law.phase or "")
    st = s.steady
    e = sim.engine
    delivered = sum(1 for c in sim.calls if any(a.outcome == "delivered" for a in c.attempts))
    return {
        "scenario": name,
        "seed": seed,
        "verdict": s.verdict,
        "hold_delivered": None if hold is None else hold.delivered_share,
        "steady_delivered": None if st is None else st.delivered_share,
        "steady_on_time": None if st is None else st.on_time_share,
        "steady_retry_share": None if st is None else st.retry_share_of_executions,
        "steady_accepted_x": None if st is None else st.accepted_rate_x_capacity,
        "steady_completed_x": None if st is None else st.completed_rate_x_capacity,
        "calls_failed": float(len(sim.calls) - delivered),
        "recomputed_share": e.recomputed_tokens_total / max(1, e.prefill_tokens_total),
    }


def _fmt(values: list[float | None], key: str) -> str:
    got = [v for v in values if v is not None]
    if not got:
        return "-"
    pct = key != "calls_failed" and not key.endswith("_x")
    med, lo, hi = statistics.median(got), min(got), max(got)

    def one(v: float) -> str:
        return f"{100 * v:.1f} %" if pct else (f"{v:.0f}" if key == "calls_failed" else f"{v:.2f}")

    return f"{one(med)} ({one(lo)}-{one(hi)})" if len(got) > 1 else one(med)


def table(rows: list[dict[str, Any]], markdown: bool) -> str:
    names = list(dict.fromkeys(r["scenario"] for r in rows))
    headers = ["scenario", "verdicts", *(label for label, _ in FIGURES), "published outcome"]
    body = []
    for name in names:
        mine = [r for r in rows if r["scenario"] == name]
        verdicts = Counter(r["verdict"] for r in mine)
        cells = [
            name,
            ", ".join(f"{v} {n}" for v, n in sorted(verdicts.items())),
            *(_fmt([r[key] for r in mine], key) for _, key in FIGURES),
            PUBLISHED.get(name, "-"),
        ]
        body.append(cells)
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += [
            "| " + " | ".join(c if i else f"`{c}`" for i, c in enumerate(r)) + " |" for r in body
        ]
        return "\n".join(lines)
    return format_table(headers, body, left=(0, 1, len(headers) - 1))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--scenarios", default=",".join(n for n in builtin_names() if n != "ramp"))
    ap.add_argument("--time-scale", type=float, default=1.0)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    names = [n for n in args.scenarios.split(",") if n]
    work = [(n, s, args.time_scale) for n in names for s in range(1, args.seeds + 1)]
    if args.jobs > 1 and len(work) > 1:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            rows = list(pool.map(run_one, work))
    else:
        rows = [run_one(w) for w in work]
    print(
        f"fidelity: {len(names)} scenarios x seeds 1-{args.seeds}, median (range) per figure"
        + (f", phases x {args.time_scale:g}" if args.time_scale != 1.0 else "")
    )
    print(table(rows, args.markdown))


if __name__ == "__main__":
    main()
