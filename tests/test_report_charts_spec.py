"""The report's chart specs without Altair (relplan/report/vegalite.py) are Altair's, to the byte.

tests/data/report/chart_specs_altair.json holds the specs Altair 6.3.0 drew for `chart_cases()`
at commit 522a6f4 (each section's chart through `altair`, before relplan/report/vegalite.py):
made by `python tests/test_report_charts_spec.py --write` run against that checkout. Each
spec is kept as its JSON text (key order included) with its datasets' rows left out: the rows
are relplan's own (relplan/report/charts.py, `inline_data`), and their names stay in the text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from relplan.report.data import ReportData
from tests.helpers.report_samples import sample_report

GOLDEN = Path(__file__).parent / "data" / "report" / "chart_specs_altair.json"


def chart_cases() -> dict[str, ReportData]:
    """Report data exercising every chart and both axis formats, phases or none, a zone."""
    from relplan.report.sections import what_would_have_helped as wwh

    base = sample_report()
    whatif = wwh.WhatWouldHaveHelpedSection(
        title=wwh.TITLE,
        question=wwh.QUESTION,
        seeds=1,
        incident_delivered_share=0.31,
        bars=[
            wwh.ControlBar(
                control="a", label="retry budget", delivered_share=0.94, verdict="recovered"
            ),
            wwh.ControlBar(
                control="b", label="shorter deadline", delivered_share=0.52, verdict="draining"
            ),
            wwh.ControlBar(control="c", label="none", delivered_share=0.3, verdict="metastable"),
        ],
    )
    return {
        "sample": base,
        "sample with the what-if": base.model_copy(update={"whatif": whatif}),
        "no phases, two days": base.model_copy(update={"phases": [], "end_s": 2 * 86400.0}),
        "a zone": base.model_copy(update={"tz": "America/New_York"}),
        "no t0": base.model_copy(update={"t0": None}),
    }


def spec_texts(data: ReportData) -> dict[str, str]:
    """Each section's spec as JSON text, its datasets reduced to their names and row counts."""
    from relplan.report.charts import chart_specs

    out = {}
    for name, spec in chart_specs(data).items():
        spec = dict(spec)
        spec["datasets"] = {k: len(v) for k, v in spec.get("datasets", {}).items()}
        out[name] = json.dumps(spec, ensure_ascii=False)
    return out


def test_every_chart_is_the_spec_altair_drew() -> None:
    golden: dict[str, dict[str, str]] = json.loads(GOLDEN.read_text(encoding="utf-8"))["cases"]
    cases = chart_cases()
    assert set(golden) == set(cases)
    for case, data in cases.items():
        got = spec_texts(data)
        assert list(got) == list(golden[case]), case
        for section, text in golden[case].items():
            assert got[section] == text, f"{case}: {section}"


def test_a_layer_of_one_names_its_data_once_as_altair_does() -> None:
    """Altair hoists data all of a layer's parts share (here: one part) onto the layer."""
    from relplan.report import vegalite as alt

    one = alt.Chart(alt.NamedData("d")).mark_line().encode(x="t:T")
    spec = alt.layer(one).properties(width=10, height=5).to_dict()
    assert list(spec) == ["config", "layer", "data", "height", "width", "$schema"]
    assert spec["layer"] == [
        {"mark": {"type": "line"}, "encoding": {"x": {"field": "t", "type": "temporal"}}}
    ]
    two = alt.layer(one, alt.Chart(alt.NamedData("e")).mark_rule().encode(y="y:Q")).to_dict()
    assert "data" not in two
    assert [part["data"] for part in two["layer"]] == [
        {"name": "d"},
        {"name": "e"},
    ]


def test_a_shorthand_without_a_type_is_refused() -> None:
    from relplan.report import vegalite as alt

    with pytest.raises(ValueError, match="field:T"):
        alt.X("t")


def test_validate_refuses_a_spec_vega_lite_does_not_allow() -> None:
    from relplan.report import vegalite as alt

    bad = alt.Chart(alt.NamedData("d")).mark_line(strokeWidth="wide").encode(x="t:T")
    with pytest.raises(jsonschema.ValidationError):
        bad.to_dict(validate=True)
    alt.Chart(alt.NamedData("d")).mark_line(strokeWidth=2).encode(x="t:T").to_dict(validate=True)


def _write() -> None:
    texts = {case: spec_texts(data) for case, data in chart_cases().items()}
    import altair

    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    body: dict[str, Any] = {"altair": altair.__version__, "cases": texts}
    GOLDEN.write_text(json.dumps(body, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {GOLDEN}")


if __name__ == "__main__" and "--write" in sys.argv:
    _write()
