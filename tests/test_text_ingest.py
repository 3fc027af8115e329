"""The ingest's words live in relplan/text/ingest.py (issue 29): the ingest names each note by
a code of `relplan.ingest.outcome.Said` with its numbers and names, and the text module words
every code and no other. The words are the ones the ingest modules built in place before they
moved (the expected strings below are theirs, copied from the code they replaced); the notes
the output tests read (ingest, inspect, the docs examples) check the rest.
"""

from __future__ import annotations

from typing import get_args

import pytest

from relplan.ingest import outcome
from relplan.ingest.files import LineError
from relplan.text import ingest as words


def test_the_text_module_words_every_code_and_no_other() -> None:
    assert set(words.SENTENCES) == set(get_args(outcome.Said))


def test_say_reaches_the_words_by_name() -> None:
    assert outcome.say("repeated_in_ingest", path="a.jsonl") == (
        "same content as a.jsonl earlier in this ingest, nothing added"
    )


@pytest.mark.parametrize(
    ("code", "values", "said"),
    [
        (
            "already_stored",
            {"source": 3, "path": None},
            "already in the workspace as source 3: same content, nothing added",
        ),
        (
            "already_stored",
            {"source": 3, "path": "old/a.jsonl"},
            "already in the workspace as source 3 (old/a.jsonl): same content, nothing added",
        ),
        (
            "already_attached",
            {"source": 2},
            "already attached as source 2: same files, nothing added",
        ),
        (
            "whole_second_twin",
            {"n": 40, "fine": 1, "matched": 38},
            "its 40 attempts are the requests of source 1 told in whole seconds (38 pair by end"
            " second, status and outcome): source 1's finer times are kept, these are not stored",
        ),
        (
            "refined_times",
            {"n": 7, "coarse": 2, "fine": 1, "by_engine": False},
            "7 whole-second event times of source 2 set to the finer times of the same events"
            " inside that second, from the gateway attempts they joined (source 1)",
        ),
        (
            "records_refused",
            {"source": 4, "n": 12},
            "note: source 4: 12 records refused, kept in rejects (relplan inspect lists them)",
        ),
    ],
)
def test_the_words_are_the_ones_built_in_place_before(
    code: outcome.Said, values: dict[str, object], said: str
) -> None:
    assert outcome.say(code, **values) == said


def test_a_line_error_is_the_reason_itself() -> None:
    why = LineError("$status 'x' is not an HTTP status")
    assert isinstance(why, str)
    assert (why, f"{why}", str(why)) == ("$status 'x' is not an HTTP status",) * 3
