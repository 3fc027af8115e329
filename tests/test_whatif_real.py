"""Replay checked against reality (issue 26, part 5; docs/whatif.md, Replay against real runs).

`whatif` is fitted from the operator's files of the real metastable incident recorded on the
lab (tests/data/lab/retries-no-cancel/operator: vLLM's log with its request and iteration
lines, nginx's JSON log, Prometheus's export; the one fact given is D = 10 s, which no server
log records) and predicts each control the lab then ran for real with `relplan drill` and the
same drill flags (tests/data/lab/README.md). The real figures are the drill's own record of
every attempt (client/attempts.jsonl.gz), measured by the same `figures()` as the replays.

`python -m tests.test_whatif_real` prints the table of docs/whatif.md (`... fresh`: the
fresh-prompt recordings, tests/data/lab/fresh/, checked in tests/test_whatif_real_fresh.py).
"""

from __future__ import annotations

import gzip
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from relplan.analyses import AnalyzeOptions
from relplan.values import PhaseBounds, parse_phases
from relplan.whatif.controls import Control
from relplan.whatif.model import Figures
from relplan.whatif.run import Replayed, WhatIfOptions, replay
from relplan.workspace import connect
from tests.helpers.lab import OPERATOR_FILES, ingest_operator, lab_ingest

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
        ["retry-before-first-token"],
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
# the incident's own drill: the recorded incident (2026-12-03) and the same drill and seed
# rerun on 2026-12-04 beside the three newer control runs (tests/data/lab/README.md)
AS_OBSERVED_RUNS = [INCIDENT.name, "retries-no-cancel-2"]
# the further seeds of the same drills (client truth only), tests/data/lab/paper/
MORE_SEEDS = {
    "as-observed": ["paper/retries-no-cancel-s2", "paper/retries-no-cancel-s3"],
    "no-retries": ["paper/no-retries-s2", "paper/no-retries-s3"],
    "cancellation-on": ["paper/retries-cancel-s2", "paper/retries-cancel-s3"],
    "retry-budget": ["paper/retry-budget-s2", "paper/retry-budget-s3"],
    "retry-before-first-token": ["paper/retry-before-first-token-s2"],
}


@dataclass(frozen=True)
class Lab:
    """One set of recordings: the incident's folder and, per control, the folders of its real
    runs (operator and client files) and further seeds (client truth only), under `root`."""

    root: Path
    incident: str
    controls: list[tuple[Control, list[str]]]
    as_observed: list[str]
    more_seeds: dict[str, list[str]]

    @property
    def incident_dir(self) -> Path:
        return self.root / self.incident


FIRST = Lab(LAB, INCIDENT.name, CONTROLS, AS_OBSERVED_RUNS, MORE_SEEDS)
FRESH_ROOT = LAB / "fresh"
# the controls as the lab ran them; retry before the first token was recorded as client truth
# only (fresh/paper/retry-before-first-token-s1..3)
FRESH = Lab(
    FRESH_ROOT,
    "retries-no-cancel",
    [(c, [d for d in dirs if (FRESH_ROOT / d / "operator").is_dir()]) for c, dirs in CONTROLS],
    ["retries-no-cancel"],
    {
        "as-observed": ["paper/retries-no-cancel-s2", "paper/retries-no-cancel-s3"],
        "no-retries": ["paper/no-retries-s2", "paper/no-retries-s3"],
        "cancellation-on": ["paper/retries-cancel-s2", "paper/retries-cancel-s3"],
        "retry-budget": ["paper/retry-budget-s2", "paper/retry-budget-s3"],
        "retry-before-first-token": [f"paper/retry-before-first-token-s{i}" for i in (1, 2, 3)],
    },
)


@dataclass(frozen=True)
class RunEngine:
    """The engine as one real run's own vLLM log shows it (its iteration lines): the settings
    that put it into a replay of the incident instead of the incident's engine."""

    sets: list[str]
    capacity: float
    b_ms: float


