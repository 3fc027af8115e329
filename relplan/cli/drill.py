"""`relplan drill URL`: a reliability drill against a live OpenAI-compatible endpoint
(relplan/drill/, docs/drill.md); `relplan drill sweep URL` varies the pulse over seeds."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from relplan.errors import ExitCode, UsageError
from relplan.values import parse_duration


def _opts(**kw: Any) -> Any:
    """Flags to DrillOptions (light parsing only; the library checks the rest)."""
    from relplan.drill import plan as plan_mod
    from relplan.drill.policies import RetryBudget, parse_policy
    from relplan.drill.prompts import parse_lengths
    from relplan.drill.run import DrillOptions

    if kw["phases"]:
        phases = plan_mod.parse_phases(kw["phases"])
    else:
        phases = plan_mod.default_phases(
            base=kw["base"],
            base_seconds=parse_duration(kw["base_seconds"], "--base-seconds"),
            pulse=kw["pulse"],
            pulse_seconds=parse_duration(kw["pulse_seconds"], "--pulse-seconds"),
            hold_seconds=parse_duration(kw["hold_seconds"], "--hold-seconds"),
            drain_seconds=parse_duration(kw["drain_seconds"], "--drain-seconds"),
        )
    cap = kw["capacity"]
    if cap == "auto":
        capacity = None
    else:
        try:
            capacity = float(cap)
        except ValueError:
            raise UsageError("--capacity", f"{cap!r}: expected calls/s or auto") from None
        if not capacity > 0:
            raise UsageError("--capacity", "must be more than 0 calls/s")
    budget = None
    if kw["retry_budget"] is not None:
        if not 0 <= kw["retry_budget"] <= 10:
            raise UsageError("--retry-budget", "expected a ratio such as 0.1 (10 %)")
        budget = RetryBudget(
            kw["retry_budget"],
            parse_duration(kw["retry_budget_ttl"], "--retry-budget-ttl"),
            kw["retry_budget_min"],
        )
    if kw["api"] not in ("completions", "chat"):
        raise UsageError("--api", "expected completions or chat")
    metrics = kw["metrics_url"]
    flags = {k: v for k, v in kw.items() if k not in ("out",)}
    return DrillOptions(
        url=kw["url"],
        out=kw["out"],
        phases=phases,
        capacity=capacity,
        policy=parse_policy(kw["retry"], before_first_token=kw["retry_before_first_token"]),
        deadline=parse_duration(kw["deadline"], "--deadline"),
        cancel=kw["cancel"],
        budget=budget,
        seed=kw["seed"],
        model=kw["model"],
        api=kw["api"],
        stream=kw["stream"],
        ignore_eos=kw["ignore_eos"],
        prompt_tokens=parse_lengths(kw["prompt_tokens"], "--prompt-tokens"),
        prefix_tokens=kw["prefix_tokens"],
        output_tokens=parse_lengths(kw["output_tokens"], "--output-tokens"),
        metrics_url=None if metrics == "none" else (metrics or ""),
        scrape_every=parse_duration(kw["scrape_every"], "--scrape-every"),
        max_in_flight=kw["max_in_flight"],
        max_duration=parse_duration(kw["max_duration"], "--max-duration"),
        yes=kw["yes"],
        name=kw["name"],
        ramp_seconds=parse_duration(kw["ramp_seconds"], "--ramp-seconds"),
        ramp_max=kw["ramp_max"],
        flags={
            k: v if isinstance(v, (int, float, str, bool, type(None))) else str(v)
            for k, v in flags.items()
        },
    )


class _Progress:
    """`drill: pulse  sent 12  in flight 3  delivered 8` on stderr: redrawn on a terminal,
    one line a second with --progress when stderr is not one."""

    def __init__(self, spans: Any, force: bool) -> None:
        self.spans = spans
        self.tty = sys.stderr.isatty()
        self.on = self.tty or force

    def __call__(self, elapsed: float, c: Any) -> None:
        if not self.on:
            return
        phase = next((s.name for s in self.spans if s.start <= elapsed < s.end), "drain")
        from relplan.text.drill import progress_line

        line = progress_line(elapsed, phase, c)
        if self.tty:
            sys.stderr.write("\r" + line + "\x1b[K")
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.tty:
            sys.stderr.write("\n")


def drill(
    url: Annotated[
        str,
        typer.Argument(metavar="URL", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000."),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            metavar="DIR",
            help="New folder for attempts.jsonl, metrics.scrape.txt, run.json, drill.duckdb.",
        ),
    ],
    capacity: Annotated[
        str,
        typer.Option(
            metavar="CALLS/S|auto",
            help="Ĉ in calls/s, or auto: measure it first with a staged ramp.",
        ),
    ] = "auto",
    phases: Annotated[
        str | None,
        typer.Option(
            metavar="SPEC",
            help="NAME=SECONDS[@RATE],... RATE × Ĉ (or N/s); overrides --base/--pulse/...",
        ),
    ] = None,
    base: Annotated[float, typer.Option(help="Base and hold rate, × Ĉ.")] = 0.6,
    pulse: Annotated[float, typer.Option(help="Pulse rate, × Ĉ.")] = 2.7,
    base_seconds: Annotated[str, typer.Option(metavar="DURATION")] = "60s",
    pulse_seconds: Annotated[str, typer.Option(metavar="DURATION")] = "9s",
    hold_seconds: Annotated[str, typer.Option(metavar="DURATION")] = "180s",
    drain_seconds: Annotated[
        str, typer.Option(metavar="DURATION", help="No new calls; what is in flight ends.")
    ] = "60s",
    deadline: Annotated[
        str, typer.Option(metavar="DURATION", help="Client deadline D per attempt.")
    ] = "10s",
    retry: Annotated[
        str,
        typer.Option(
            metavar="POLICY",
            help="none, openai, anthropic, fixed:N:WAIT, uniform:N:LO:HI, exp:N:BASE:CAP.",
        ),
    ] = "none",
    retry_before_first_token: Annotated[
        bool, typer.Option(help="Retry only attempts that got no token (streaming).")
    ] = False,
    retry_budget: Annotated[
        float | None,
        typer.Option(
            metavar="RATIO",
            help="Client retry budget: retries <= RATIO × first attempts in the last TTL.",
        ),
    ] = None,
    retry_budget_ttl: Annotated[str, typer.Option(metavar="DURATION")] = "10s",
    retry_budget_min: Annotated[
        float, typer.Option(metavar="PER_S", help="Retries per second always allowed.")
    ] = 0.0,
    cancel: Annotated[
        bool,
        typer.Option(
            "--cancel/--no-cancel",
            help="At D close the connection (on), or keep reading it in the background (off).",
        ),
    ] = True,
    seed: Annotated[int, typer.Option(help="Seed of arrivals, prompts and retry waits.")] = 1,
    model: Annotated[
        str | None, typer.Option(help="Model name (default: the first of GET /v1/models).")
    ] = None,
    api: Annotated[str, typer.Option(help="completions or chat.")] = "completions",
    stream: Annotated[
        bool, typer.Option("--stream/--no-stream", help="SSE streaming or one JSON reply.")
    ] = True,
    ignore_eos: Annotated[
        bool, typer.Option(help="Send ignore_eos so outputs have max_tokens tokens (vLLM).")
    ] = True,
    prompt_tokens: Annotated[
        str, typer.Option(metavar="LENGTHS", help="N, uniform:LO-HI or normal:MEAN:SD.")
    ] = "2000",
    prefix_tokens: Annotated[
        int, typer.Option(help="Words of the prefix shared by every prompt.")
    ] = 64,
    output_tokens: Annotated[
        str, typer.Option(metavar="LENGTHS", help="max_tokens: N, uniform:LO-HI or normal:MEAN:SD.")
    ] = "64",
    metrics_url: Annotated[
        str | None,
        typer.Option(
            metavar="URL|none", help="Scrape this instead of URL/metrics; none: no scraping."
        ),
    ] = None,
    scrape_every: Annotated[str, typer.Option(metavar="DURATION")] = "1s",
    max_in_flight: Annotated[
        int, typer.Option(help="Open requests at most; a send past it is recorded as shed.")
    ] = 256,
    max_duration: Annotated[
        str, typer.Option(metavar="DURATION", help="Hard stop of the drill.")
    ] = "15m",
    ramp_seconds: Annotated[
        str, typer.Option(metavar="DURATION", help="--capacity auto: length of a ramp level.")
    ] = "30s",
    ramp_max: Annotated[int, typer.Option(help="--capacity auto: highest concurrency.")] = 64,
    name: Annotated[str, typer.Option(help="Run name in run.json.")] = "drill",
    progress: Annotated[
        bool, typer.Option(help="Progress lines on stderr even when it is not a terminal.")
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Allow a non-loopback URL.")] = False,
    sweep: Annotated[
        str | None,
        typer.Option(
            metavar="V1,V2,...",
            help="Sweep: one drill per pulse value (× Ĉ, or seconds with --sweep-vary seconds) and seed.",
        ),
    ] = None,
    sweep_seeds: Annotated[int, typer.Option(help="Sweep: seeds --seed .. --seed+N-1.")] = 3,
    sweep_vary: Annotated[
        str, typer.Option(help="Sweep: size (the pulse's rate) or seconds.")
    ] = "size",
    down_below: Annotated[
        float, typer.Option(help="Sweep: down = hold on-time share below this.")
    ] = 0.5,
) -> None:
    """Overload an OpenAI-compatible endpoint on purpose, in phases, with real client retry
    policies; record every attempt and /metrics; print relplan's delivery verdict.

    Prints the plan first; refuses a non-loopback URL without --yes. Ctrl-C stops sending and
    waits for what is in flight (a second Ctrl-C cancels it); what was recorded is kept.

    Sweep: --sweep 1.5,2,2.7 --sweep-seeds 3 runs one drill per pulse size and seed into
    DIR/runs/ and reports the smallest pulse that left the service down, with its spread.

    Example: relplan drill http://127.0.0.1:8000 --capacity 0.75 --retry fixed:3:0 --no-cancel --out runs/d1
    """
    args = dict(locals())  # the flags only: taken before any import binds a local
    from relplan.drill import run as run_mod
    from relplan.text import drill as text

    for k in ("sweep", "sweep_seeds", "sweep_vary", "down_below", "progress"):
        args.pop(k)
    opts = _opts(**args)
    if sweep is not None:
        from relplan.drill import sweep as sweep_mod

        try:
            values = [float(v) for v in sweep.split(",") if v.strip()]
        except ValueError:
            raise UsageError("--sweep", f"{sweep!r}: expected numbers such as 1.5,2,2.7") from None
        if sweep_seeds < 1:
            raise UsageError("--sweep-seeds", "must be 1 or more")

        def ran(r: Any) -> None:
            typer.echo(text.sweep_progress(r), err=True)

        res = sweep_mod.sweep(
            opts,
            values,
            list(range(seed, seed + sweep_seeds)),
            vary=sweep_vary,
            threshold=down_below,
            on_run=ran,
        )
        typer.echo(text.render_sweep(res))
        return

    def level(lv: Any) -> None:
        typer.echo(text.ramp_progress(lv), err=True)

    prepared = run_mod.prepare(opts, on_level=level)
    if prepared.ramp is not None:
        typer.echo(text.render_ramp(prepared.ramp))
    typer.echo(text.render_plan(prepared))
    bar = _Progress(prepared.plan.spans, progress)
    result = run_mod.execute(prepared, tick=bar)
    bar.close()
    typer.echo(text.render_outcome(result))
    if result.interrupted:
        typer.echo(text.interrupted(result, out), err=True)
        raise typer.Exit(int(ExitCode.INTERRUPTED))
