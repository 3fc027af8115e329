"""The comparison page: one offline, self-contained HTML file in the report's look.

The report's stylesheet is read from its template (relplan/report/templates/report.html),
Vega comes inlined from the report's offline bundle (relplan.report.html.vega_bundle), the
chart specs are embedded with the report's `script_json`; a Content-Security-Policy forbids
every fetch. Charts pair the sides on shared axes: one panel per side, the same x (seconds
from each run's t0) and y scales.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from pathlib import Path
from typing import Any

from relplan import __version__
from relplan.compare.figures import FAMILIES
from relplan.compare.model import Comparison
from relplan.text.compare import band, band_methods, fmt, not_compared_lines, phase_lines

CHARTS = (
    ("delivered_per_s", "calls delivered per second (to a waiting client), per side"),
    ("waiting", "requests waiting in the engine's queue, per side"),
    ("executions_per_call", "executions per call arriving in the bin, per side"),
)


@functools.lru_cache(maxsize=1)
def report_style() -> str:
    text = resources.files("relplan.report").joinpath("templates/report.html").read_text("utf-8")
    m = re.search(r"<style>.*?</style>", text, re.S)
    return m.group(0) if m else ""


def chart_specs(c: Comparison) -> dict[str, dict[str, Any]]:
    import altair as alt

    specs: dict[str, dict[str, Any]] = {}
    labels = [s.label for s in c.sides]
    for name, _ in CHARTS:
        rows = [
            {"side": p.side, "t": p.t_s, "v": p.value}
            for p in c.series
            if p.measure == name and p.value is not None
        ]
        if not rows:
            continue
        chart = (
            alt.Chart(alt.Data(values=rows))  # type: ignore[no-untyped-call]
            .mark_line(point=True)
            .encode(
                # few ticks: a long run's four-digit seconds would otherwise collide
                x=alt.X(
                    "t:Q",
                    title="seconds from the run's start",
                    axis=alt.Axis(tickCount=4, labelOverlap=True),
                ),
                y=alt.Y("v:Q", title=name.replace("_", " ")),
                color=alt.Color("side:N", sort=labels, legend=None),
                tooltip=["side:N", "t:Q", "v:Q"],
            )
            .properties(width=max(180, 840 // len(labels) - 40), height=180)
            .facet(column=alt.Column("side:N", sort=labels, title=None))
            .resolve_scale(x="shared", y="shared")
        )
        specs[name] = chart.to_dict()
    return specs


def render_page(c: Comparison) -> str:
    import jinja2
    from markupsafe import Markup

    from relplan.report.html import script_json, vega_bundle, whole_words

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["whole_words"] = whole_words
    text = resources.files("relplan.compare").joinpath("templates/compare.html").read_text("utf-8")
    specs = chart_specs(c)
    labels = [s.label for s in c.sides]
    methods = band_methods(c)
    return env.from_string(text).render(
        c=c,
        labels=labels,
        fmt=fmt,
        band=band,
        methods=methods,
        not_compared=not_compared_lines(c, FAMILIES),
        phase_lines=phase_lines(c),
        charts=[(n, cap) for n, cap in CHARTS if n in specs],
        version=__version__,
        report_style=Markup(report_style()),
        specs_json=Markup(script_json(specs)),
        vega_js=Markup(vega_bundle()),
    )


def write_page(c: Comparison, path: Path) -> Path:
    from relplan.report.export import write_atomic

    return write_atomic(path, render_page(c))
