"""The report section of the toy analysis: a table of its windows, no chart."""

from __future__ import annotations

from relplan.analyses.context import RunContext
from relplan.report.data import SectionBase, Table
from relplan.report.section import Section
from relplan.values import pct
from tests.toy_analysis.analysis import AttemptOutcomes


class AttemptOutcomesSection(SectionBase):
    refused_share: float | None = None


def build(a: AttemptOutcomes, ctx: RunContext) -> AttemptOutcomesSection:
    del ctx
    return AttemptOutcomesSection(
        title=SECTION.title,
        question=SECTION.question,
        finding=a.finding,
        refused_share=a.windows[0].refused_share,
        table=Table(
            columns=["window", "attempts", "shed", "errors", "shed or failed"],
            rows=[
                [w.window, f"{w.attempts:,}", f"{w.shed:,}", f"{w.errors:,}", pct(w.refused_share)]
                for w in a.windows
            ],
        ),
    )


SECTION: Section[AttemptOutcomes, AttemptOutcomesSection] = Section(
    title="Attempt outcomes",
    question="How many attempts did the proxy shed or see fail?",
    model=AttemptOutcomesSection,
    build=build,
)