def run_engine(folder: Path, prefill: float, output: float, tmp: Path) -> RunEngine | None:
    """Fit the engine from a run's operator files (None without them)."""
    from relplan.whatif.fit import fit_engine_profile

    op = folder.parent / "operator"
    if not (op / "vllm.log.gz").is_file():
        return None
    db = tmp / f"{folder.parent.name}-engine.duckdb"
    lab_ingest(db, [op / f for f in ("vllm.log.gz", "prometheus.query_range.json.gz")])
    con = connect(db, read_only=True)
    try:
        fitted = fit_engine_profile(con, tmp, folder.parent.name)
    finally:
        con.close()
    if fitted is None:
        return None
    engine, _, costs, _ = fitted
    cap = costs.capacity(prefill, output)
    sets = [f"engine.{k}={v}" for k, v in engine.items()] + [f"capacity_calls_per_s={cap:.4g}"]
    return RunEngine(sets, cap, costs.b_ms)


@dataclass(frozen=True)
class Row:
    """One run's figures: hold delivered and on-time share, executions per call (calls planned
    from the pulse on), recovery (s after the pulse), drained (s after the pulse)."""

    delivered: float
    on_time: float
    executions_per_call: float
    recovered_s: float | None
    drained_s: float | None


def phases_of(run_json: Path) -> list[PhaseBounds]:
    """The drill's phases (its run.json) as epoch bounds, as `--phases` would give them."""
    run = json.loads(run_json.read_text(encoding="utf-8"))
    t0 = float(run["t0"])
    text = ",".join(f"{p['name']}={t0 + p['start']:.3f}:{t0 + p['end']:.3f}" for p in run["phases"])
    return parse_phases(text)


def _attempts(folder: Path) -> list[dict[str, Any]]:
    raw = gzip.decompress((folder / "attempts.jsonl.gz").read_bytes())
    return [json.loads(x) for x in raw.splitlines()]


def _hold_calls(folder: Path) -> tuple[list[str], float, list[dict[str, Any]]]:
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    t0 = float(run["t0"])
    spans = {p["name"]: (t0 + p["start"], t0 + p["end"]) for p in run["phases"]}
    rows = _attempts(folder)
    first: dict[str, float] = {}
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
    lab_ingest(db, [folder])
    fig = _figures(db, AnalyzeOptions(capacity=capacity, deadline=deadline))
    drained = None
    op = folder.parent / "operator"
    if (op / "prometheus.query_range.json.gz").is_file():
        odb = tmp / f"{folder.parent.name}-op.duckdb"
        lab_ingest(odb, [op / f for f in OPERATOR_FILES])
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


def _incident_db(tmp: Path, lab: Lab) -> Path:
    return ingest_operator(lab.incident_dir, tmp, "incident.duckdb")


def run_engines(db: Path, tmp: Path, lab: Lab = FIRST) -> dict[str, RunEngine]:
    """Each real run's own engine (by the run folder's name), fitted from its vLLM log, for
    the incident's calls: mean prefill after the prefix and mean output of the fitted calls."""
    from relplan.whatif.fit import fit_incident

    con = connect(db, read_only=True)
    try:
        fitted = fit_incident(
            con,
            tmp / "probe" / "scenario.toml",
            opts=AnalyzeOptions(
                deadline=D, phases=phases_of(lab.incident_dir / "client" / "run.json")
            ),
        )
    finally:
        con.close()
    wl = fitted.data["workload"]
    calls = [json.loads(x) for x in fitted.calls_path.read_text(encoding="utf-8").splitlines()]
    prefill = statistics.fmean(max(0, c["input_length"] - wl["prefix_tokens"]) for c in calls)
    output = statistics.fmean(c["output_length"] for c in calls)
    out: dict[str, RunEngine] = {}
    for d in sorted({d for _, dirs in lab.controls for d in dirs} | set(lab.as_observed)):
        eng = run_engine(lab.root / d / "client", prefill, output, tmp)
        if eng is not None:
            out[d] = eng
    return out


