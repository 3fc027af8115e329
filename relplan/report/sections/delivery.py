"""The report's `delivery` section: delivery and recovery, from the `delivery` analysis."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import Field

from relplan.analyses.context import RunContext
from relplan.analyses.delivery import Delivery
from relplan.models import StrictModel
from relplan.report.charts import (
    HEIGHT,
    WIDTH,
    inline_data,
    phase_layers,
    time_tooltip,
    time_x,
    tx,
    when,
)
from relplan.report.data import ReportData, SectionBase, Table
from relplan.report.section import Section
from relplan.text.report import span_column
from relplan.text.sections import delivery_caption, delivery_recovery_text, delivery_report_rows

if TYPE_CHECKING:
    import altair as alt

TITLE = "Delivery and recovery"
QUESTION = "Did calls get their answer in time, and when did that come back after the overload?"


class OnTimeBin(StrictModel):
    start_s: float = Field(description="planned-arrival bin start, seconds from t0")
    end_s: float
    calls: int
    on_time_share: float | None


class DeliverySection(SectionBase):
    threshold: float = 0.9
    min_calls: int = 5
    overload_end_s: float | None = None
    recovery_s: float | None = Field(
        default=None, description="start of the recovery bin, seconds from t0"
    )
    recovery_text: str = ""
    bins: list[OnTimeBin] = Field(default_factory=list)


def build(dl: Delivery, ctx: RunContext) -> DeliverySection:
    end_s = ctx.s(ctx.window_end)
    rec = dl.recovery
    recovery_s = None
    if rec is not None and rec.recovery_s is not None:
        recovery_s = rec.overload_end_s + rec.recovery_s
    text = delivery_recovery_text(dl)
    span_head, cells = span_column(ctx.t0, [(w.start_s, w.end_s) for w in dl.windows])
    rows = delivery_report_rows(dl, cells)
    threshold = rec.threshold if rec else 0.9
    caption = delivery_caption(ctx.t0, threshold, recovery_s, text)
    return DeliverySection(
        title=TITLE,
        question=QUESTION,
        finding=dl.finding,
        caption=caption if dl.series else "",
        threshold=threshold,
        min_calls=rec.min_calls if rec else 5,
        overload_end_s=rec.overload_end_s if rec else None,
        recovery_s=recovery_s,
        recovery_text=text,
        bins=[
            OnTimeBin(
                start_s=b.start_s,
                end_s=min(b.start_s + dl.series_bin_s, end_s),
                calls=b.calls,
                on_time_share=b.on_time_share,
            )
            for b in dl.series
        ],
        table=Table(
            columns=[
                "window (planned arrival)",
                span_head,
                "calls",
                "delivered",
                "on time",
                "window open at end",
                "p50 to delivery (s)",
                "p99 (s)",
            ],
            rows=rows,
        ),
    )


def chart(sec: DeliverySection, data: ReportData) -> alt.TopLevelMixin | None:
    import altair as alt

    rows = [
        {"t": when(data, (b.start_s + b.end_s) / 2), "share": b.on_time_share, "calls": b.calls}
        for b in sec.bins
        if b.on_time_share is not None
    ]
    if not rows:
        return None
    line = (
        alt.Chart(inline_data(rows))
        .mark_line(point=alt.OverlayMarkDef(size=22), strokeWidth=2, color="#4c78a8")
        .encode(
            x=time_x(data, what="planned arrival"),
            y=alt.Y(
                "share:Q",
                title="on-time share of calls",
                scale=alt.Scale(domain=[0, 1.05]),
                axis=alt.Axis(format="%"),
            ),
            tooltip=[
                time_tooltip(title="planned arrival (bin middle)"),
                alt.Tooltip("share:Q", title="on time", format=".1%"),
                alt.Tooltip("calls:Q"),
            ],
        )
    )
    layers: list[alt.Chart] = [*phase_layers(data), line]
    layers.append(
        alt.Chart(inline_data([{"y": sec.threshold}]))
        .mark_rule(color="#54a24b", strokeDash=[6, 4])
        .encode(y=alt.Y("y:Q"))
    )
    if sec.recovery_s is not None:
        layers.append(
            alt.Chart(inline_data([{"t": when(data, sec.recovery_s)}]))
            .mark_rule(color="#2e7d32", strokeWidth=2)
            .encode(x=tx(data, "t"))
        )
    return alt.layer(*layers).properties(width=WIDTH, height=HEIGHT)


SECTION = Section(title=TITLE, question=QUESTION, model=DeliverySection, build=build, chart=chart)
