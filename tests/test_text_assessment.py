"""The verdict's words live in relplan/text/assessment.py (issue 29): the analysis names each
sentence by a code (`relplan.analyses.assessment.Said`) with its numbers, and builds none.

A sentence is counted as tests/test_text_room.py (branch t29b) counts it: an f-string with a
value and at least four words of its own text, outside a `raise` or an `...Error(...)` call.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import get_args

from relplan.analyses import assessment
from relplan.text import assessment as words

ROOT = Path(__file__).resolve().parent.parent


def sentence_lines(source: str) -> list[int]:
    tree = ast.parse(source)
    errors: set[int] = set()
    for node in ast.walk(tree):
        name = ""
        if isinstance(node, ast.Call):
            f = node.func
            name = (
                f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            )
        if isinstance(node, ast.Raise) or name.endswith("Error"):
            errors |= {id(n) for n in ast.walk(node)}
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.JoinedStr) or id(node) in errors:
            continue
        text = " ".join(
            v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        )
        valued = any(isinstance(v, ast.FormattedValue) for v in node.values)
        if valued and len(re.findall(r"[A-Za-z]{2,}", text)) >= 4:
            lines.append(node.lineno)
    return sorted(lines)


def test_the_verdict_analysis_builds_no_sentence() -> None:
    source = (ROOT / "relplan" / "analyses" / "assessment.py").read_text(encoding="utf-8")
    assert sentence_lines(source) == []


def test_the_check_sees_a_sentence_and_leaves_errors_alone() -> None:
    source = (
        'a = f"the pulse leaves {x} s of work queued"\n'
        'b = f"{x} s"\n'
        'raise InputError(f"no answer within {t} s from the server")\n'
    )
    assert sentence_lines(source) == [1]


def test_every_code_the_verdict_says_has_its_words() -> None:
    assert set(words.SENTENCES) == set(get_args(assessment.Said))
    module, _, attr = assessment.WORDING.partition(":")
    assert (module, attr) == (words.__name__, "word")


def test_the_words_carry_the_numbers_through_the_formatter() -> None:
    assert words.word("calls_of", part=1234, calls=5000) == "1,234 of 5,000 calls"
    assert (
        words.word("no_evidence", aborts=1, scrapes=1, min_scrapes=3, gauges_only=False)
        == "no evidence of delivery: 1 abort line in the engine log (a failure signal, not a"
        " rate); vllm:request_success_total has 1 scrape in the window (at least 3 needed: a"
        " rise needs two)"
    )
