"""The report's "What would have helped" section, from a `relplan whatif` result.

The replay needs the simulator, which the report never imports: the caller above the report
(the `relplan report` command) runs `relplan.whatif` and hands the result over
(relplan/report/section.py, EXTRA_SECTIONS). This module only words and draws it: the fit
check in one sentence, one row per control (delivered and on-time share of overload-and-later
calls, recovery, executions per call, verdict) and a bar chart of the delivered share per
control beside the incident's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from relplan.analyses.context import RunContext
from relplan.models import StrictModel
from relplan.report.charts import WIDTH, inline_data
from relplan.report.data import ReportData, SectionBase, Table
from relplan.report.section import Section
from relplan.text.sections import (
    control_report_row,
    incident_report_row,
    whatif_report_caption,
    whatif_report_finding,
)
from relplan.whatif.model import WhatIf

if TYPE_CHECKING:
    import altair as alt

TITLE = "What would have helped"
QUESTION = (
    "Replayed under each control, which would have kept the calls of the overload and after "
    "delivered, and what do I configure?"
)


class ControlBar(StrictModel):
    control: str
    label: str
    delivered_share: float
    verdict: str


class WhatWouldHaveHelpedSection(SectionBase):
    seeds: int = 0
    incident_delivered_share: float | None = None
    trusted: bool = False
    bars: list[ControlBar] = Field(default_factory=list)
    settings: list[str] = Field(default_factory=list, description="titles of the settings")


def build(w: WhatIf, ctx: RunContext) -> WhatWouldHaveHelpedSection:
    del ctx  # every figure is in the what-if result
    c = w.check
    inc = c.incident.window("overload+later")
    inc_share = None if inc is None else inc.delivered_share
    order = {n: i for i, n in enumerate(w.ranked)}
    controls = sorted(w.controls, key=lambda o: order.get(o.name, len(order)))
    rows = [incident_report_row(w)]
    bars: list[ControlBar] = []
    for o in controls:
        rows.append(control_report_row(o))
        if not o.available:
            continue
        if o.delivered_share is not None and o.delivered_share.median is not None:
            bars.append(
                ControlBar(
                    control=o.name,
                    label=o.label,
                    delivered_share=o.delivered_share.median,
                    verdict=o.verdict,
                )
            )
    return WhatWouldHaveHelpedSection(
        title=TITLE,
        question=QUESTION,
        finding=whatif_report_finding(w),
        caption=whatif_report_caption(w) if bars else "",
        seeds=w.seeds,
        incident_delivered_share=inc_share,
        trusted=c.trusted,
        bars=bars,
        settings=[f"{s.title} (for {s.control})" for s in w.settings],
        table=Table(
            columns=[
                "control",
                "delivered",
                "on time",
                "recovered after s",
                "drained after s",
                "executions per call",
                "verdict",
            ],
            rows=rows,
        ),
    )


def chart(sec: WhatWouldHaveHelpedSection, data: ReportData) -> alt.TopLevelMixin | None:
    import altair as alt

    del data
    if not sec.bars:
        return None
    rows = [{"label": b.label, "share": b.delivered_share, "verdict": b.verdict} for b in sec.bars]
    order = [b.label for b in sec.bars]
    bars = (
        alt.Chart(inline_data(rows))
        .mark_bar()
        .encode(
            y=alt.Y("label:N", title=None, sort=order),
            x=alt.X(
                "share:Q",
                title="delivered share, overload and later",
                scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(format="%"),
            ),
            color=alt.Color(
                "verdict:N",
                scale=alt.Scale(
                    domain=[
                        "recovered",
                        "draining",
                        "metastable",
                        "overloaded",
                        "insufficient data",
                    ],
                    range=["#54a24b", "#eeca3b", "#e45756", "#b279a2", "#bab0ac"],
                ),
            ),
            tooltip=[
                alt.Tooltip("label:N", title="control"),
                alt.Tooltip("share:Q", title="delivered", format=".1%"),
                alt.Tooltip("verdict:N"),
            ],
        )
    )
    layers: list[alt.Chart] = [bars]
    if sec.incident_delivered_share is not None:
        layers.append(
            alt.Chart(inline_data([{"x": sec.incident_delivered_share}]))
            .mark_rule(color="#333333", strokeDash=[6, 4])
            .encode(x=alt.X("x:Q"))
        )
    return alt.layer(*layers).properties(width=WIDTH, height=24 * len(sec.bars) + 20)


SECTION = Section(
    title=TITLE,
    question=QUESTION,
    model=WhatWouldHaveHelpedSection,
    build=build,
    chart=chart,
)