def run_replay(
    tmp: Path, seeds: int = SEEDS, lab: Lab = FIRST, every_engine: bool = True
) -> tuple[Replayed, dict[str, RunEngine]]:
    """The incident's replay under each control (the incident's engine), and under each
    control with the engine of the real run of that control (named CONTROL@RUN). The
    incident itself is replayed on the engine of every real run (`as-observed@RUN`: the
    table's rows), or with `every_engine` False only on those of the incident's own reruns
    (`lab.as_observed`), the ones the checks below compare with a real run."""
    db = _incident_db(tmp, lab)
    engines = run_engines(db, tmp, lab)
    controls = [c for c, _ in lab.controls]
    # the incident itself on each run's engine: did the control or the day's engine decide?
    controls += [
        Control(f"as-observed@{d}", "as observed", e.sets)
        for d, e in engines.items()
        if d != lab.incident and (every_engine or d in lab.as_observed)
    ]
    for c, dirs in lab.controls:
        for d in dirs:
            if d in engines:
                controls.append(
                    Control(f"{c.name}@{d}", c.label, c.sets + engines[d].sets, hooks=c.hooks)
                )
    work = tmp / "whatif"
    work.mkdir()
    con = connect(db, read_only=True)
    try:
        done = replay(
            con,
            controls,
            WhatIfOptions(seeds=seeds, jobs=2),
            work_dir=work,
            analyze_opts=AnalyzeOptions(
                deadline=D, phases=phases_of(lab.incident_dir / "client" / "run.json")
            ),
        )
    finally:
        con.close()
    return done, engines


def real_rows(capacity: float, tmp: Path, lab: Lab = FIRST) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {
        "as-observed": [real_row(lab.root / d / "client", capacity, tmp) for d in lab.as_observed]
    }
    for control, dirs in lab.controls:
        out[control.name] = [real_row(lab.root / d / "client", capacity, tmp) for d in dirs]
    for name, dirs in lab.more_seeds.items():
        out[name] += [real_row(lab.root / d, capacity, tmp) for d in dirs]
    return out


@pytest.fixture(scope="module")
def compared(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Replayed, dict[str, RunEngine], dict[str, list[Row]]]:
    tmp = tmp_path_factory.mktemp("whatif-real")
    # the incident on the other runs' engines is the table's, never checked: not replayed here
    done, engines = run_replay(tmp, every_engine=False)
    return done, engines, real_rows(float(done.fitted.data["capacity_calls_per_s"]), tmp)


def table(
    done: Replayed, engines: dict[str, RunEngine], real: dict[str, list[Row]], lab: Lab = FIRST
) -> str:
    """The predicted-vs-real table (docs/whatif.md): per control the prediction (median of
    the replay's seeds) and the real runs (each seed; the median first when several)."""

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{x:.0%}"

    def s(x: float | None) -> str:
        return "not recovered" if x is None else f"{x:.0f} s"

    def d_(x: float | None) -> str:
        return "-" if x is None else f"{x:.0f} s"

    lines = [
        "| control | | hold delivered | hold on time | executions per call | recovered after | drained after |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name in ["as-observed"] + [c.name for c, _ in lab.controls]:
        p = predicted_row(done.by_control[name])
        lines.append(
            f"| {name} | predicted | {pct(p.delivered)} | {pct(p.on_time)} | "
            f"{p.executions_per_call:.2f} | {s(p.recovered_s)} | {d_(p.drained_s)} |"
        )
        runs_of = {c.name: dirs for c, dirs in lab.controls} | {
            "as-observed": [d for d in engines if d != lab.incident]
        }
        if name in runs_of:
            for d in runs_of[name]:
                if f"{name}@{d}" not in done.by_control:
                    continue
                q = predicted_row(done.by_control[f"{name}@{d}"])
                lines.append(
                    f"| | predicted, engine of the real run (b {engines[d].b_ms:.2f} ms/token, "
                    f"Ĉ {engines[d].capacity:.2f}) | {pct(q.delivered)} | {pct(q.on_time)} | "
                    f"{q.executions_per_call:.2f} | {s(q.recovered_s)} | {d_(q.drained_s)} |"
                    + ("" if name != "as-observed" else f" (engine of {d})")
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
                    " / ".join(d_(r.drained_s) for r in rows),
                ]
            )
            + " |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    import tempfile

    args = sys.argv[1:]
    which = FRESH if "fresh" in args else FIRST
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        seeds = next((int(a) for a in args if a.isdigit()), SEEDS)
        done, engines = run_replay(tmp, seeds, which)
        cap = float(done.fitted.data["capacity_calls_per_s"])
        print(f"incident's engine: Ĉ {cap:.2f}")
        print(table(done, engines, real_rows(cap, tmp, which), which))


