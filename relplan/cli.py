"""The typer app: parse, call one library function, print. The only typer/rich importer.

Errors: a RelplanError (or a click usage error) becomes one line on stderr,
`relplan: error: ...`, with exit code 2 (1 for findings under --fail-on). Anything else is a
bug and keeps its traceback (without locals, so data never lands in one).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click import exceptions as click_exc
from typer.core import TyperGroup

from relplan import __version__
from relplan import analyses as analyses_mod
from relplan import ingest as ingest_mod
from relplan.analyses.findings import FAIL_ON, findings, parse_fail_on
from relplan.errors import ExitCode, FindingError, RelplanError, UsageError
from relplan.planning import budget as budget_mod
from relplan.planning import pulse as pulse_mod
from relplan.planning.measured import measure_streams
from relplan.render import render_analysis, render_health
from relplan.report import pipeline as report_mod
from relplan.values import parse_duration, parse_slo, parse_time, parse_time_flag, positive
from relplan.workspace import open_workspace, resolve_db


class RelplanGroup(TyperGroup):
    """Turns expected failures into one line on stderr and an exit code, in one place."""

    def main(  # type: ignore[override]
        self, args: Sequence[str] | None = None, prog_name: str | None = None, **extra: Any
    ) -> Any:
        extra.pop("standalone_mode", None)
        try:
            rv = super().main(
                args=args, prog_name=prog_name or "relplan", standalone_mode=False, **extra
            )
        except RelplanError as exc:
            _fail(str(exc), exc.exit_code)
        except click_exc.ClickException as exc:  # usage errors included
            _fail(exc.format_message(), ExitCode.USAGE)
        except typer.Abort:
            _fail("interrupted", 130)
        sys.exit(rv if isinstance(rv, int) else 0)


def _fail(message: str, code: int) -> None:
    kind = "finding" if code == ExitCode.FINDING else "error"
    typer.echo(f"relplan: {kind}: {message}", err=True)
    sys.exit(int(code))


app = typer.Typer(
    cls=RelplanGroup,
    name="relplan",
    help="Offline trace analysis and reliability planning for LLM serving with vLLM.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")]
DbOption = Annotated[
    Path | None,
    typer.Option("--db", help="Workspace file (default $RELPLAN_DB or ./relplan.duckdb)."),
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"relplan {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Offline trace analysis and reliability planning for LLM serving with vLLM.

    Example: relplan budget --crashes 10 --concurrency 40
    """


