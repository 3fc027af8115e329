"""Arrange an `AnalyzeResult` and the workspace's facts into the report's `ReportData`.

The builder receives everything it shows and queries nothing: every number comes from
`relplan.analyses` (each registered analysis, the health signals among them) or from the
workspace's facts (`relplan.workspace.facts`: run name, sources, row counts). What it does
is choose, order, word and format:
- the verdict (`verdict.py`) is the delivery analysis's recovery verdict, worded for someone
  who was not there;
- each registered analysis with a report section gets it (relplan/report/sections/, one
  module each, built from the analysis's model), or, when it did not run, the same section
  marked unavailable with the inputs it lacked (the page folds it into the last section);
- "what the data could not show" lists the skipped analyses, the inputs each section
  reports missing, an unknown Ĉ or D, and the notes on the inputs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from relplan.analyses.evidence import source_status
from relplan.analyses.result import AnalyzeResult
from relplan.report.data import Footer, MissingItem, MissingSection, PhaseBand, ReportData
from relplan.report.section import extra_sections, report_model, report_sections, section_title
from relplan.report.verdict import verdict_block
from relplan.text.report import sentence
from relplan.values import display_tz, iso_utc
from relplan.workspace.facts import WorkspaceFacts

MISSING_TITLE = "What the data could not show"
MISSING_QUESTION = "Which figures are absent, and which input would supply them?"


def build_report_data(
    res: AnalyzeResult,
    facts: WorkspaceFacts,
    generated_at: datetime,
    relplan_version: str,
    extras: dict[str, BaseModel | str] | None = None,
) -> ReportData:
    """The report's data model from the analyses' result. Pure: no I/O, no clock.

    `extras` holds the results of the extra sections (section.EXTRA_SECTIONS) a caller
    computed, or the reason one could not be computed; an extra section not in it is left out."""
    ctx = res.context
    missing_items = [
        MissingItem(section=section_title(s.analysis), reason=s.reason) for s in res.skipped
    ]
    sections: dict[str, Any] = {}
    for analysis, section in report_sections():
        result = getattr(res, analysis.name, None)
        if result is None:
            reasons = [s.reason for s in res.skipped if s.analysis == analysis.name]
            sections[analysis.name] = section.unavailable(reasons)
            continue
        sections[analysis.name] = section.build(result, ctx)
        if section.missing is not None:
            missing_items += section.missing(result, ctx)
    for name, section in extra_sections():
        value = (extras or {}).get(name)
        if isinstance(value, str):
            missing_items.append(MissingItem(section=section.title, reason=value))
        elif value is not None:
            sections[name] = section.build(value, ctx)
    if ctx.capacity is None:
        missing_items.append(
            MissingItem(
                section="capacity Ĉ",
                reason="unknown: rates are shown per second and the verdict cannot compare "
                "load with capacity; give --capacity or a run.json with capacity_calls_per_s",
            )
        )
    if ctx.deadline_s is None:
        missing_items.append(
            MissingItem(
                section="client deadline D",
                reason="unknown: no on-time share, recovery or slack; give --deadline or a "
                "run.json with deadline_s",
            )
        )
    missing_items += [MissingItem(section="note on the inputs", reason=n) for n in ctx.notes]
    # The analyses state what they lack as clauses ("wasted prefill needs an engine trace");
    # the list shows each as a sentence of its own.
    missing_items = [
        MissingItem(section=m.section, reason=sentence(m.reason)) for m in missing_items
    ]
    missing = MissingSection(
        title=MISSING_TITLE,
        question=MISSING_QUESTION,
        finding="" if missing_items else "Nothing is missing.",
        items=missing_items,
    )
    return report_model()(
        title=f"Incident report: {facts.run_name}",
        run_name=facts.run_name,
        t0=ctx.t0,
        t0_utc=iso_utc(ctx.t0),
        tz=display_tz(),
        end_s=ctx.s(ctx.window_end),
        capacity_calls_per_s=ctx.capacity,
        capacity_status=None if ctx.capacity is None else source_status(ctx.capacity_source),
        deadline_s=ctx.deadline_s,
        deadline_status=None if ctx.deadline_s is None else source_status(ctx.deadline_source),
        phases=[PhaseBand(name=p.name, start_s=p.start_s, end_s=p.end_s) for p in ctx.phases],
        verdict=verdict_block(res),
        **sections,
        missing=missing,
        footer=Footer(
            sources=facts.sources,
            row_counts=facts.row_counts,
            relplan_version=relplan_version,
            generated_at=generated_at,
        ),
    )
