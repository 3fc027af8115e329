"""Replay checked against reality (issue 26, part 5; docs/whatif.md, Replay against real runs).

`whatif` is fitted from the operator's files of the real metastable incident recorded on the
lab (tests/data/lab/retries-no-cancel/operator: vLLM's log with its request and iteration
lines, nginx's JSON log, Prometheus's export; the one fact given is D = 10 s, which no server
log records) and predicts each control the lab then ran for real with `relplan drill` and the
same drill flags (tests/data/lab/README.md). The real figures are the drill's own record of
every attempt (client/attempts.jsonl.gz), measured by the same `figures()` as the replays.

`python -m tests.test_whatif_real` prints the table of docs/whatif.md.
"""

from __future__ import annotations

import gzip
import json
import shutil
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from relplan.analyses import AnalyzeOptions
from relplan.cli import app
from relplan.whatif.controls import Control
from relplan.whatif.model import Figures
from relplan.whatif.run import Replayed, WhatIfOptions, replay
from relplan.workspace import connect

LAB = Path(__file__).parent / "data" / "lab"
INCIDENT = LAB / "retries-no-cancel"
D = 10.0
SEEDS = 3

# Each control as the lab ran it (its drill flags beside it), applied to the fitted incident.
CONTROLS: list[tuple[Control, list[str]]] = [
    (Control("no-retries", "no client retries", ["client.max_retries=0"]), ["no-retries"]),
    (
        Control(
            "cancellation-on", "cancellation on (nginx's default)", ["proxy.cancellation=immediate"]
        ),
        ["retries-cancel"],
    ),
    (
        Control(
            "retry-budget",
            "client retry budget 10 % over 10 s",
            ["proxy.retry_budget.ratio=0.1", "proxy.retry_budget.window_s=10"],
        ),
        ["retry-budget"],
    ),
    (
        Control(
            "retry-before-first-token",
            "retry only before the first token",
            [],
            hooks=("retry-before-first-token",),
        ),
        [],
    ),
    (
        Control("vllm-queue-cap", "vLLM --max-num-queued-reqs 8", ["engine.max_num_queued_reqs=8"]),
        ["vllm-queue-cap"],
    ),
    (
        Control("longer-deadline", "client deadline 20 s", ["client.deadline_s=20"]),
        ["longer-deadline"],
    ),
]
# the further seeds of the same drills (client truth only), tests/data/lab/paper/
MORE_SEEDS = {
    "as-observed": ["paper/retries-no-cancel-s2", "paper/retries-no-cancel-s3"],
    "no-retries": ["paper/no-retries-s2", "paper/no-retries-s3"],
    "cancellation-on": ["paper/retries-cancel-s2", "paper/retries-cancel-s3"],
    "retry-budget": ["paper/retry-budget-s2", "paper/retry-budget-s3"],
    "retry-before-first-token": ["paper/retry-before-first-token-s2"],
    "vllm-queue-cap": [],
    "longer-deadline": [],
}


@dataclass(frozen=True)
class Row:
    """One run's figures: hold delivered and on-time share, executions per call (calls planned
    from the pulse on), recovery (s after the pulse), drained (s after the pulse)."""

    delivered: float
    on_time: float
    executions_per_call: float
    recovered_s: float | None
    drained_s: float | None


def phases_of(run_json: Path) -> str:
    run = json.loads(run_json.read_text(encoding="utf-8"))
    t0 = float(run["t0"])
    return ",".join(f"{p['name']}={t0 + p['start']:.3f}:{t0 + p['end']:.3f}" for p in run["phases"])


def _attempts(folder: Path) -> list[dict[str, Any]]:
    raw = gzip.decompress((folder / "attempts.jsonl.gz").read_bytes())
    return [json.loads(x) for x in raw.splitlines()]


def _hold_calls(folder: Path) -> tuple[list[str], float, list[dict[str, Any]]]:
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    t0 = float(run["t0"])
    spans = {p["name"]: (t0 + p["start"], t0 + p["end"]) for p in run["phases"]}
    rows = _attempts(folder)
    first = {}
    for r in rows:
        first[r["call_id"]] = min(first.get(r["call_id"], r["t_planned"]), r["t_planned"])
    a, b = spans["hold"]
    hold = [c for c, t in first.items() if a <= t < b]
    later = [c for c, t in first.items() if t >= spans["pulse"][0]]
    return hold, float(run["deadline_s"]), [r for r in rows if r["call_id"] in set(later)]