@app.command()
def budget(
    crashes: Annotated[float, typer.Option(help="Crashes per replica per window (C).")],
    concurrency: Annotated[
        float | None,
        typer.Option(help="Mean concurrent streams per replica (K). Measured with --from-db."),
    ] = None,
    replicas: Annotated[int, typer.Option(help="Replicas (N).")] = 8,
    slo: Annotated[float, typer.Option(help="SLO, as 99.9 (percent) or 0.999.")] = 99.9,
    window: Annotated[str, typer.Option(help="SLO window: 30d, 720h, 4w, ...")] = "30d",
    stream_seconds: Annotated[
        list[float] | None,
        typer.Option(help="Mean stream duration in seconds (repeatable). Default: 10..600 s."),
    ] = None,
    restart_minutes: Annotated[
        float, typer.Option(help="Minutes a replica is down per restart.")
    ] = 6,
    planned_restarts: Annotated[
        float, typer.Option(help="Planned restarts per replica per window (P).")
    ] = 0,
    drain: Annotated[
        bool, typer.Option(help="Planned restarts drain first and kill no streams.")
    ] = False,
    from_db: Annotated[
        bool,
        typer.Option(
            "--from-db", help="Measure K and d from the workspace's proxy log (flags override)."
        ),
    ] = False,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Error-budget burn from crash rate x stream duration.

    Example: relplan budget --crashes 10 --concurrency 40
    """
    measured = None
    if from_db:
        with open_workspace(resolve_db(db), read_only=True) as con:
            measured = measure_streams(con)
        if concurrency is None:
            concurrency = measured.mean_concurrency_per_replica
        if not stream_seconds:
            stream_seconds = [measured.mean_stream_seconds]
    if concurrency is None:
        raise UsageError("--concurrency", "is required (or measure it with --from-db)")
    durations = stream_seconds or list(budget_mod.TYPICAL_STREAM_SECONDS)
    for d in durations:
        positive(d, "--stream-seconds")
    if replicas <= 0:
        raise UsageError("--replicas", f"must be a whole number greater than zero, got {replicas}")
    inputs = budget_mod.BudgetInputs(
        crashes=positive(crashes, "--crashes"),
        concurrency=positive(concurrency, "--concurrency"),
        replicas=replicas,
        slo=parse_slo(slo),
        window_s=parse_duration(window, "--window", default_unit="d"),
        stream_seconds=durations,
        restart_minutes=positive(restart_minutes, "--restart-minutes", allow_zero=True),
        planned_restarts=positive(planned_restarts, "--planned-restarts", allow_zero=True),
        drain=drain,
    )
    result = budget_mod.plan_budget(inputs, measured)
    typer.echo(result.model_dump_json(indent=2) if json_out else budget_mod.render_budget(result))


@app.command()
def pulse(
    capacity: Annotated[float, typer.Option(help="Engine capacity C^ in calls/s.")],
    pulse: Annotated[float, typer.Option(help="Pulse load as a multiple of capacity.")],
    pulse_seconds: Annotated[float, typer.Option(help="Pulse length in seconds.")],
    base: Annotated[float, typer.Option(help="Base load as a multiple of capacity.")] = 0.6,
    hold: Annotated[
        float | None, typer.Option(help="Load after the pulse (multiple). Default: --base.")
    ] = None,
    deadline: Annotated[float, typer.Option(help="Client per-attempt deadline in seconds.")] = 120,
    retries: Annotated[int, typer.Option(help="Retries per call after a timeout.")] = 3,
    json_out: JsonFlag = False,
) -> None:
    """Backlog arithmetic for an overload pulse: does it drain, or can retries lock it up?

    Example: relplan pulse --capacity 2.78 --base 0.6 --pulse 2.7 --pulse-seconds 107 --deadline 120 --retries 3
    """
    if retries < 0:
        raise UsageError("--retries", f"must be zero or more, got {retries}")
    base_x = positive(base, "--base", allow_zero=True)
    inputs = pulse_mod.PulseInputs(
        capacity_calls_per_s=positive(capacity, "--capacity"),
        base=base_x,
        pulse=positive(pulse, "--pulse"),
        pulse_seconds=positive(pulse_seconds, "--pulse-seconds"),
        hold=base_x if hold is None else positive(hold, "--hold", allow_zero=True),
        deadline_s=positive(deadline, "--deadline"),
        retries=retries,
    )
    result = pulse_mod.plan_pulse(inputs)
    typer.echo(result.model_dump_json(indent=2) if json_out else pulse_mod.render_pulse(result))


# --- relplan analyze (issue 5: analyses A-G) ---------------------------------------------

_DB_HELP = "Workspace file (default: $RELPLAN_DB or ./relplan.duckdb)."
_ONLY_HELP = (
    "Run only these analyses (repeatable or comma-separated): "
    + ", ".join(analyses_mod.ANALYSES)
    + "."
)
_TIME_HELP = "seconds from t0, epoch seconds or RFC 3339"


@app.command()
def analyze(
    db: Annotated[Path | None, typer.Option("--db", help=_DB_HELP)] = None,
    json_out: JsonFlag = False,
    only: Annotated[
        list[str] | None, typer.Option("--only", metavar="NAME", help=_ONLY_HELP)
    ] = None,
    phases: Annotated[
        str | None,
        typer.Option(help="Phases NAME=START:END,... (s from t0, or epoch); overrides run.json."),
    ] = None,
    capacity: Annotated[
        float | None, typer.Option(help="Capacity C^ in calls/s; overrides run.json.")
    ] = None,
    deadline: Annotated[
        str | None,
        typer.Option(help="Client per-attempt deadline D (120, 2m); overrides run.json."),
    ] = None,
    delivery_window: Annotated[
        str | None, typer.Option(help="Delivery window W from planned arrival; overrides run.json.")
    ] = None,
    window: Annotated[str, typer.Option(help="Rolling window of the counter series.")] = "60s",
    step: Annotated[str, typer.Option(help="Evaluation step of the rolling series.")] = "15s",
    bin_width: Annotated[
        str | None,
        typer.Option(
            "--bin", help="Bin width of the time series (default 30s, wider past 200 bins)."
        ),
    ] = None,
    t_from: Annotated[str | None, typer.Option("--from", help=f"Start: {_TIME_HELP}.")] = None,
    t_to: Annotated[str | None, typer.Option("--to", help=f"End: {_TIME_HELP}.")] = None,
    replica_label: Annotated[
        str | None,
        typer.Option(help="Metric label naming the replica (default: replica, pod, instance)."),
    ] = None,
    fail_on: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-on",
            metavar="FINDING",
            help="Exit 1 when this finding shows (repeatable or comma-separated): "
            + ", ".join(FAIL_ON)
            + ".",
        ),
    ] = None,
) -> None:
    """Every analysis the workspace supports: amplification, delivery and recovery, wasted
    prefill, counters, Little's law, retry timing, capacity calibration, engine health.

    Example: relplan analyze --db incident.duckdb --phases base=0:120,pulse=120:227
    """
    window_w = delivery_window and parse_duration(delivery_window, "--delivery-window")
    gates = parse_fail_on(fail_on or [])
    opts = analyses_mod.AnalyzeOptions(
        phases=phases,
        capacity=None if capacity is None else positive(capacity, "--capacity"),
        deadline=None if deadline is None else parse_duration(deadline, "--deadline"),
        delivery_window=window_w,
        window=parse_duration(window, "--window"),
        step=parse_duration(step, "--step"),
        bin=None if bin_width is None else parse_duration(bin_width, "--bin"),
        t_from=None if t_from is None else parse_time_flag(t_from, "--from"),
        t_to=None if t_to is None else parse_time_flag(t_to, "--to"),
        replica_label=replica_label,
        only=[n.strip() for item in (only or []) for n in item.split(",") if n.strip()],
    )
    with open_workspace(resolve_db(db), read_only=True) as con:
        result = analyses_mod.analyze(con, opts)
    out = result.model_dump_json(indent=2) if json_out else render_analysis(result)
    typer.echo(out)
    found = findings(result, gates)
    if found:
        raise FindingError("; ".join(found))


# ---- relplan simulate ------------------------------------------------------------------


class _SimulateGroup(TyperGroup):
    """`relplan simulate NAME ...` runs a scenario; `calibrate` and `sweep` are subcommands."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        words = [a for a in args if not a.startswith("-")]
        if words and words[0] not in self.commands:
            args = ["run", *args]  # `relplan simulate [OPTIONS] NAME ...` runs a scenario
        return super().parse_args(ctx, args)


simulate_app = typer.Typer(
    cls=_SimulateGroup,
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_show_locals=False,
)
app.add_typer(simulate_app, name="simulate")

SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a scenario setting: key.path=value (repeatable)."),
]


