"""The words live in relplan/text/: no analysis module words its finding (or the recovery's
`because`); each analysis whose model has a `finding` names the text function that words it.
The verdict (relplan/analyses/assessment.py) is worded where it is computed, for now."""

from __future__ import annotations

import ast
from pathlib import Path

from relplan.analyses import registry

ROOT = Path(__file__).resolve().parent.parent
ANALYSES = ROOT / "relplan" / "analyses"
WORDED = {"finding", "because"}
# analyze() stores what relplan.text words; the verdict keeps its own sentences (issue 29).
ALLOWED = {"__init__.py", "assessment.py"}


def _names_text(value: ast.expr) -> bool:
    """A registry row's import string naming the text function (`"relplan.text....:f"`)."""
    return (
        isinstance(value, ast.Constant)
        and isinstance(value.value, str)
        and value.value.startswith("relplan.text.")
    )


def _wordings(tree: ast.AST) -> list[str]:
    """Where a module sets a worded field: `finding=...` in a call, `x.finding = ...`."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            out += [
                f"line {kw.lineno}: {kw.arg}="
                for kw in node.keywords
                if kw.arg in WORDED and not _names_text(kw.value)
            ]
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out += [
                f"line {t.lineno}: .{t.attr} ="
                for t in targets
                if isinstance(t, ast.Attribute) and t.attr in WORDED
            ]
    return out


def test_no_analysis_module_words_a_finding() -> None:
    found = {
        p.name: hits
        for p in sorted(ANALYSES.glob("*.py"))
        if p.name not in ALLOWED and (hits := _wordings(ast.parse(p.read_text())))
    }
    assert found == {}


def test_the_check_sees_a_finding_worded_in_place() -> None:
    code = "def run():\n    m = M(windows=w, finding=f'{x:.0%} wasted')\n    m.because = 'y'\n"
    assert sorted(_wordings(ast.parse(code))) == ["line 2: finding=", "line 3: .because ="]


def test_every_model_with_a_finding_names_the_text_that_words_it() -> None:
    for a in registry.analyses():
        if "finding" in a.model.model_fields:
            assert a.finding is not None, a.name
            assert a.finding.startswith("relplan.text."), a.name
            assert callable(registry.resolve(a.finding)), a.name
