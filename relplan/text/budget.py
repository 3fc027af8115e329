"""The text of `relplan budget`: the burn table, the break-even and the what-ifs, and the
rows' verdicts and the what-ifs' descriptions (relplan/planning/budget.py names each by a code
of its `Said` with its numbers; `SENTENCES` words it, relplan/wording.py)."""

from __future__ import annotations

from collections.abc import Callable

from relplan.planning.budget import BudgetResult
from relplan.tables import format_table
from relplan.values import fixed, human_duration, num, pct, short


def render_budget(res: BudgetResult) -> str:

    i = res.inputs
    head = (
        f"Error-budget burn: {short(i.crashes)} crashes/replica, {short(i.concurrency)} streams/replica,"
        f" {i.replicas} replicas, SLO {short(i.slo * 100)} % over {human_duration(i.window_s)}"
    )
    if i.planned_restarts:
        head += f", {short(i.planned_restarts)} planned restarts/replica" + (
            " (drained)" if i.drain else " (not drained)"
        )
    if res.measured is not None:
        m = res.measured
        head += (
            f"\nMeasured from the proxy log: {num(m.streams)} streams over {num(m.span_seconds)} s on"
            f" {m.replicas_seen} replica(s): mean stream {fixed(m.mean_stream_seconds, 1)} s,"
            f" {fixed(m.mean_concurrency_per_replica, 2)} concurrent streams per replica"
        )
    if res.restarts is not None:
        r = res.restarts
        head += (
            f"\nMeasured from the restart signals: {r.crashes} crash(es), {r.planned} planned"
            f" restart(s) on {r.replicas} pod(s) in {human_duration(r.window_s)} of data,"
            f" scaled to the window: C = {short(r.crashes_per_replica_per_window)},"
            f" P = {short(r.planned_per_replica_per_window)} per replica"
        )
    if res.input_sources:
        head += "\nInputs: " + ", ".join(
            f"{name} {source}" for name, source in res.input_sources.items()
        )
    b = res.baseline
    rows = [
        [
            f"{short(r.stream_seconds)} s",
            num(r.streams_killed),
            num(r.requests),
            num(r.allowed_failures),
            f"{fixed(r.burn, 2)}×",
            pct(r.fraction_killed, 3),
            r.verdict,
        ]
        for r in b.rows
    ]
    table = format_table(
        ["stream", "killed", "requests", "allowed failures", "burn", "killed", "verdict"],
        rows,
        left=(6,),
    )
    lines = [
        head,
        "",
        table,
        "",
        f"Break-even stream duration: {num(b.break_even_stream_seconds, 1)} s"
        " (longer streams blow the budget on crashes alone)",
        f"Capacity lost to restarts: {num(b.capacity_lost_replica_minutes)} replica-minutes"
        f" ({pct(b.capacity_lost_share, 2)} of the window)",
    ]
    if res.as_measured is not None:
        am = res.as_measured
        burns = ", ".join(f"{short(r.stream_seconds)} s: {fixed(r.burn, 2)}×" for r in am.rows)
        lines.append(
            f"As measured: break-even {num(am.break_even_stream_seconds, 1)} s, burn {burns}"
            f" (C {short(am.crashes)}, P {short(am.planned_restarts)}"
            + (", drained" if am.drain else "")
            + f") beside the typed inputs' break-even {num(b.break_even_stream_seconds, 1)} s"
        )
    lines += ["", "What if:"]
    wi_rows = []
    for case in res.what_if:
        burns = ", ".join(f"{short(r.stream_seconds)} s: {fixed(r.burn, 2)}×" for r in case.rows)
        wi_rows.append(
            [case.name, burns, f"{num(case.break_even_stream_seconds, 1)} s", case.description]
        )
    lines.append(
        format_table(
            ["case", "burn by stream", "break-even", "what changes"], wi_rows, left=(0, 1, 3)
        )
    )
    return "\n".join(lines)


def replicas_line(replicas: int, *, seen: bool) -> str:
    """Where `relplan budget --from-db` took its replica count from."""
    if seen:
        return f"relplan: replicas: {replicas}, as seen in the proxy log (--replicas overrides)"
    return f"relplan: replicas: {replicas}, from --replicas"


# --- verdicts and what-ifs (relplan/planning/budget.py's `Said`) ---------------------------


def _cause(undrained: bool) -> str:
    return "on crashes and undrained restarts" if undrained else "on crashes alone"


def blows_budget(burn: float, undrained: bool) -> str:
    return f"blows the budget {fixed(burn, 1)}× {_cause(undrained)}"


def uses_budget(burn: float, undrained: bool) -> str:
    return f"uses {fixed(burn * 100, 0)} % of the budget {_cause(undrained)}"


def as_given() -> str:
    return "the inputs as given"


def halve_crashes(crashes: float) -> str:
    return f"{short(crashes / 2)} crashes per replica instead of {short(crashes)}"


def drain_restarts(planned: float) -> str:
    return f"drain the {short(planned)} planned restarts per replica so they kill no streams"


def nothing_to_drain() -> str:
    return "no undrained planned restarts to drain: same as the inputs"


def as_measured() -> str:
    return "every input as measured"


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        blows_budget,
        uses_budget,
        as_given,
        halve_crashes,
        drain_restarts,
        nothing_to_drain,
        as_measured,
    )
}