def real_row(folder: Path, capacity: float, tmp: Path) -> Row:
    """The drill's truth: shares of the hold's calls (delivered; delivered within the run's
    D of the planned time), attempts that reached vLLM (not refused by the client's budget,
    not answered 503 by the queue cap) per call planned from the pulse on; recovery from the
    same delivery analysis the replays use."""
    hold, deadline, later = _hold_calls(folder)
    rows = _attempts(folder)
    delivered = {r["call_id"] for r in rows if r["outcome"] == "delivered"}
    on_time = {
        r["call_id"]
        for r in rows
        if r["outcome"] == "delivered" and r["t_end"] - r["t_planned"] <= deadline
    }
    reached = [r for r in later if r["outcome"] != "shed" and r.get("status") != 503]
    calls = {r["call_id"] for r in later}
    db = tmp / f"{folder.parent.name}-{folder.name}.duckdb"
    got = CliRunner().invoke(app, ["ingest", str(folder), "--db", str(db)])
    assert got.exit_code == 0, got.output
    fig = _figures(db, AnalyzeOptions(capacity=capacity, deadline=deadline))
    drained = None
    op = folder.parent / "operator"
    if (op / "prometheus.query_range.json.gz").is_file():
        odb = tmp / f"{folder.parent.name}-op.duckdb"
        files = [
            str(op / f) for f in ("vllm.log.gz", "access.json.gz", "prometheus.query_range.json.gz")
        ]
        got = CliRunner().invoke(app, ["ingest", *files, "--db", str(odb)])
        assert got.exit_code == 0, got.output
        drained = _figures(
            odb,
            AnalyzeOptions(
                capacity=capacity, deadline=deadline, phases=phases_of(folder / "run.json")
            ),
        ).drained_s
    return Row(
        delivered=sum(c in delivered for c in hold) / len(hold),
        on_time=sum(c in on_time for c in hold) / len(hold),
        executions_per_call=len(reached) / len(calls),
        recovered_s=fig.recovery_s,
        drained_s=drained,
    )


def _figures(db: Path, opts: AnalyzeOptions) -> Figures:
    from relplan.whatif.figures import figures

    con = connect(db, read_only=True)
    try:
        return figures(con, opts)
    finally:
        con.close()


def predicted_row(runs: list[Figures]) -> Row:
    """The median over seeds of the replays' figures."""

    def med(xs: list[float | None]) -> float | None:
        ys = [x for x in xs if x is not None]
        return statistics.median(ys) if ys else None

    hold = [r.window("hold") for r in runs]
    return Row(
        delivered=med([None if w is None else w.delivered_share for w in hold]) or 0.0,
        on_time=med([None if w is None else w.on_time_share for w in hold]) or 0.0,
        executions_per_call=med([r.executions_per_call for r in runs]) or 0.0,
        recovered_s=med([r.recovery_s for r in runs])
        if sum(r.recovery_s is not None for r in runs) * 2 > len(runs)
        else None,
        drained_s=med([r.drained_s for r in runs]),
    )


def run_replay(tmp: Path, seeds: int = SEEDS) -> Replayed:
    op = INCIDENT / "operator"
    files = [
        shutil.copy(op / f, tmp / f)
        for f in ("vllm.log.gz", "access.json.gz", "prometheus.query_range.json.gz")
    ]
    db = tmp / "incident.duckdb"
    got = CliRunner().invoke(
        app,
        ["ingest", *map(str, files), "--db", str(db),
         "--call-key", "http_x_relplan_call", "--attempt-field", "http_x_relplan_attempt"],
    )  # fmt: skip
    assert got.exit_code == 0, got.output
    work = tmp / "whatif"
    work.mkdir()
    con = connect(db, read_only=True)
    try:
        return replay(
            con,
            [c for c, _ in CONTROLS],
            WhatIfOptions(seeds=seeds, jobs=2),
            work_dir=work,
            analyze_opts=AnalyzeOptions(
                deadline=D, phases=phases_of(INCIDENT / "client" / "run.json")
            ),
        )
    finally:
        con.close()


def real_rows(capacity: float, tmp: Path) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {"as-observed": [real_row(INCIDENT / "client", capacity, tmp)]}
    for control, dirs in CONTROLS:
        out[control.name] = [real_row(LAB / d / "client", capacity, tmp) for d in dirs]
    for name, dirs in MORE_SEEDS.items():
        out[name] += [real_row(LAB / d, capacity, tmp) for d in dirs]
    return out


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Replayed, dict[str, list[Row]]]:
    tmp = tmp_path_factory.mktemp("whatif-real")
    done = run_replay(tmp)
    return done, real_rows(float(done.fitted.data["capacity_calls_per_s"]), tmp)


def table(done: Replayed, real: dict[str, list[Row]]) -> str:
    """The predicted-vs-real table (docs/whatif.md): per control the prediction (median of
    the replay's seeds) and the real runs (each seed; the median first when several)."""

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{x:.0%}"

    def s(x: float | None) -> str:
        return "not recovered" if x is None else f"{x:.0f} s"

    def d(x: float | None) -> str:
        return "-" if x is None else f"{x:.0f} s"

    lines = [
        "| control | | hold delivered | hold on time | executions per call | recovered after | drained after |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in ["as-observed"] + [c.name for c, _ in CONTROLS]:
        p = predicted_row(done.by_control[name])
        lines.append(
            f"| {name} | predicted | {pct(p.delivered)} | {pct(p.on_time)} | "
            f"{p.executions_per_call:.2f} | {s(p.recovered_s)} | {d(p.drained_s)} |"
        )
        rows = real[name]
        lines.append(
            f"| | real ({len(rows)} seed{'s' if len(rows) > 1 else ''}) | "
            + " | ".join(
                [
                    " / ".join(pct(r.delivered) for r in rows),
                    " / ".join(pct(r.on_time) for r in rows),
                    " / ".join(f"{r.executions_per_call:.2f}" for r in rows),
                    " / ".join(s(r.recovered_s) for r in rows),
                    " / ".join(d(r.drained_s) for r in rows),
                ]
            )
            + " |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        seeds = int(sys.argv[1]) if len(sys.argv) > 1 else SEEDS
        done = run_replay(tmp, seeds)
        print(table(done, real_rows(float(done.fitted.data["capacity_calls_per_s"]), tmp)))
