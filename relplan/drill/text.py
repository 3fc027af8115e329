"""The text `relplan drill` prints: the plan before it starts, the ramp's table, the result."""

from __future__ import annotations

from typing import Any

from relplan.drill.capacity import Ramp
from relplan.drill.run import Outcome, Prepared
from relplan.tables import format_table
from relplan.values import num, pct


def render_ramp(ramp: Ramp) -> str:
    rows = [
        [
            str(lv.concurrency),
            f"{lv.seconds:g}",
            str(lv.completed),
            str(lv.failed),
            f"{lv.calls_per_s:.3f}",
            num(lv.latency_median_s, 1),
        ]
        for lv in ramp.levels
    ]
    head = ["concurrency", "seconds", "completed", "failed", "calls/s", "p50 s"]
    return (
        "Capacity ramp (closed loop, fresh prompts per call)\n"
        + format_table(head, rows, left=())
        + f"\nĈ = {ramp.capacity or 0:.3f} calls/s, the best level (concurrency"
        f" {ramp.best_concurrency}); stopped: {ramp.stopped_because}"
    )


def render_plan(p: Prepared) -> str:
    o = p.opts
    rows = [
        [
            s.name,
            f"{s.start:g}",
            f"{s.end:g}",
            f"{s.rate_per_s:.3f}",
            f"{s.rate_per_s / p.capacity:.2f}",
            str(p.plan.calls_in(s.name)),
        ]
        for s in p.plan.spans
    ]
    budget = "" if o.budget is None else f", retry budget ({o.budget.text()})"
    bft = ", retry only before the first token" if o.policy.before_first_token else ""
    lines = [
        f"Drill of {p.root} (model {p.model}, /v1/{'chat/completions' if o.api == 'chat' else 'completions'},"
        f" {'streaming' if o.stream else 'non-streaming'}), seed {o.seed}",
        f"Ĉ {p.capacity:.3f} calls/s ({'measured by the ramp' if p.ramp else 'given'}),"
        f" D {o.deadline:g} s, retry {o.policy.spec}{bft}{budget},"
        f" cancellation {'on' if o.cancel else 'off'}",
        format_table(["phase", "start s", "end s", "calls/s", "× Ĉ", "calls"], rows),
        f"{p.calls} calls over {p.plan.duration:g} s; peak rate {p.plan.peak_rate:.3f} calls/s;"
        f" expected peak in flight ≈ {p.expected_peak_in_flight:.0f} (peak rate × D), up to"
        f" {p.expected_peak_with_retries:.0f} with every retry; cap --max-in-flight"
        f" {o.max_in_flight}, --max-duration {o.max_duration:g} s",
        f"prompts {o.prompt_tokens.text()} words ({o.prefix_tokens} shared),"
        f" outputs {o.output_tokens.text()} tokens, ignore_eos {'on' if p.ignore_eos else 'off'}",
    ]
    lines += [f"note: {n}" for n in p.notes]
    return "\n".join(lines)


def render_outcome(r: Outcome) -> str:
    out = r.prepared.folder.out
    d: Any = r.delivery
    lines = [
        f"Sent {r.attempts} attempt(s) for {r.calls_started} call(s) in {r.wall_s:.1f} s;"
        f" the client saw {r.delivered_calls} delivered"
        f" ({pct(r.delivered_calls / r.calls_started if r.calls_started else None)});"
        f" refused by the in-flight cap {r.refused_cap}, by the retry budget {r.refused_budget};"
        f" {r.scrapes} scrape(s)"
        + (f", {r.scrape_failed} failed (last: {r.last_scrape_error})" if r.scrape_failed else ""),
    ]
    if r.interrupted:
        lines.append("Interrupted: sending stopped early; everything recorded was kept.")
    if r.hard_stopped:
        lines.append("Stopped at --max-duration: what was in flight was cancelled.")
    if d is not None:
        rows = [
            [w.window, num(w.calls), pct(w.delivered_share), pct(w.on_time_share)]
            for w in d.windows
        ]
        lines.append(format_table(["phase", "calls", "delivered", "on time"], rows))
        rec = d.recovery
        if rec is not None:
            lines.append(f"Verdict: {rec.verdict}: {rec.because}")
        else:
            lines.append(f"Verdict: none ({d.recovery_null_reason})")
    lines.append(f"Files: {out} (attempts.jsonl, metrics.scrape.txt, run.json, drill.duckdb)")
    lines.append(f"Next: relplan analyze --db {out}/drill.duckdb")
    return "\n".join(lines)
