"""The text of `relplan budget`: the burn table, the break-even and the what-ifs."""

from __future__ import annotations

from relplan.planning.budget import BudgetResult
from relplan.tables import format_table
from relplan.values import human_duration, num, pct


def render_budget(res: BudgetResult) -> str:

    i = res.inputs
    head = (
        f"Error-budget burn: {i.crashes:g} crashes/replica, {i.concurrency:g} streams/replica,"
        f" {i.replicas} replicas, SLO {i.slo * 100:g} % over {human_duration(i.window_s)}"
    )
    if i.planned_restarts:
        head += f", {i.planned_restarts:g} planned restarts/replica" + (
            " (drained)" if i.drain else " (not drained)"
        )
    if res.measured is not None:
        m = res.measured
        head += (
            f"\nMeasured from the proxy log: {m.streams:,} streams over {m.span_seconds:,.0f} s on"
            f" {m.replicas_seen} replica(s): mean stream {m.mean_stream_seconds:.1f} s,"
            f" {m.mean_concurrency_per_replica:.2f} concurrent streams per replica"
        )
    if res.restarts is not None:
        r = res.restarts
        head += (
            f"\nMeasured from the restart signals: {r.crashes} crash(es), {r.planned} planned"
            f" restart(s) on {r.replicas} pod(s) in {human_duration(r.window_s)} of data,"
            f" scaled to the window: C = {r.crashes_per_replica_per_window:g},"
            f" P = {r.planned_per_replica_per_window:g} per replica"
        )
    if res.input_sources:
        head += "\nInputs: " + ", ".join(
            f"{name} {source}" for name, source in res.input_sources.items()
        )
    b = res.baseline
    rows = [
        [
            f"{r.stream_seconds:g} s",
            num(r.streams_killed),
            num(r.requests),
            num(r.allowed_failures),
            f"{r.burn:.2f}×",
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
        f"Break-even stream duration: {b.break_even_stream_seconds:,.1f} s"
        " (longer streams blow the budget on crashes alone)",
        f"Capacity lost to restarts: {b.capacity_lost_replica_minutes:,.0f} replica-minutes"
        f" ({pct(b.capacity_lost_share, 2)} of the window)",
    ]
    if res.as_measured is not None:
        am = res.as_measured
        burns = ", ".join(f"{r.stream_seconds:g} s: {r.burn:.2f}×" for r in am.rows)
        lines.append(
            f"As measured: break-even {am.break_even_stream_seconds:,.1f} s, burn {burns}"
            f" (C {am.crashes:g}, P {am.planned_restarts:g}"
            + (", drained" if am.drain else "")
            + f") beside the typed inputs' break-even {b.break_even_stream_seconds:,.1f} s"
        )
    lines += ["", "What if:"]
    wi_rows = []
    for case in res.what_if:
        burns = ", ".join(f"{r.stream_seconds:g} s: {r.burn:.2f}×" for r in case.rows)
        wi_rows.append(
            [case.name, burns, f"{case.break_even_stream_seconds:,.1f} s", case.description]
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