class _Progress:
    """A progress bar on stderr when it is a terminal; silent when piped."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> _Progress:
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import Progress

            self.bar = Progress(console=Console(stderr=True), transient=True)
            self.bar.__enter__()
        return self

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            return
        if self.task is None:
            self.task = self.bar.add_task(self.label, total=total)
        self.bar.update(self.task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


@simulate_app.callback()
def _simulate() -> None:
    """What-if runs of an engine behind a retrying proxy, written in the canonical formats.

    `relplan simulate NAME|FILE --out DIR` runs a built-in scenario or a scenario file;
    `relplan simulate calibrate` finds an engine's capacity; `relplan simulate sweep` runs
    combinations of settings in parallel.

    Example: relplan simulate pulse-retry-cancel --out runs/pulse-retry-cancel
    """


@simulate_app.command("run")
def simulate_run(
    scenario: Annotated[
        str,
        typer.Argument(metavar="NAME|FILE", help="Built-in scenario name or a .toml/.yaml file."),
    ],
    out: Annotated[Path, typer.Option("--out", help="Directory to write the four files into.")],
    seed: Annotated[int | None, typer.Option(help="Seed (default: the scenario's).")] = None,
    set_: SetOpt = None,
    json_out: JsonFlag = False,
) -> None:
    """Run a scenario; write proxy.parquet, engine.parquet, metrics.om.txt, run.json; summarize.

    Example: relplan simulate pulse-retry-coalesce --out runs/coalesce --seed 2 --json
    """
    from relplan.sim import run as sim_run
    from relplan.sim import summary as sim_summary

    result = sim_run.simulate(scenario, out, seed=seed, sets=list(set_ or []))
    typer.echo(sim_summary.summary_json(result) if json_out else sim_summary.render_summary(result))


@simulate_app.command("calibrate")
def simulate_calibrate(
    profile: Annotated[
        str, typer.Argument(metavar="PROFILE", help="Engine profile name or .toml file.")
    ] = "h100-7b",
    scenario: Annotated[
        str, typer.Option(help="Scenario whose engine settings and workload are calibrated.")
    ] = "ramp",
    set_: SetOpt = None,
    workload: Annotated[
        str | None,
        typer.Option(
            help="Trace whose lengths the ramp draws (Azure CSV, Mooncake JSONL, proxy log)."
        ),
    ] = None,
    seeds: Annotated[int, typer.Option(help="Seeds 1..N; C^ is the median.")] = 7,
    start: Annotated[float, typer.Option(help="First stage's rate, calls/s.")] = 2.0,
    step: Annotated[float, typer.Option(help="Rate added per stage, calls/s.")] = 0.05,
    stage_seconds: Annotated[float, typer.Option(help="Length of a stage, s.")] = 300.0,
    jobs: Annotated[int, typer.Option(help="Parallel processes.")] = 1,
    write: Annotated[
        bool, typer.Option(help="Store the result in the profile's capacity table.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Find an engine's capacity C^ by a staged ramp with patient clients.

    Example: relplan simulate calibrate h100-7b --scenario pulse-retry-cancel-2048 --jobs 2
    """
    from relplan.sim import calibrate as cal
    from relplan.sim.profiles import load_profile
    from relplan.sim.scenario import load_scenario

    if seeds < 1:
        raise UsageError("--seeds", f"must be 1 or more, got {seeds}")
    if step <= 0 or start <= 0 or stage_seconds <= 0:
        raise UsageError("--start/--step/--stage-seconds", "must be greater than zero")
    sets = list(set_ or [])
    sets.append(f"engine.profile={json.dumps(profile)}")
    if workload is not None:
        sets += [f"workload.trace.path={json.dumps(workload)}", 'workload.trace.use="lengths"']
    cal_scenario = load_scenario(scenario, sets)
    prof, _ = load_profile(profile)
    with _Progress("calibrating (seeds)") as progress:
        result = cal.calibrate(
            cal_scenario,
            prof,
            profile,
            seeds=list(range(1, seeds + 1)),
            start=start,
            step=step,
            stage_seconds=stage_seconds,
            jobs=jobs,
            write=write,
            progress=progress,
        )
    typer.echo(result.model_dump_json(indent=2) if json_out else cal.render_calibration(result))


