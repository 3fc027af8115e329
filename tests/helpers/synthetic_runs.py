"""Small synthetic runs for the analyses' tests: rows built in Python and inserted straight
into workspace tables (in memory, or a file for the CLI tests)."""

from __future__ import annotations

import random

import duckdb

from relplan import sql
from tests.helpers.incident import T0, insert_attempts, insert_events, insert_manifest, insert_steps


def memory_workspace() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(sql.load("schema").text)
    return con


def fifo_engine_events(
    arrivals: list[float], service_s: float, prefix: str = "x", replica: str = "r0"
) -> list[tuple[float, str, str, int, str]]:
    """One FIFO server: each arrival is scheduled when the previous one finishes."""
    rows: list[tuple[float, str, str, int, str]] = []
    free = 0.0
    for i, t in enumerate(sorted(arrivals)):
        start = max(t, free)
        free = start + service_s
        x = f"{prefix}{i}"
        rows += [
            (t, x, "arrived", 100, replica),
            (start, x, "scheduled", 0, replica),
            (start + 0.1 * service_s, x, "first_token", 0, replica),
            (free, x, "finished", 0, replica),
        ]
    return rows


def recovery_run(
    con: duckdb.DuckDBPyConnection,
    *,
    calls_per_s: float,
    late_until: float | None,
    accepted_per_s: float,
    calls_per_bin_cap: int | None = None,
) -> None:
    """Ĉ = 1 call/s, D = 10 s, W = 100 s; phases pulse [0, 60) and hold [60, 300).
    Calls every 1/calls_per_s s over [0, 300); a call planned before `late_until` is
    delivered late (after 20 s), later ones after 5 s (on time); `late_until=None`: all late.
    The engine sees `arrived` events at `accepted_per_s` over [60, 300) (nothing else)."""
    rows = []
    step = 1.0 / calls_per_s
    t, i = 0.0, 0
    per_bin: dict[int, int] = {}
    while t < 300:
        b = int(t // 30)
        if calls_per_bin_cap is None or per_bin.get(b, 0) < calls_per_bin_cap:
            per_bin[b] = per_bin.get(b, 0) + 1
            late = late_until is None or t < late_until
            rows.append(
                (
                    f"c{i}",
                    0,
                    t,
                    t,
                    t + (20 if late else 5),
                    "delivered",
                    None,
                    False,
                    None,
                    None,
                    10,
                )
            )
            i += 1
        t += step
    insert_attempts(con, rows)
    ev = []
    t, j = 60.0, 0
    while t < 300:
        ev.append((t, f"e{j}", "arrived", 10, "r0"))
        t += 1.0 / accepted_per_s
        j += 1
    insert_events(con, ev)
    insert_manifest(
        con,
        {
            "name": "recovery",
            "capacity_calls_per_s": 1.0,
            "deadline_s": 10,
            "delivery_window_s": 100,
            "overload_phase": "pulse",
            "phases": [
                {"name": "pulse", "start": 0, "end": 60},
                {"name": "hold", "start": 60, "end": 300},
            ],
            "t0": T0,
        },
    )


def staged_ramp(con: duckdb.DuckDBPyConnection, rates: list[float], stage_s: float = 100.0) -> None:
    """Stages stage-1.. at the given arrival rates (deterministic spacing) into a FIFO
    server of capacity 1 call/s (service 1 s); the proxy log has one delivered attempt per
    call."""
    arrivals: list[float] = []
    phases = []
    for k, r in enumerate(rates):
        a = k * stage_s
        phases.append({"name": f"stage-{k + 1}", "start": a, "end": a + stage_s})
        n = round(r * stage_s)
        arrivals += [a + i / r for i in range(n)]
    ev = fifo_engine_events(arrivals, 1.0)
    insert_events(con, ev)
    insert_attempts(
        con,
        [
            (f"c{i}", 0, t, t, t + 1, "delivered", f"x{i}", False, None, "r0", 100)
            for i, t in enumerate(arrivals)
        ],
    )
    insert_manifest(con, {"name": "ramp", "phases": phases, "t0": T0})


def random_engine_run(
    con: duckdb.DuckDBPyConnection, seed: int, n_exec: int = 20, with_proxy: bool = True
) -> None:
    """Executions with random fates (finished, aborted, both in either order, neither,
    refused, or no event at all) and random steps, some straddling the abort."""
    rng = random.Random(seed)
    events = []
    steps = []
    attempts = []
    for i in range(n_exec):
        x = f"x{i}"
        rep = rng.choice(["r0", "r1"])
        ta = rng.uniform(0, 200)
        kind = rng.choice(["finished", "aborted", "both", "none", "refused", "ghost"])
        t_fin = ta + rng.uniform(1, 40)
        t_ab = ta + rng.uniform(1, 40)
        if kind != "ghost":
            events.append((ta, x, "arrived", 100, rep))
            if kind == "refused":
                events.append((ta + 0.1, x, "rejected", None, rep))
            else:
                events.append((ta + 0.5, x, "scheduled", None, rep))
                if rng.random() < 0.5:
                    events.append((ta + rng.uniform(0.5, 30), x, "first_token", None, rep))
                if rng.random() < 0.3:
                    events.append((ta + rng.uniform(0.5, 30), x, "preempted", None, rep))
            if kind in ("finished", "both"):
                events.append((t_fin, x, "finished", None, rep))
            if kind in ("aborted", "both"):
                events.append((t_ab, x, "aborted", None, rep))
        if kind != "refused":
            t = ta + 0.5
            for _ in range(rng.randint(0, 5)):
                d = rng.uniform(0.1, 8)
                steps.append(
                    (t, t + d, x, rng.randint(0, 500), rng.randint(0, 50), rng.randint(0, 3), rep)
                )
                t += rng.uniform(0.05, d)
        if with_proxy:
            outcome = rng.choice(["delivered", "client_gone", "error"])
            attempts.append((f"c{i}", 0, ta, ta, ta + 10, outcome, x, False, None, rep, 100))
    if events:
        insert_events(con, events)
    if steps:
        insert_steps(con, steps)
    if attempts:
        insert_attempts(con, attempts)
    insert_manifest(
        con,
        {
            "name": "random",
            "phases": [
                {"name": "a", "start": 0, "end": 100},
                {"name": "b", "start": 100, "end": 200},
                {"name": "c", "start": 200, "end": 400},
            ],
            "t0": T0,
        },
    )
