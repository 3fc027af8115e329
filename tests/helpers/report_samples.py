"""A hand-made `ReportData` for the renderer tests: a small metastable incident.

The values are made up but consistent with each other (they do not come from the analyses):
they exercise every section, a hostile label in every place a data string reaches the
page, and an unavailable section.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from relplan.report import data as d
from relplan.report.charts import chart_specs
from relplan.report.html import render_html
from relplan.report.section import report_model
from relplan.report.sections import (
    amplification,
    counters,
    delivery,
    health,
    heavy_requests,
    littles_law,
    restarts,
    retry_timing,
    wasted_prefill,
)
from relplan.workspace.facts import SourceInfo

HOSTILE = "</script><script>alert(1)</script>"
GENERATED_AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def sample_report(label: str = "replica-a") -> d.ReportData:
    phases = [
        d.PhaseBand(name="base", start_s=0, end_s=120),
        d.PhaseBand(name="pulse", start_s=120, end_s=227),
        d.PhaseBand(name="hold", start_s=227, end_s=947),
    ]
    load_bins = []
    for i in range(0, 960, 30):
        pulse = 120 <= i < 227
        after = i >= 227
        load_bins.append(
            amplification.RateBin(
                start_s=i,
                end_s=i + 30,
                calls=2.7 if pulse else 0.6,
                accepted=2.4 if after else (2.7 if pulse else 0.6),
                completed=0.96 if i >= 120 else 0.6,
                completed_waiting=0.05 if after else 0.6,
            )
        )
    delivery_bins = [
        delivery.OnTimeBin(
            start_s=i,
            end_s=i + 30,
            calls=18,
            on_time_share=1.0 if i < 120 else 0.0,
        )
        for i in range(0, 960, 30)
    ]
    rises = [
        counters.CounterRisePoint(
            t_s=t,
            replica=label,
            prompt_rise=60000.0 if t < 150 else 4000.0,
            query_rise=60000.0 if t < 150 else 90000.0,
            shortfall=0.0 if t < 150 else 1 - 4000 / 90000,
        )
        for t in range(60, 960, 15)
    ]
    queue_points = []
    for t in range(0, 960, 30):
        waiting = 0.5 if t < 120 else min(300.0, (t - 120) * 1.7)
        queue_points += [
            littles_law.WaitingPoint(start_s=t, end_s=t + 30, series="waiting", value=waiting),
            littles_law.WaitingPoint(
                start_s=t, end_s=t + 30, series="waiting_metrics", value=waiting * 0.97
            ),
            littles_law.WaitingPoint(
                start_s=t, end_s=t + 30, series="deadline", value=200.0 if t >= 227 else 72.0
            ),
        ]
    stats = [
        retry_timing.RetryStat(window=w, measure="gap", n=n, p10_s=0.1, median_s=0.4, p90_s=1.2)
        for w, n in (("run", 400), ("pulse", 40), (label, 360))
    ] + [
        retry_timing.RetryStat(
            window=w, measure="slack", n=n, p10_s=-20.0, median_s=-0.7, p90_s=15.0
        )
        for w, n in (("run", 400), ("pulse", 40), (label, 360))
    ]
    return report_model()(
        title=f"Incident report: {label}",
        run_name=label,
        t0=1764460800.0,
        end_s=960.0,
        capacity_calls_per_s=2.78,
        deadline_s=120.0,
        phases=phases,
        verdict=d.VerdictBlock(
            verdict="metastable",
            headline="Metastable: the engine did not recover after the pulse ended.",
            reasons=[
                "Executions were accepted at 2.40× capacity after the pulse, completed at 0.96×.",
                "76.0 % of executions were created by retries.",
            ],
            figures=[
                d.KeyFigure(label="accepted after the pulse", value=2.4, text="2.40×"),
                d.KeyFigure(label="created by retries", value=0.76, text="76.0 %"),
                d.KeyFigure(label=f"model {label}", value=None, text=label),
            ],
        ),
        amplification=amplification.AmplificationSection(
            title="Load and retry amplification",
            question="Was the engine offered more work than it could do, and who created it?",
            finding="After the pulse, calls arrived at 0.60× capacity but executions were accepted at 2.40×.",
            capacity_calls_per_s=2.78,
            bins=load_bins,
            table=d.Table(
                columns=["phase", "calls ×Ĉ", "accepted ×Ĉ", "completed ×Ĉ", "retry share"],
                rows=[
                    ["base", "0.60", "0.60", "0.60", "0.0 %"],
                    ["pulse", "2.70", "2.70", "0.96", "10.0 %"],
                    [label, "0.60", "2.40", "0.96", "76.0 %"],
                ],
            ),
        ),
        delivery=delivery.DeliverySection(
            title="Delivery and recovery",
            question="Did calls get answered in time, and when did that come back?",
            finding="Not recovered: no bin after the pulse reached 90 % on time.",
            overload_end_s=227.0,
            recovery_s=None,
            recovery_text="not recovered",
            bins=delivery_bins,
        ),
        wasted_prefill=wasted_prefill.WastedPrefillSection(
            title="Where the prefill went",
            question="What did the GPU spend its prefill on?",
            finding="71 % of computed prompt tokens went to executions that were aborted.",
            fates=[
                wasted_prefill.FateTokens(fate="delivered", tokens=200000, share=0.2),
                wasted_prefill.FateTokens(fate="finished_for_nobody", tokens=80000, share=0.08),
                wasted_prefill.FateTokens(fate="aborted", tokens=710000, share=0.71),
                wasted_prefill.FateTokens(fate="unfinished", tokens=10000, share=0.01),
            ],
            total_tokens=1000000,
            in_flight_tokens=50000,
            in_flight_share=50000 / 710000,
            before_first_token_tokens=640000,
            before_first_token_share=0.64,
            recomputed_tokens=0,
        ),
        counters=counters.CountersSection(
            title="Counters that miss it",
            question="Would the dashboards have shown the wasted prefill?",
            finding="The prompt-token counter rose 96 % less than the prefix-cache query counter.",
            points=rises,
            alarms=[d.Interval(replica=label, name="shortfall", start_s=165, end_s=945)],
        ),
        littles_law=littles_law.LittlesLawSection(
            title="Waiting queue against Little's law",
            question="Is the queue as long as Little's law says, and full of attempts that will time out?",
            finding="Deadline saturation 1.0: each execution waits out its whole deadline.",
            source="engine trace",
            points=queue_points,
        ),
        retry_timing=retry_timing.RetryTimingSection(
            title="Retry timing",
            question="How soon after an abort did the retry reach the GPU, and with how much of its deadline left?",
            finding="Median slack −0.7 s: most retries reached the GPU after their client had gone.",
            stats=stats,
        ),
        restarts=restarts.RestartsSection(
            title=restarts.TITLE,
            question=restarts.QUESTION,
            finding=f"1 crash(es) and 0 planned restart(s) on 1 pod(s): {label} was OOMKilled at 310 s.",
            table=d.Table(
                columns=[
                    "pod",
                    "node",
                    "at (s)",
                    "kind",
                    "cause",
                    "restarts",
                    "probes failed before",
                    "streams killed",
                    "down (s)",
                ],
                rows=[[label, "node-1", "310", "crash", "oom", "1", "–", "2", "80"]],
            ),
        ),
        health=health.HealthSection(
            title="Engine health signals",
            question="Which alerting signals would have fired, and when?",
            finding="Queue growing fired on one replica from 130 s.",
            signals=[
                "preemption storm",
                "cache full while work queues",
                "queue growing",
                "stuck replica",
                "counter divergence",
            ],
            replicas=[label],
            intervals=[
                d.Interval(replica=label, name="queue growing", start_s=130, end_s=400),
                d.Interval(replica=label, name="counter divergence", start_s=165, end_s=945),
            ],
        ),
        heavy_requests=heavy_requests.HeavyRequestsSection(
            title="Requests that hurt",
            question="Which few requests took the most prefill, KV cache or time?",
            finding=f"The heaviest prefill was {label}; a prompt_tokens limit of 16,000 cuts 5.",
            top_requests=5,
            cut_attempts=120,
            table=d.Table(
                columns=heavy_requests.COLUMNS,
                rows=[
                    ["most prefill #1", f"{label}/0", "m", label, "9.10 s of prefill steps", "–"],
                    ["prompt_tokens limit", "–", "all models", "–", "≤ 16,000", "cuts 5"],
                    ["timeout to first token", "120 attempts", "–", "–", "median 120.0 s", "–"],
                ],
            ),
        ),
        stuck=heavy_requests.StuckSection(
            title="Stuck replicas",
            question="Did a replica keep requests running without generating a token?",
            finding=f"1 stuck episode on {label}.",
            episodes=[d.Interval(replica=label, name="stuck", start_s=300, end_s=420)],
            table=d.Table(
                columns=["replica", "node", "span", "duration"],
                rows=[[label, "gpu-node-1", "00:05:00–00:07:00", "120 s"]],
            ),
        ),
        missing=d.MissingSection(
            title="What the data could not show",
            question="Which figures are absent, and which input would supply them?",
            items=[
                d.MissingItem(
                    section="capacity calibration",
                    reason=f"needs a staged ramp: phases named stage-1, stage-2, ... ({label})",
                )
            ],
        ),
        footer=d.Footer(
            sources=[
                SourceInfo(
                    name=f"{label}.parquet", kind="proxy", format="parquet", rows=2000, rejected=0
                ),
                SourceInfo(
                    name="engine.parquet", kind="engine", format="parquet", rows=90000, rejected=0
                ),
            ],
            row_counts={"attempts": 2000, "events": 9000, "steps": 80000},
            relplan_version="0.1.0",
            generated_at=GENERATED_AT,
        ),
    )


@dataclass(frozen=True)
class RenderedReport:
    """A sample report, the names of the charts it draws and its page."""

    report: d.ReportData
    charts: list[str]
    html: str


def render_sample(label: str = "replica-a") -> RenderedReport:
    report = sample_report(label)
    specs = chart_specs(report)
    return RenderedReport(report, sorted(specs), render_html(report, specs))


def collected(con: Any, name: str) -> d.ReportData:
    """`collect_report_data` on a workspace connection with default options and a fixed
    generation time (the report tests of single sections)."""
    from relplan.analyses import AnalyzeOptions
    from relplan.report.pipeline import collect_report_data

    return collect_report_data(
        con,
        AnalyzeOptions(),
        fallback_name=name,
        generated_at=datetime(2026, 1, 1, tzinfo=timezone.utc),
    )