# --- the checks (docs/whatif.md, Replay against real runs, states the bands and why) ---

pytestmark = pytest.mark.slow
Compared = tuple[Replayed, dict[str, RunEngine], dict[str, list[Row]]]
# a prediction with the engine of the real run: its hold on-time share within this of that run's
ENGINE_MATCHED_BAND = 0.10
# a prediction from the incident alone (its own engine): within this of the real seeds' median
INCIDENT_ONLY_BAND = 0.50
# the real run of this control ran on an engine 2.5x faster than the incident's (b 0.94 vs
# 2.34 ms per prefill token, their vLLM logs): the incident alone cannot predict it
FASTER_DAY = {"longer-deadline"}


def _recovered(rows: list[Row]) -> bool:
    return sum(r.recovered_s is not None for r in rows) * 2 > len(rows)


def test_the_as_observed_replay_reproduces_the_incident(compared: Compared) -> None:
    done, _, real = compared
    p = predicted_row(done.by_control["as-observed"])
    r = real["as-observed"][0]  # seed 1, the recorded incident
    assert p.recovered_s is None
    assert r.recovered_s is None
    assert p.on_time == pytest.approx(r.on_time, abs=ENGINE_MATCHED_BAND)
    assert p.executions_per_call == pytest.approx(r.executions_per_call, rel=0.05)


def test_with_each_runs_engine_every_prediction_is_within_10_points(compared: Compared) -> None:
    done, engines, real = compared
    pairs = [
        (f"{c.name}@{d}", real[c.name][i]) for c, dirs in CONTROLS for i, d in enumerate(dirs)
    ] + [
        (f"as-observed@{d}", real["as-observed"][i])
        for i, d in enumerate(AS_OBSERVED_RUNS)
        if d != INCIDENT.name
    ]
    for name, r in pairs:
        assert name in done.by_control, f"no engine fitted for {name}: {sorted(engines)}"
        p = predicted_row(done.by_control[name])
        assert (p.recovered_s is None) == (r.recovered_s is None), (name, p, r)
        assert p.on_time == pytest.approx(r.on_time, abs=ENGINE_MATCHED_BAND), (name, p, r)


def test_the_incident_alone_ranks_the_controls_as_reality_did(compared: Compared) -> None:
    """Ranked by predicted on-time share in the hold, every control that really recovered
    (majority of seeds) comes above every one that did not; within a tier the real runs tie
    (several at 100 %), so no order is claimed. The predicted recovery itself is not claimed
    for every control: from the incident alone the retry budget is predicted 53 % on time in
    the hold (real 79-100 %), which ranks it with the recovered controls but is not two
    on-time bins in a row, so the prediction does not call it recovered (docs/whatif.md)."""
    done, _, real = compared
    names = [c.name for c, _ in CONTROLS if c.name not in FASTER_DAY] + ["as-observed"]
    really = {n: _recovered(real[n]) for n in names}
    ranked = sorted(names, key=lambda n: -predicted_row(done.by_control[n]).on_time)
    tiers = [really[n] for n in ranked]
    assert tiers == sorted(tiers, reverse=True), ranked
    assert any(tiers)  # both tiers are there: the ranking says something
    assert not all(tiers)
    for n in names:  # a prediction of recovery is never wrong
        if predicted_row(done.by_control[n]).recovered_s is not None:
            assert really[n], n


def test_the_incident_alone_is_within_its_band(compared: Compared) -> None:
    done, _, real = compared
    for c, _ in CONTROLS:
        if c.name in FASTER_DAY:
            continue
        p = predicted_row(done.by_control[c.name])
        median = statistics.median(r.on_time for r in real[c.name])
        assert p.on_time == pytest.approx(median, abs=INCIDENT_ONLY_BAND), c.name


def test_the_longer_deadline_run_is_told_apart_by_its_engine(compared: Compared) -> None:
    """From the incident alone the 20 s deadline does not recover; on the engine its real run
    had, it does, as it really did."""
    done, _, real = compared
    assert predicted_row(done.by_control["longer-deadline"]).recovered_s is None
    assert predicted_row(done.by_control["longer-deadline@longer-deadline"]).recovered_s is not None
    assert _recovered(real["longer-deadline"])
