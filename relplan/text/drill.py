"""The text `relplan drill` prints: the plan before it starts, the ramp's table and why it
stopped, the result, the sweep's table and the progress lines (from relplan.drill's typed
results); and why an attempt's reply is not a delivered completion (relplan/drill/client.py
names each by a code of its `Said`; `SENTENCES` words it, relplan/wording.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from relplan.drill.capacity import Level, Ramp, RampStop
from relplan.drill.policies import RetryBudget
from relplan.drill.run import Outcome, Prepared
from relplan.drill.sweep import SweepResult, SweepRun
from relplan.tables import format_table
from relplan.values import fixed, num, pct, percent, short


def render_ramp(ramp: Ramp) -> str:
    rows = [
        [
            str(lv.concurrency),
            short(lv.seconds),
            str(lv.completed),
            str(lv.failed),
            fixed(lv.calls_per_s, 3),
            num(lv.latency_median_s, 1),
        ]
        for lv in ramp.levels
    ]
    head = ["concurrency", "seconds", "completed", "failed", "calls/s", "p50 s"]
    return (
        "Capacity ramp (closed loop, fresh prompts per call)\n"
        + format_table(head, rows, left=())
        + f"\nĈ = {fixed(ramp.capacity or 0, 3)} calls/s, the best level (concurrency"
        f" {ramp.best_concurrency}); stopped: {stopped_because(ramp.stopped)}"
    )


def stopped_because(stop: RampStop | None) -> str:
    """Why the capacity ramp stopped."""
    if stop is None:
        return ""
    if stop.reason == "small_gain":
        return (
            f"concurrency {stop.concurrency} raised the best throughput by less than"
            f" {percent(stop.min_gain)}"
        )
    return f"reached the highest concurrency ({stop.concurrency})"


def budget_text(b: RetryBudget) -> str:
    """A retry budget's settings, as the plan shows them."""
    return f"ratio {short(b.ratio)}, ttl {short(b.ttl)} s, min {short(b.min_per_s)}/s"


def render_plan(p: Prepared) -> str:
    o = p.opts
    rows = [
        [
            s.name,
            short(s.start),
            short(s.end),
            fixed(s.rate_per_s, 3),
            fixed(s.rate_per_s / p.capacity, 2),
            str(p.plan.calls_in(s.name)),
        ]
        for s in p.plan.spans
    ]
    budget = "" if o.budget is None else f", retry budget ({budget_text(o.budget)})"
    bft = ", retry only before the first token" if o.policy.before_first_token else ""
    lines = [
        f"Drill of {p.root} (model {p.model}, /v1/{'chat/completions' if o.api == 'chat' else 'completions'},"
        f" {'streaming' if o.stream else 'non-streaming'}), seed {o.seed}",
        f"Ĉ {fixed(p.capacity, 3)} calls/s ({'measured by the ramp' if p.ramp else 'given'}),"
        f" D {short(o.deadline)} s, retry {o.policy.spec}{bft}{budget},"
        f" cancellation {'on' if o.cancel else 'off'}",
        format_table(["phase", "start s", "end s", "calls/s", "× Ĉ", "calls"], rows),
        f"{p.calls} calls over {short(p.plan.duration)} s; peak rate {fixed(p.plan.peak_rate, 3)} calls/s;"
        f" expected peak in flight ≈ {fixed(p.expected_peak_in_flight, 0)} (peak rate × D), up to"
        f" {fixed(p.expected_peak_with_retries, 0)} with every retry; cap --max-in-flight"
        f" {o.max_in_flight}, --max-duration {short(o.max_duration)} s",
        f"prompts {o.prompt_tokens.text()} words ({o.prefix_tokens} shared),"
        f" outputs {o.output_tokens.text()} tokens, ignore_eos {'on' if p.ignore_eos else 'off'}",
    ]
    lines += [f"note: {n}" for n in p.notes]
    return "\n".join(lines)


def render_outcome(r: Outcome) -> str:
    out = r.prepared.folder.out
    d: Any = r.delivery
    lines = [
        f"Sent {r.attempts} attempt(s) for {r.calls_started} call(s) in {fixed(r.wall_s, 1)} s;"
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


def interrupted(r: Outcome, out: Path) -> str:
    return f"relplan: interrupted; {r.attempts} attempt(s) kept in {out}"


def render_sweep(r: SweepResult) -> str:
    unit = "× Ĉ" if r.vary == "size" else "s"
    rows = [
        [
            short(x.value),
            str(x.seed),
            str(x.calls),
            pct(x.hold_on_time_share),
            "down" if x.down else "up",
            x.verdict or "-",
        ]
        for x in r.runs
    ]
    lines = [
        f"Sweep of the pulse {r.vary} ({unit}); down = hold on-time share below"
        f" {pct(r.threshold, 0)}; Ĉ {fixed(r.capacity, 3)} calls/s",
        format_table(["pulse", "seed", "calls", "hold on time", "service", "verdict"], rows),
    ]
    per_seed = ", ".join(
        f"seed {s}: {'none' if v is None else short(v)}" for s, v in r.trigger_by_seed.items()
    )
    lo, hi = r.trigger_min, r.trigger_max
    if r.trigger_median is None or lo is None or hi is None:  # set together (sweep)
        lines.append(f"No pulse tried left the service down ({per_seed}).")
    else:
        missing = sum(1 for v in r.trigger_by_seed.values() if v is None)
        lines.append(
            f"Smallest pulse that left it down: median {short(r.trigger_median)} {unit}, range"
            f" {short(lo)}–{short(hi)} over {len(r.trigger_by_seed) - missing} seed(s)"
            + (f" ({missing} seed(s) never went down)" if missing else "")
            + f"; {per_seed}"
        )
    return "\n".join(lines)


def progress_line(elapsed: float, phase: str, c: Any) -> str:
    """The live line while a drill runs (`c`: the sender's counts)."""
    return (
        f"drill: {fixed(elapsed, 1).rjust(6)} s  {phase}  sent {c.sent}  in flight {c.in_flight}"
        f"  delivered {c.delivered}"
    )


def ramp_progress(lv: Level) -> str:
    return f"ramp: concurrency {lv.concurrency}: {fixed(lv.calls_per_s, 3)} calls/s"


def sweep_progress(r: SweepRun) -> str:
    share = r.hold_on_time_share
    return (
        f"sweep: pulse {short(r.value)} seed {r.seed}: hold on time"
        f" {share if share is None else round(share, 3)}"
        f" ({'down' if r.down else 'up'})"
    )


# --- why an attempt's reply is not a delivered completion (relplan/drill/client.py's `Said`) --


def http_status(status: int, body: str) -> str:
    """`body`: the start of the reply's body (its whitespace folded here)."""
    return f"HTTP {status}: {' '.join(body.split())}"


def stream_error(error: object) -> str:
    return f"error in the stream: {str(error)[:200]}"


def no_choices() -> str:
    return "the reply has no choices: not an OpenAI-compatible completion"


def no_done() -> str:
    return "the stream ended without data: [DONE]"


def transport(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def not_openai(exc: BaseException) -> str:
    return f"not an OpenAI-compatible reply ({exc})"


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f for f in (http_status, stream_error, no_choices, no_done, transport, not_openai)
}
