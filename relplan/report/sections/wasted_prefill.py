"""The report's `wasted_prefill` section: where the prefill went, from the `wasted_prefill` analysis."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field

from relplan.analyses.context import RunContext
from relplan.analyses.wasted_prefill import FATES, WastedPrefill
from relplan.models import StrictModel
from relplan.report.charts import WIDTH, inline_data
from relplan.report.data import ReportData, SectionBase, Table
from relplan.report.section import Section
from relplan.text.sections import wasted_prefill_report_rows

if TYPE_CHECKING:
    import altair as alt

TITLE = "Where the prefill went"
QUESTION = "What did the GPU spend its prefill on: answers someone received, or work thrown away?"
FATE_COLORS = {
    "delivered": "#54a24b",
    "finished": "#88d27a",
    "finished_for_nobody": "#f58518",
    "aborted": "#e45756",
    "unfinished": "#9d9d9d",
    "unknown": "#c7c7c7",
}


class FateTokens(StrictModel):
    fate: str
    tokens: int
    share: float | None


class WastedPrefillSection(SectionBase):
    fates: list[FateTokens] = Field(default_factory=list)
    total_tokens: int = 0
    in_flight_tokens: int | None = None
    in_flight_share: float | None = Field(
        default=None, description="of the aborted executions' computed prompt tokens"
    )
    before_first_token_tokens: int | None = None
    before_first_token_share: float | None = Field(
        default=None, description="of all computed prompt tokens"
    )
    recomputed_tokens: int | None = None


def build(wp: WastedPrefill, ctx: RunContext) -> WastedPrefillSection:
    del ctx  # every figure is in the analysis's own rows
    run = next(w for w in wp.windows if w.window == "run" and w.replica is None)
    fates = [
        FateTokens(fate=f, tokens=run.tokens_by_fate[f], share=run.share_by_fate.get(f))
        for f in FATES
        if run.tokens_by_fate.get(f)
    ]
    return WastedPrefillSection(
        title=TITLE,
        question=QUESTION,
        finding=wp.finding,
        fates=fates,
        total_tokens=run.computed_tokens,
        in_flight_tokens=run.inflight_prompt_tokens,
        in_flight_share=run.inflight_share_of_aborted,
        before_first_token_tokens=run.before_first_output_tokens,
        before_first_token_share=run.before_first_output_share,
        recomputed_tokens=run.recomputed_tokens,
        table=Table(
            columns=[
                "window",
                "replica",
                "computed prompt tokens",
                "delivered",
                "finished for nobody",
                "aborted",
                "aborted before first output",
                "in flight at the abort (of aborted)",
                "recomputed tokens",
            ],
            rows=wasted_prefill_report_rows(wp),
        ),
    )


def chart(sec: WastedPrefillSection, data: ReportData) -> alt.TopLevelMixin | None:
    import altair as alt

    del data
    if not sec.fates:
        return None
    all_row = "all computed prompt tokens"
    rows: list[dict[str, Any]] = [
        {"row": all_row, "part": f.fate, "tokens": f.tokens, "share": f.share, "order": i}
        for i, f in enumerate(sec.fates)
    ]
    colors = dict(FATE_COLORS)
    if sec.before_first_token_tokens is not None:
        row = "of all: aborted before first output"
        rest = max(sec.total_tokens - sec.before_first_token_tokens, 0)
        rows += [
            {
                "row": row,
                "part": "aborted before first output",
                "tokens": sec.before_first_token_tokens,
                "share": sec.before_first_token_share,
                "order": 10,
            },
            {"row": row, "part": "other", "tokens": rest, "share": None, "order": 11},
        ]
        colors["aborted before first output"] = "#b71c1c"
    if sec.in_flight_tokens is not None:
        aborted = next((f.tokens for f in sec.fates if f.fate == "aborted"), 0)
        row = "of aborted: in flight at the abort"
        rows += [
            {
                "row": row,
                "part": "in flight at the abort",
                "tokens": sec.in_flight_tokens,
                "share": sec.in_flight_share,
                "order": 20,
            },
            {
                "row": row,
                "part": "other",
                "tokens": max(aborted - sec.in_flight_tokens, 0),
                "share": None,
                "order": 21,
            },
        ]
        colors["in flight at the abort"] = "#ff9da6"
    colors["other"] = "#e0e0e0"
    present = list(dict.fromkeys(r["part"] for r in rows))  # the legend lists what is drawn
    bars = (
        alt.Chart(inline_data(rows))
        .mark_bar(height=26)
        .encode(
            y=alt.Y("row:N", title=None, sort=None, axis=alt.Axis(labelLimit=260)),
            x=alt.X(
                "tokens:Q",
                title="prompt tokens computed",
                stack="zero",
                axis=alt.Axis(format="~s", labelOverlap=True),
            ),
            color=alt.Color(
                "part:N",
                title=None,
                scale=alt.Scale(domain=present, range=[colors.get(p, "#bbbbbb") for p in present]),
                legend=alt.Legend(orient="bottom", columns=3, labelLimit=200),
            ),
            order=alt.Order("order:Q"),
            tooltip=[
                alt.Tooltip("part:N"),
                alt.Tooltip("tokens:Q", format=","),
                alt.Tooltip("share:Q", format=".1%"),
            ],
        )
    )
    chart: alt.TopLevelMixin = bars.properties(width=WIDTH - 200, height=3 * 40)
    return chart


SECTION = Section(
    title=TITLE, question=QUESTION, model=WastedPrefillSection, build=build, chart=chart
)
