"""`relplan alerts`: Prometheus rules for relplan's signals and their offline evaluation.

`--from/--to` of `eval` and `unittest` take the one time syntax of relplan/values.py: a small
number (or `2m`) is seconds from the data's t0, the same t0 as `relplan analyze`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from typer.core import TyperGroup

from relplan.cli.options import (
    DbOption,
    FromOption,
    JsonFlag,
    ReplicaLabelOption,
    SloOption,
    ThresholdOption,
    ToOption,
    time_flag,
)
from relplan.errors import FindingError, UsageError
from relplan.values import is_relative, parse_duration, parse_slo, resolve_time

if TYPE_CHECKING:
    import duckdb

    from relplan.alerts.health import HealthResult
    from relplan.alerts.rules import Thresholds
    from relplan.alerts.slo import SloRuleSet
    from relplan.alerts.slo_eval import SloEvaluation

alerts_app = typer.Typer(
    cls=TyperGroup,
    help="Prometheus alert and SLO rules for the signals relplan checks, and their offline evaluation.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

StepOption = Annotated[
    str, typer.Option(metavar="DURATION", help="Evaluation interval, as Prometheus's.")
]


def _window(
    con: duckdb.DuckDBPyConnection, t_from: float | None, t_to: float | None
) -> tuple[float | None, float | None]:
    """Epoch seconds of --from/--to; a relative time is resolved against the data's t0."""
    if not any(t is not None and is_relative(t) for t in (t_from, t_to)):
        return t_from, t_to
    from relplan.analyses import AnalyzeOptions, resolve_context

    t0 = resolve_context(con, AnalyzeOptions()).t0
    return (
        None if t_from is None else resolve_time(t_from, t0),
        None if t_to is None else resolve_time(t_to, t0),
    )


# The label the generated rules and dashboard use for a replica (export, dashboard).
RuleLabelOption = Annotated[
    str, typer.Option(help="Label that names a replica in your Prometheus (e.g. pod).")
]


