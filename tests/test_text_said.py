"""The packages that relplan/text imports (planning, alerts, drill, lab) name each sentence
they say by a code of their `Said` with its numbers; the text module their `Words` names words
every code and no other (relplan/wording.py). The analyses' own check is
tests/test_text_analyses.py."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import get_args

import pytest

from relplan import wording

SAYING = [
    importlib.import_module(f"relplan.{name}")
    for name in (
        "alerts.dashboard",
        "alerts.rules",
        "alerts.slo",
        "planning.budget",
        "planning.pulse",
    )
]


def _words_of(module: ModuleType) -> str:
    say = module._say
    assert isinstance(say, wording.Words)
    assert say.module.startswith("relplan.text.")
    return say.module


@pytest.mark.parametrize("module", SAYING, ids=lambda m: m.__name__)
def test_its_text_module_words_every_code(module: ModuleType) -> None:
    assert set(get_args(module.Said)) <= set(wording.table(_words_of(module)))


@pytest.mark.parametrize("text", sorted({_words_of(m) for m in SAYING}))
def test_each_text_table_words_only_the_codes_said(text: str) -> None:
    """A text module may word the codes of several modules (relplan.text.alerts: the rules and
    the dashboard), but none that no module says."""
    said = {c for m in SAYING if _words_of(m) == text for c in get_args(m.Said)}
    assert set(wording.table(text)) == said


def test_a_code_is_worded_with_its_numbers_through_the_formatter() -> None:
    pulse = importlib.import_module("relplan.planning.pulse")
    assert (
        pulse._say("retries_collapse", retries=3, retried_x=2.4, retried_calls_per_s=6.672)
        == "if the hold's calls time out and retry 3 times, they offer 2.40x capacity (6.67"
        " calls/s): above capacity, so the queue can stay full of attempts whose clients have"
        " left (metastable failure)"
    )
