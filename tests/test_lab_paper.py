"""docs/lab.md's paper table (fresh prompts) is what the recorded drills measured: every row
is recomputed here from the drill's own record of each run (tests/data/lab/fresh, client
truth: attempts.jsonl.gz and run.json) and must appear in the doc as it is."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

FRESH = Path(__file__).parent / "data" / "lab" / "fresh"
DOC = Path(__file__).parent.parent / "docs" / "lab.md"
POLICIES = (
    "no-retries",
    "retries-cancel",
    "retries-no-cancel",
    "retry-budget",
    "retry-before-first-token",
)


def runs() -> list[tuple[str, int, Path]]:
    out = []
    for policy in POLICIES:
        for seed in (1, 2, 3):
            incident = FRESH / policy / "client"
            folder = (
                incident
                if seed == 1 and incident.exists()
                else FRESH / "paper" / f"{policy}-s{seed}"
            )
            out.append((policy, seed, folder))
    return out


def pct(x: float) -> str:
    return f"{round(100 * x)} %"


def row(policy: str, seed: int, folder: Path) -> str:
    run: dict[str, Any] = json.loads((folder / "run.json").read_text())
    rows = [
        json.loads(x)
        for x in gzip.decompress((folder / "attempts.jsonl.gz").read_bytes()).splitlines()
    ]
    d, t0 = run["deadline_s"], run["t0"]
    calls: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        calls.setdefault(r["call_id"], []).append(r)
    planned = {c: min(x["t_planned"] for x in v) for c, v in calls.items()}

    def shares(a: float, b: float) -> tuple[float, float]:
        mine = [c for c, t in planned.items() if a <= t < b]
        ok = [[x for x in calls[c] if x["outcome"] == "delivered"] for c in mine]
        delivered = sum(bool(x) for x in ok) / len(mine)
        on_time = sum(any(x["t_end"] - x["t_planned"] <= d for x in o) for o in ok) / len(mine)
        return delivered, on_time

    ph = {p["name"]: (t0 + p["start"], t0 + p["end"]) for p in run["phases"]}
    base, pulse, hold = shares(*ph["base"]), shares(*ph["pulse"]), shares(*ph["hold"])
    last = shares(ph["hold"][1] - 30, ph["hold"][1])
    sent = sum(r["outcome"] != "shed" for r in rows) / len(calls)
    return (
        f"| {policy} | {seed} | {pct(base[1])} | {pct(pulse[0])} / {pct(pulse[1])} |"
        f" {pct(hold[0])} / {pct(hold[1])} | {pct(last[1])} | {sent:.2f} |"
    )


def test_every_row_of_the_paper_table_is_measured() -> None:
    doc = DOC.read_text(encoding="utf-8")
    missing = [r for r in (row(*x) for x in runs()) if r not in doc]
    assert not missing, "\n".join(missing)


if __name__ == "__main__":  # print the table for the doc
    for x in runs():
        print(row(*x))