@alerts_app.command("export")
def alerts_export(
    out: Annotated[
        Path | None, typer.Option(help="Write the rule file here (default: stdout).")
    ] = None,
    replica_label: RuleLabelOption = "instance",
    threshold: ThresholdOption = None,
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
    from relplan.text import alerts as alert_text

    typer.echo(alert_text.wrote_rules(out, count))


@alerts_app.command("dashboard")
def alerts_dashboard(
    out: Annotated[
        Path | None, typer.Option(help="Write the dashboard JSON here (default: stdout).")
    ] = None,
    replica_label: RuleLabelOption = "instance",
    threshold: ThresholdOption = None,
) -> None:
    """A Grafana dashboard (JSON to import) with the panels relplan's analyses stand on.

    Example: relplan alerts dashboard --replica-label pod --out relplan.json
    """
    from relplan.alerts import dashboard as dashboard_mod
    from relplan.alerts import rules as rules_mod

    text = dashboard_mod.dashboard_json(
        rules_mod.check_label(replica_label), rules_mod.parse_thresholds(threshold)
    )
    if out is None:
        typer.echo(text, nl=False)
        return
    rules_mod.write_text_atomic(out, text)
    panels = text.count('"type": "timeseries"')
    from relplan.text import alerts as alert_text

    typer.echo(alert_text.wrote_dashboard(out, panels))


@alerts_app.command("slo")
def alerts_slo(
    errors: Annotated[
        str, typer.Option(help="Failed requests: PromQL with [$window], or a counter selector.")
    ],
    total: Annotated[
        str, typer.Option(help="All requests: PromQL with [$window], or a counter selector.")
    ],
    slo: SloOption = 99.9,
    window: Annotated[
        str, typer.Option(metavar="DURATION", help="SLO window: 30d, 4w, 7d, ...")
    ] = "30d",
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
    from relplan.text.slo import render_slo

    rs = slo_mod.slo_rules(
        parse_slo(slo),
        parse_duration(window, "--window"),
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
        typer.echo(render_slo(rs))
        from relplan.text import alerts as alert_text

        typer.echo(alert_text.wrote_slo_rules(out))


PrometheusUrlOption = Annotated[
    str | None,
    typer.Option(
        metavar="URL",
        help="Evaluate on this Prometheus-compatible server (its query API) instead of a"
        " workspace: the rule expressions run there and only their results are fetched.",
    ),
]


@alerts_app.command("eval")
def alerts_eval(
    db: DbOption = None,
    start: FromOption = None,
    end: ToOption = None,
    step: StepOption = "15s",
    replica_label: ReplicaLabelOption = None,
    threshold: ThresholdOption = None,
    prometheus_url: PrometheusUrlOption = None,
    slo_errors: Annotated[
        str | None,
        typer.Option(
            metavar="PROMQL",
            help="Also evaluate SLO burn-rate alerts: failed requests, as `alerts slo --errors`.",
        ),
    ] = None,
    slo_total: Annotated[
        str | None,
        typer.Option(metavar="PROMQL", help="All requests, as `alerts slo --total`."),
    ] = None,
    slo: SloOption = 99.9,
    slo_window: Annotated[
        str, typer.Option(metavar="DURATION", help="SLO window of the burn-rate alerts.")
    ] = "30d",
    json_out: JsonFlag = False,
) -> None:
    """Evaluate the exported rules on a workspace's metrics, or on a Prometheus server:
    firing intervals per replica.

    --from/--to default to the first and last sample; with --prometheus-url they are
    required (epoch seconds or ISO times; times relative to t0 need --db).

    Example: relplan alerts eval --db incident.duckdb --step 15s
    """
    from relplan.alerts import rules as rules_mod
    from relplan.alerts import slo as slo_mod

    label = rules_mod.check_label(replica_label) if replica_label else None
    thresholds = rules_mod.parse_thresholds(threshold)
    step_s = parse_duration(step, "--step")
    t_from, t_to = time_flag(start, "--from"), time_flag(end, "--to")
    if (slo_errors is None) != (slo_total is None):
        raise UsageError("--slo-errors", "give both --slo-errors and --slo-total, or neither")
    rs = (
        slo_mod.slo_rules(
            parse_slo(slo), parse_duration(slo_window, "--slo-window"), slo_errors, slo_total
        )
        if slo_errors is not None and slo_total is not None
        else None
    )
    if prometheus_url is not None:
        health, slo_result = _eval_remote(
            prometheus_url, db, t_from, t_to, step_s, label, thresholds, rs
        )
    else:
        health, slo_result = _eval_workspace(db, t_from, t_to, step_s, label, thresholds, rs)
    _print_eval(health, slo_result, json_out)


def _eval_workspace(
    db: Path | None,
    t_from: float | None,
    t_to: float | None,
    step_s: float,
    label: str | None,
    thresholds: Thresholds,
    rs: SloRuleSet | None,
) -> tuple[HealthResult, SloEvaluation | None]:
    from relplan.alerts import health as eval_mod
    from relplan.alerts import slo_eval
    from relplan.workspace import connect, resolve_db

    con = connect(resolve_db(db), read_only=True)
    try:
        t_from, t_to = _window(con, t_from, t_to)
        health = eval_mod.evaluate_health(
            con, start=t_from, end=t_to, step=step_s, replica_label=label, rules=thresholds
        )
        slo_result = (
            slo_eval.evaluate_slo_workspace(
                con, rs, start=health.start, end=health.end, step=step_s
            )
            if rs is not None
            else None
        )
    finally:
        con.close()
    return health, slo_result


def _eval_remote(
    url: str,
    db: Path | None,
    t_from: float | None,
    t_to: float | None,
    step_s: float,
    label: str | None,
    thresholds: Thresholds,
    rs: SloRuleSet | None,
) -> tuple[HealthResult, SloEvaluation | None]:
    from relplan.alerts import pushdown, slo_eval

    if t_from is None or t_to is None:
        raise UsageError(
            "--from" if t_from is None else "--to",
            "with --prometheus-url give the window: --from and --to (epoch seconds or RFC 3339)",
        )
    if is_relative(t_from) or is_relative(t_to):
        if db is None:
            raise UsageError(
                "--from", "a time relative to t0 needs --db (the workspace that defines t0)"
            )
        from relplan.workspace import connect, resolve_db

        con = connect(resolve_db(db), read_only=True)
        try:
            t_from, t_to = _window(con, t_from, t_to)
        finally:
            con.close()
    assert t_from is not None
    assert t_to is not None
    remote = pushdown.Remote(url)
    health = pushdown.evaluate_health_remote(
        remote, start=t_from, end=t_to, step=step_s, replica_label=label, rules=thresholds
    )
    slo_result = None
    if rs is not None:
        ts = slo_eval.slo_grid(health.start, health.end, step_s)
        slo_result = slo_eval.evaluate_slo(rs, pushdown.slo_vectors_remote(remote, rs, ts), ts)
    from relplan.text import alerts as alert_text

    typer.echo(alert_text.pushed_down(remote.stats), err=True)
    return health, slo_result


def _print_eval(health: HealthResult, slo_result: SloEvaluation | None, json_out: bool) -> None:
    from relplan.text.analyze import render_health
    from relplan.text.slo import render_slo_evaluation

    if json_out:
        if slo_result is None:
            typer.echo(health.model_dump_json(indent=2))
        else:
            typer.echo(
                json.dumps(
                    {
                        "health": health.model_dump(mode="json"),
                        "slo": slo_result.model_dump(mode="json"),
                    },
                    indent=2,
                )
            )
        return
    typer.echo(render_health(health))
    if slo_result is not None:
        typer.echo(render_slo_evaluation(slo_result))


@alerts_app.command("unittest")
def alerts_unittest(
    out_dir: Annotated[Path, typer.Option(help="Directory for rules.yml and rules_test.yml.")],
    db: DbOption = None,
    start: FromOption = None,
    end: ToOption = None,
    step: Annotated[
        str, typer.Option(metavar="DURATION", help="evaluation_interval of the test.")
    ] = "15s",
    replica_label: ReplicaLabelOption = None,
    threshold: ThresholdOption = None,
    run: Annotated[
        bool, typer.Option(help="Run promtool check rules and test rules on them.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """A promtool unit test from a workspace's metrics: relplan's verdicts as expectations.

    --from/--to default to the first and last sample. Exit 1 with --run when promtool
    disagrees with relplan (or is missing).

    Example: relplan alerts unittest --db incident.duckdb --out-dir ci/ --run
    """
    from relplan.alerts import promtool as promtool_mod
    from relplan.alerts import rules as rules_mod
    from relplan.workspace import connect, resolve_db

    label = rules_mod.check_label(replica_label) if replica_label else None
    thresholds = rules_mod.parse_thresholds(threshold)
    step_s = parse_duration(step, "--step")
    t_from, t_to = time_flag(start, "--from"), time_flag(end, "--to")
    con = connect(resolve_db(db), read_only=True)
    try:
        t_from, t_to = _window(con, t_from, t_to)
        report = promtool_mod.write_unit_test(
            con,
            out_dir,
            start=t_from,
            end=t_to,
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
        from relplan.text import alerts as alert_text

        typer.echo(alert_text.wrote_unit_test(report))
        if report.promtool is not None:
            typer.echo(report.promtool)
    if run and not report.promtool_ok:
        raise FindingError("promtool disagrees with relplan's evaluation (see above)")
