"""docs/analyses.md's verdict table is what relplan says (issue 24, "Measure and report").

Each row is made here from `relplan analyze` on the input it names: the small real inputs
of tests/test_verdict_honesty.py, and the lab's eight recorded real-vLLM incidents
(tests/data/lab/README.md) from the vLLM log and the Prometheus export alone, and with
nginx's JSON access log added, each without D and with `--deadline 10` (the drill's D), and
the first four with nginx's `combined` log (no request durations) and `--deadline 10`. The
test fails when the table in the docs differs; `RELPLAN_UPDATE_DOCS=1` rewrites it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from relplan.analyses.assessment import Assessment, contradictions
from tests.helpers.analysis_cache import analyze_json
from tests.helpers.ingest import ingest
from tests.helpers.lab import OPERATOR_FILES, lab_ingest
from tests.test_verdict_honesty import CASES

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "analyses.md"
LAB = ROOT / "tests" / "data" / "lab"
INCIDENTS = [
    "retries-no-cancel",
    "retries-cancel",
    "no-retries",
    "retry-budget",
    "fresh/retries-no-cancel",
    "fresh/retries-cancel",
    "fresh/no-retries",
    "fresh/retry-budget",
]
ENGINE = ("vllm.log.gz", "prometheus.query_range.json.gz")
BEGIN = "<!-- verdict table: tests/test_verdict_table.py -->"
END = "<!-- end of the verdict table -->"
UPDATE = os.environ.get("RELPLAN_UPDATE_DOCS") == "1"


def _secs(v: float | None) -> str:
    return "-" if v is None else f"{v:,.0f} s"


def row(name: str, a: Assessment) -> str:
    verdict = a.verdict + (" (suspected)" if a.suspected else "")
    if a.missing_input:
        verdict += f"; needs {a.missing_input}"
    w = a.window
    if w is None or w.start is None or w.end is None:
        window = "none (no load data)"
    else:
        bound = (
            w.start_bound_by
            if w.start_bound_by == w.end_bound_by
            else f"{w.start_bound_by} to {w.end_bound_by}"
        )
        window = f"{w.end - w.start:,.0f} s, bounded by {bound}"
    if a.drain is None and a.recovered_after_s is None:
        recovery = "no overload found"
    else:
        rec = next(f for f in a.figures if f.key == "recovered_after")
        recovered = (
            _secs(a.recovered_after_s)
            if a.recovered_after_s is not None
            else ("not recovered" if rec.status == "measured" else "not measured")
        )
        dr = a.drain
        drained = (
            "-"
            if dr is None
            else "not drained"
            if dr.drained_after_s is None
            else _secs(dr.drained_after_s)
            + (", once the load stopped" if dr.after_load_ended else "")
        )
        recovery = f"{recovered} / {drained}"
    return f"| {name} | {verdict} | {a.basis} | {window} | {recovery} |"


def _assess(db: Path, deadline: float | None = None) -> Assessment:
    """The verdict of `relplan analyze --json` (its JSON is the analyses' model), run once per
    test run for each workspace and flags: tests/test_lab_incidents.py analyses the lab's
    workspaces with the same flags (tests/helpers/analysis_cache.py)."""
    flags = () if deadline is None else ("--deadline", str(deadline))
    verdict = analyze_json(db, *flags)["verdict"]
    assert verdict is not None
    a = Assessment.model_validate_json(json.dumps(verdict))
    assert contradictions(a) == [], (db, contradictions(a))
    return a


def _lab_db(tmp: Path, name: str, files: tuple[str, ...]) -> Path:
    op = LAB / name / "operator"
    return lab_ingest(tmp / "w.duckdb", [op / f for f in files])


def table(tmp: Path) -> str:
    rows = []
    for case in CASES:
        db = tmp / f"{len(rows)}.duckdb"
        for path, opts in case.files:
            ingest(db, path, **opts)
        rows.append(row(case.name, _assess(db)))
    for name in INCIDENTS:
        engine = _lab_db(tmp / f"e-{name.replace('/', '-')}", name, ENGINE)
        # OPERATOR_FILES: ingested in the same order by tests/test_lab_incidents.py and
        # tests/test_whatif_real.py, so they share one template workspace (tests/helpers/lab.py)
        both = _lab_db(tmp / f"g-{name.replace('/', '-')}", name, OPERATOR_FILES)
        for label, db in (("vLLM log + Prometheus", engine), ("+ nginx JSON log", both)):
            rows.append(row(f"lab `{name}`, {label}", _assess(db)))
            rows.append(row(f"lab `{name}`, {label}, `--deadline 10`", _assess(db, 10.0)))
        if "/" not in name:  # nginx's `combined` log: no $request_time, no headers
            tmp_c = tmp / f"c-{name}"
            tmp_c.mkdir()
            combined = _lab_db(tmp_c, name, (*ENGINE, "access.log.gz"))
            label = "+ nginx `combined` log, `--deadline 10`"
            rows.append(row(f"lab `{name}`, {label}", _assess(combined, 10.0)))
    head = [
        "| input | verdict | evidence | window | recovered after / drained after |",
        "|---|---|---|---|---|",
    ]
    return "\n".join([BEGIN, *head, *rows, END])


@pytest.mark.slow
def test_the_docs_verdict_table_is_what_relplan_says(tmp_path_factory: Any) -> None:
    tmp = tmp_path_factory.mktemp("table")
    for name in INCIDENTS:
        (tmp / f"e-{name.replace('/', '-')}").mkdir()
        (tmp / f"g-{name.replace('/', '-')}").mkdir()
    got = table(tmp)
    text = DOC.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    assert pattern.search(text), f"{DOC} has no verdict table between {BEGIN} and {END}"
    if UPDATE:
        DOC.write_text(pattern.sub(lambda _m: got, text), encoding="utf-8")
        return
    assert pattern.search(text).group(0) == got  # type: ignore[union-attr]