@simulate_app.command("sweep")
def simulate_sweep(
    scenario: Annotated[
        str, typer.Argument(metavar="NAME|FILE", help="Built-in scenario name or a scenario file.")
    ],
    out: Annotated[Path, typer.Option("--out", help="Directory for sweep.csv/sweep.parquet.")],
    vary: Annotated[
        list[str] | None,
        typer.Option("--vary", help="key=v1,v2,... (repeatable; all combinations run)."),
    ] = None,
    seeds: Annotated[int, typer.Option(help="Seeds 1..N per combination.")] = 1,
    jobs: Annotated[int, typer.Option(help="Parallel processes (default: all cores).")] = 0,
    set_: SetOpt = None,
    keep_runs: Annotated[
        bool, typer.Option(help="Keep every run's files under OUT/runs/.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Run combinations of settings and seeds in parallel; one summary row per run.

    Example: relplan simulate sweep pulse-retry --vary proxy.coalesce=false,true --out runs/sw
    """
    import os

    from relplan.sim import sweep as sw

    if seeds < 1:
        raise UsageError("--seeds", f"must be 1 or more, got {seeds}")
    n_jobs = jobs if jobs > 0 else (os.cpu_count() or 1)
    with _Progress("sweep (runs)") as progress:
        df, _ = sw.sweep(
            scenario,
            list(vary or []),
            seeds=seeds,
            jobs=n_jobs,
            out=out,
            sets=list(set_ or []),
            keep_runs=keep_runs,
            progress=progress,
        )
    if json_out:
        typer.echo(json.dumps(df.to_dicts(), indent=2))
    else:
        keys = [k for k, _ in sw.parse_vary(list(vary or []))]
        typer.echo(sw.render_sweep(df, keys))
        typer.echo(f"\nwrote {out / 'sweep.csv'} and {out / 'sweep.parquet'}")


# --- ingest and inspect (issue 3) -----------------------------------------------------------


def _progress_bar() -> tuple[Any, Any]:
    """A rich progress bar on stderr when it is a terminal; (None, None) when piped."""
    if not sys.stderr.isatty():
        return None, None
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = bar.add_task("ingest", total=None)

    def update(done: int, total: int, current: str) -> None:
        bar.update(task, completed=done, total=total, description=Path(current).name or "storing")

    return bar, update


@app.command()
def ingest(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Files or directories to ingest.", show_default=False),
    ] = None,
    db: DbOption = None,
    kind: Annotated[
        str | None, typer.Option(help="Force the kind: proxy, engine, metrics or manifest.")
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="Force the format: jsonl, csv, parquet, openmetrics, scrape, query_range,"
            " vllm_log, envoy, run_json.",
        ),
    ] = None,
    on_error: Annotated[
        str,
        typer.Option(
            "--on-error",
            help="fail: stop at the first bad record; skip: keep"
            " going and store bad records in rejects.",
        ),
    ] = "fail",
    year: Annotated[
        int | None, typer.Option(help="Year of vLLM log timestamps that carry none.")
    ] = None,
    call_id_field: Annotated[
        str, typer.Option(help="Envoy access logs: the field holding the call id.")
    ] = "x-request-id",
    prometheus_url: Annotated[
        str | None, typer.Option(help="Pull metrics live from this Prometheus-compatible API.")
    ] = None,
    match: Annotated[
        str, typer.Option(help="Live pull: regular expression for metric names.")
    ] = "vllm:.*",
    start: Annotated[
        str | None, typer.Option(help="Live pull: start (epoch seconds or RFC 3339).")
    ] = None,
    end: Annotated[
        str | None, typer.Option(help="Live pull: end (epoch seconds or RFC 3339).")
    ] = None,
    step: Annotated[str, typer.Option(help="Live pull: resolution, e.g. 5s or 1m.")] = "15s",
    json_out: JsonFlag = False,
) -> None:
    """Load proxy logs, engine traces, metrics and run manifests into the workspace.

    The kind and format are detected from the content; one transaction per call, so a bad
    record or a crash leaves the workspace as it was. Re-ingesting the same content adds
    nothing.

    Live pull: relplan ingest --prometheus-url http://prometheus:9090 --match 'vllm:.*'
    --start 2025-11-30T00:00:00Z --end 2025-11-30T01:00:00Z --step 5s

    Example: relplan ingest sample_data/pulse-retry-cancel --db incident.duckdb
    """
    if on_error not in ("fail", "skip"):
        raise UsageError("--on-error", f"expected fail or skip, got {on_error!r}")
    opts = ingest_mod.IngestOptions(
        kind=kind, fmt=fmt, on_error=on_error, year=year, call_id_field=call_id_field
    )
    target = resolve_db(db)
    if prometheus_url is not None:
        if paths:
            raise UsageError("--prometheus-url", "give either PATHs or --prometheus-url, not both")
        if start is None or end is None:
            raise UsageError("--start", "a live pull needs --start and --end")
        t_start = parse_time(start)
        t_end = parse_time(end)
        if t_start is None:
            raise UsageError("--start", f"expected epoch seconds or RFC 3339, got {start!r}")
        if t_end is None:
            raise UsageError("--end", f"expected epoch seconds or RFC 3339, got {end!r}")
        rep = ingest_mod.pull_prometheus(
            target, prometheus_url, match, t_start, t_end, parse_duration(step, "--step"), opts
        )
    else:
        if not paths:
            raise UsageError("PATH", "give files or directories to ingest (or --prometheus-url)")
        bar, update = _progress_bar()
        if bar is not None:
            with bar:
                rep = ingest_mod.ingest_paths(target, paths, opts, update)
        else:
            rep = ingest_mod.ingest_paths(target, paths, opts)
    typer.echo(rep.model_dump_json(indent=2) if json_out else ingest_mod.render_ingest(rep))


@app.command("inspect")
def inspect_cmd(db: DbOption = None, json_out: JsonFlag = False) -> None:
    """What the workspace holds: sources, spans, counts, rejected rows, metrics, manifests.

    Example: relplan inspect --db incident.duckdb
    """
    rep = ingest_mod.inspect_workspace(resolve_db(db))
    typer.echo(rep.model_dump_json(indent=2) if json_out else ingest_mod.render_inspect(rep))


# --- relplan alerts: Prometheus rules and their offline evaluation -----------------------

alerts_app = typer.Typer(
    cls=TyperGroup,
    help="Prometheus alert and SLO rules for the signals relplan checks, and their offline evaluation.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(alerts_app, name="alerts")

ThresholdFlag = Annotated[
    list[str] | None,
    typer.Option(
        "--threshold",
        "--thresholds",
        help="key=value, repeatable or comma-separated: preemption_rate, kv_usage, waiting, queue_slope,"
        " shortfall, retry_amplification, for_<signal> (durations as 90s, 2m).",
    ),
]


@alerts_app.command("export")
def alerts_export(
    out: Annotated[
        Path | None, typer.Option(help="Write the rule file here (default: stdout).")
    ] = None,
    replica_label: Annotated[
        str, typer.Option(help="Label that names a replica in your Prometheus (e.g. pod).")
    ] = "instance",
    threshold: ThresholdFlag = None,
    proxy: Annotated[
        bool, typer.Option(help="Include the retry-amplification rule (Envoy metrics).")
    ] = True,
) -> None:
    """Prometheus alerting rules for the engine health signals relplan checks.

    Example: relplan alerts export --replica-label pod --out rules.yml
    """
    from relplan.alerts import rules as rules_mod

    text = rules_mod.export_health_rules(
        rules_mod.check_label(replica_label),
        rules_mod.parse_thresholds(threshold),
        proxy=proxy,
    )
    if out is None:
        typer.echo(text, nl=False)
        return
    rules_mod.write_text_atomic(out, text)
    count = text.count("\n  - alert: ")
    typer.echo(f"wrote {out}: {count} alerting rules; check with: promtool check rules {out}")


@alerts_app.command("slo")
def alerts_slo(
    errors: Annotated[
        str, typer.Option(help="Failed requests: PromQL with [$window], or a counter selector.")
    ],
    total: Annotated[
        str, typer.Option(help="All requests: PromQL with [$window], or a counter selector.")
    ],
    slo: Annotated[float, typer.Option(help="SLO, as 99.9 (percent) or 0.999.")] = 99.9,
    window: Annotated[str, typer.Option(help="SLO window: 30d, 4w, 7d, ...")] = "30d",
    name: Annotated[str, typer.Option(help="Value of the `slo` label on the rules.")] = "relplan",
    out: Annotated[
        Path | None, typer.Option(help="Write the rule file here (default: stdout).")
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Multiwindow, multi-burn-rate SLO alerts (SRE workbook) with their recording rules.

    Example: relplan alerts slo --slo 99.9 --window 30d --errors 'vllm:request_success_total{finished_reason="error"}' --total 'vllm:request_success_total' --out slo.yml
    """
    from relplan.alerts import rules as rules_mod
    from relplan.alerts import slo as slo_mod

    rs = slo_mod.slo_rules(
        parse_slo(slo),
        parse_duration(window, "--window", default_unit="d"),
        errors,
        total,
        name=name,
    )
    text = slo_mod.export_slo_rules(rs)
    if out is not None:
        rules_mod.write_text_atomic(out, text)
    if json_out:
        typer.echo(rs.model_dump_json(indent=2))
    elif out is None:
        typer.echo(text, nl=False)
    else:
        typer.echo(slo_mod.render_slo(rs))
        typer.echo(f"wrote {out}; check with: promtool check rules {out}")


@alerts_app.command("eval")
def alerts_eval(
    db: Annotated[
        Path | None, typer.Option(help="Workspace (default $RELPLAN_DB or ./relplan.duckdb).")
    ] = None,
    start: Annotated[
        float | None,
        typer.Option("--from", help="First evaluation, epoch seconds (default: first sample)."),
    ] = None,
    end: Annotated[
        float | None,
        typer.Option("--to", help="Last evaluation, epoch seconds (default: last sample)."),
    ] = None,
    step: Annotated[str, typer.Option(help="Evaluation interval, as Prometheus's.")] = "15s",
    replica_label: Annotated[
        str | None,
        typer.Option(help="Replica label (default: replica, pod or instance, first present)."),
    ] = None,
    threshold: ThresholdFlag = None,
    json_out: JsonFlag = False,
) -> None:
    """Evaluate the exported rules offline on a workspace's metrics: firing intervals per replica.

    Example: relplan alerts eval --db incident.duckdb --step 15s
    """
    from relplan.alerts import health as eval_mod
    from relplan.alerts import rules as rules_mod
    from relplan.workspace import connect, resolve_db

    label = rules_mod.check_label(replica_label) if replica_label else None
    thresholds = rules_mod.parse_thresholds(threshold)
    step_s = parse_duration(step, "--step")
    con = connect(resolve_db(db), read_only=True)
    try:
        result = eval_mod.evaluate_health(
            con, start=start, end=end, step=step_s, replica_label=label, rules=thresholds
        )
    finally:
        con.close()
    typer.echo(result.model_dump_json(indent=2) if json_out else render_health(result))


@alerts_app.command("unittest")
def alerts_unittest(
    out_dir: Annotated[Path, typer.Option(help="Directory for rules.yml and rules_test.yml.")],
    db: Annotated[
        Path | None, typer.Option(help="Workspace (default $RELPLAN_DB or ./relplan.duckdb).")
    ] = None,
    start: Annotated[
        float | None, typer.Option("--from", help="First sample time, epoch seconds.")
    ] = None,
    end: Annotated[
        float | None, typer.Option("--to", help="Last sample time, epoch seconds.")
    ] = None,
    step: Annotated[str, typer.Option(help="evaluation_interval of the test.")] = "15s",
    replica_label: Annotated[
        str | None,
        typer.Option(help="Replica label (default: replica, pod or instance, first present)."),
    ] = None,
    threshold: ThresholdFlag = None,
    run: Annotated[
        bool, typer.Option(help="Run promtool check rules and test rules on them.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """A promtool unit test from a workspace's metrics: relplan's verdicts as expectations.

    Exit 1 with --run when promtool disagrees with relplan (or is missing).
    Example: relplan alerts unittest --db incident.duckdb --out-dir ci/ --run
    """
    from relplan.alerts import promtool as promtool_mod
    from relplan.alerts import rules as rules_mod
    from relplan.workspace import connect, resolve_db

    label = rules_mod.check_label(replica_label) if replica_label else None
    thresholds = rules_mod.parse_thresholds(threshold)
    step_s = parse_duration(step, "--step")
    con = connect(resolve_db(db), read_only=True)
    try:
        report = promtool_mod.write_unit_test(
            con,
            out_dir,
            start=start,
            end=end,
            step=step_s,
            replica_label=label,
            thresholds=thresholds,
            run=run,
        )
    finally:
        con.close()
    if json_out:
        typer.echo(report.model_dump_json(indent=2))
    else:
        typer.echo(
            f"wrote {report.rules_path} and {report.test_path}: {report.evaluations} evaluations,"
            f" {report.checks} checks; firing evaluations: "
            + ", ".join(f"{k} {v}" for k, v in report.firing.items())
        )
        if report.promtool is not None:
            typer.echo(report.promtool)
    if run and not report.promtool_ok:
        raise FindingError("promtool disagrees with relplan's evaluation (see above)")


# --- relplan report (issue 6: the HTML incident report) ------------------------------------


@app.command()
def report(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="A workspace file, or a directory (or file) of raw inputs to ingest first."
            " Default: the --db workspace."
        ),
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help="Workspace file (default: $RELPLAN_DB or ./relplan.duckdb). With a raw-input"
            " PATH, the inputs are ingested into it (else into a temporary workspace).",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", metavar="FILE", help="HTML file to write. Default: reports/<run name>.html."
        ),
    ] = None,
    png: Annotated[
        Path | None,
        typer.Option("--png", metavar="DIR", help="Also write each chart as a PNG into DIR."),
    ] = None,
    svg: Annotated[
        Path | None,
        typer.Option("--svg", metavar="DIR", help="Also write each chart as an SVG into DIR."),
    ] = None,
    json_file: Annotated[
        Path | None,
        typer.Option(
            "--json", metavar="FILE", help="Also write the report's data model as JSON to FILE."
        ),
    ] = None,
    phases: Annotated[
        str | None,
        typer.Option(
            help="Phases NAME=START:END,... in seconds from t0 or epoch (overrides run.json)."
        ),
    ] = None,
    capacity: Annotated[
        float | None, typer.Option(help="Capacity C^ in calls/s (overrides run.json).")
    ] = None,
    deadline: Annotated[
        str | None,
        typer.Option(help="Client per-attempt deadline D, e.g. 120 or 2m (overrides run.json)."),
    ] = None,
    delivery_window: Annotated[
        str | None,
        typer.Option(
            help="Delivery window W from planned arrival, e.g. 840s (overrides run.json)."
        ),
    ] = None,
) -> None:
    """The HTML incident report: verdict, charts and tables of every analysis, one offline page.

    Prints the path of the page written; its size goes to stderr.

    Example: relplan report sample_data/pulse-retry-cancel
    """
    opts = analyses_mod.AnalyzeOptions(
        phases=phases,
        capacity=None if capacity is None else positive(capacity, "--capacity"),
        deadline=None if deadline is None else parse_duration(deadline, "--deadline"),
        delivery_window=None
        if delivery_window is None
        else parse_duration(delivery_window, "--delivery-window"),
    )
    files = report_mod.make_report(
        path, db=db, out=out, png_dir=png, svg_dir=svg, json_path=json_file, opts=opts
    )
    typer.echo(str(files.html))
    extra = f"; {len(files.images)} image(s)" if files.images else ""
    typer.echo(f"relplan: report {files.html_bytes / 1e6:.2f} MB{extra}", err=True)


def main() -> None:
    app()
