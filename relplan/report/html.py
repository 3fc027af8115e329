"""Render `ReportData` and its chart specs into one self-contained HTML page.

`render_html` is a pure function: same data, same specs, same bytes. The page needs nothing
from the network: Vega, Vega-Lite and vega-embed come from vl-convert-python's offline
bundle (cached on disk by `bundle.py`), inlined once in the page; every chart spec is embedded
as JSON in one `<script type="application/json">` block and drawn as SVG by vega-embed. A
Content-Security-Policy meta tag forbids every network fetch as a second line of defence
(Vega compiles its expressions with `Function`, hence `'unsafe-eval'`).

Safety: the Jinja template escapes every string it prints; JSON that goes inside a script
tag is escaped by `script_json` (`<`, `>`, `&`, U+2028 and U+2029 become `\\uXXXX`), so a
label such as `</script><script>alert(1)</script>` stays a string.
"""

from __future__ import annotations

import functools
import json
import math
import re
from importlib import resources
from typing import Any

import jinja2
from markupsafe import Markup

from relplan.report import bundle
from relplan.report.data import ReportData
from relplan.values import clock, clock_span, clock_spans, num, pct

# The Vega-Lite version the charts are written for (relplan/report/vegalite.py, SCHEMA_URL),
# e.g. "6.4".
VL_VERSION = "6.4"

_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def _finite(obj: Any) -> Any:
    """JSON has no NaN/Infinity: a non-finite number becomes null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_finite(v) for v in obj]
    return obj


def script_json(obj: Any) -> str:
    """JSON safe to place between `<script>` tags: no `<`, `>` or `&` survive unescaped."""
    text = json.dumps(_finite(obj), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for char, escaped in _JSON_ESCAPES.items():
        text = text.replace(char, escaped)
    return text


@functools.lru_cache(maxsize=1)
def vega_bundle() -> str:
    """Vega + Vega-Lite + vega-embed as one classic script (defines window.vegaEmbed)."""
    js = bundle.load(VL_VERSION)
    lowered = js.lower()
    for bad in ("</script", "<!--", "<script"):
        if bad in lowered:  # would end or confuse the inline script element
            raise RuntimeError(f"vl-convert's bundle contains {bad!r}; cannot inline it")
    return js


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["num"] = num
    env.filters["pct"] = pct
    env.filters["clock_span"] = _clock_span
    env.filters["clock"] = _clock
    env.filters["phase_spans"] = _phase_spans
    env.filters["whole_words"] = whole_words
    return env


# A token the browser could break inside although it has no space: after a hyphen, a dash or a
# slash, before an opening bracket ("2025-11-" / "30", "2,048–" / "2,048", "p99)." / "{run,").
_BREAKABLE = re.compile(r"\S*[-\u2010-\u2014/([{]\S*")


def whole_words(text: object) -> Markup:
    """`text` escaped, each token with a hyphen, dash, slash or bracket in `<span class="nw">`:
    a cell that wraps (a header, long text) wraps between words only, never inside a date or
    a range of numbers."""
    escaped = str(Markup.escape(str(text)))
    return Markup(_BREAKABLE.sub(lambda m: f'<span class="nw">{m.group(0)}</span>', escaped))


def _clock_span(data: ReportData, start_s: float, end_s: float) -> str:
    """A stretch of the run (seconds from t0) as wall-clock times in the report's zone."""
    t0 = data.t0 or 0.0
    return clock_span(t0 + start_s, t0 + end_s, data.tz)


def _phase_spans(data: ReportData) -> str:
    """`base 00:00:00–00:02:00, pulse …` (the date and zone once, when all share one day)."""
    t0 = data.t0 or 0.0
    head, cells = clock_spans([(t0 + p.start_s, t0 + p.end_s) for p in data.phases], data.tz)
    listed = ", ".join(f"{p.name} {c}" for p, c in zip(data.phases, cells, strict=True))
    return f"phases ({head}): {listed}" if head else f"phases: {listed}"


def _clock(data: ReportData, s: float, frac: bool = False) -> str:
    return clock((data.t0 or 0.0) + s, data.tz, frac=frac)


def _template() -> jinja2.Template:
    text = resources.files("relplan.report").joinpath("templates/report.html").read_text("utf-8")
    return _environment().from_string(text)


def render_html(data: ReportData, specs: dict[str, dict[str, Any]]) -> str:
    """The whole page as a string (no file is written here)."""
    return _template().render(
        data=data,
        sections=data.sections(),
        specs=specs,
        specs_json=Markup(script_json(specs)),
        vega_js=Markup(vega_bundle()),
    )
