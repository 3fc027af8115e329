"""The analyses' words live in relplan/text/ (issue 29): an analysis module that has moved its
words names each sentence by a code (its `Said`) with its numbers, builds none, and its text
module (reached by name through relplan/analyses/wording.py) words every code and no other.

A sentence is counted as tests/test_text_room.py counts it: an f-string with a
value and at least four words of its own text, outside a `raise` or an `...Error(...)` call.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType
from typing import get_args

import pytest

from relplan.analyses import assessment, wording
from relplan.text import assessment as words
from tests.test_text_room import NOT_SENTENCES, sentence_lines

ROOT = Path(__file__).resolve().parent.parent

# The analysis modules whose words have moved, named once.
MOVED = [
    importlib.import_module(f"relplan.analyses.{name}")
    for name in (
        "assessment",
        "bounds",
        "capacity",
        "context",
        "counters",
        "coverage",
        "delivery",
        "drain",
        "heavy_requests",
        "histograms",
        "littles_law",
        "metrics_figures",
        "overload",
        "stuck",
    )
]
# f-strings that describe a model's field in its JSON schema (`Field(description=f"...")`, a
# constant in it): the model's own documentation, which stays beside the field
# (tests/test_text_room.py lists them as not sentences).
SCHEMA = {
    name.removeprefix("analyses/").removesuffix(".py"): count
    for name, (count, _) in NOT_SENTENCES.items()
    if name.startswith("analyses/")
}


@pytest.mark.parametrize("module", MOVED, ids=lambda m: m.__name__)
def test_a_moved_analysis_builds_no_sentence(module: ModuleType) -> None:
    name = module.__name__.rpartition(".")[2]
    source = (ROOT / "relplan" / "analyses" / f"{name}.py").read_text(encoding="utf-8")
    lines = sentence_lines(source)
    assert len(lines) == SCHEMA.get(name, 0)
    text = source.splitlines()
    assert all("description=f" in text[n - 1] for n in lines), lines


@pytest.mark.parametrize("module", MOVED, ids=lambda m: m.__name__)
def test_its_text_module_words_every_code_and_no_other(module: ModuleType) -> None:
    say = module._say
    assert isinstance(say, wording.Words)
    assert say.module.startswith("relplan.text.")
    said = set(get_args(module.Said))
    assert set(wording.table(say.module)) == said


def test_the_check_sees_a_sentence_and_leaves_errors_alone() -> None:
    source = (
        'a = f"the pulse leaves {x} s of work queued"\n'
        'b = f"{x} s"\n'
        'raise InputError(f"no answer within {t} s from the server")\n'
    )
    assert sentence_lines(source) == [1]


def test_the_words_carry_the_numbers_through_the_formatter() -> None:
    assert words.SENTENCES["calls_of"](part=1234, calls=5000) == "1,234 of 5,000 calls"
    assert (
        assessment._say("no_evidence", aborts=1, scrapes=1, min_scrapes=3, gauges_only=False)
        == "no evidence of delivery: 1 abort line in the engine log (a failure signal, not a"
        " rate); vllm:request_success_total has 1 scrape in the window (at least 3 needed: a"
        " rise needs two)"
    )


# Sentences no snapshot or analyze/verdict test reaches (traced over those tests): their words,
# as analyses/*.py built them before they moved, pinned here.
UNREACHED = [
    (
        "assessment",
        "calls_answered",
        {"share": 0.93, "calls": 1234},
        "93% of 1,234 calls answered",
    ),
    (
        "assessment",
        "healthy_trace",
        {"finished": 1500, "aborted": 3},
        "1,500 executions finished and 3 aborted; no overload found (no bin with arrivals above Ĉ"
        " while work waited, no growing queue); whether clients received them needs a gateway log",
    ),
    (
        "assessment",
        "no_completion_while_waiting",
        {"scrapes": 10, "waiting": 3.0},
        "no request completed over 10 scrapes while 3 waited",
    ),
    (
        "assessment",
        "rates_need",
        {"capacity_known": True, "after_bins": 2, "deadline_known": None, "has_gateway": False},
        "D (--deadline or a run.json) with the e2e histogram, or a gateway log",
    ),
    (
        "assessment",
        "cannot_judge_rates",
        {"capacity_known": False, "tail": "after the overload", "rates": "R"},
        "an overload was found but Ĉ is unknown, so nothing says whether the engine keeps up"
        " after the overload (R)",
    ),
    ("overload", "queue_grew", {"source": "S"}, "detected: the waiting queue (S) grew"),
    (
        "overload",
        "steady_named",
        {"name": "steady"},
        "a phase is named 'steady': no steady-state window is added",
    ),
    (
        "delivery",
        "overload_to_the_end",
        {"phase": "pulse"},
        "the overload phase pulse ends at or after the end of the data",
    ),
    (
        "stuck",
        "no_node_label",
        {"labels": ["node", "Hostname"], "series": "vllm:x"},
        "no node, Hostname label on the replica's vllm:x series",
    ),
]


@pytest.mark.parametrize(("module", "code", "values", "text"), UNREACHED)
def test_the_words_of_sentences_no_snapshot_reaches(
    module: str, code: str, values: dict[str, object], text: str
) -> None:
    assert wording.table(f"relplan.text.{module}")[code](**values) == text
