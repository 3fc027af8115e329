"""How an analysis says what it found without wording it (issue 29: the words live in
relplan/text/).

An analysis module declares the sentences it can say as a Literal of codes and a `Words` for
its text module (`_say: Words[Said] = Words("relplan.text.assessment")`); where it has
something to say it calls `_say(code, **numbers_and_names)`. The text module defines one
function per code, listed in its `SENTENCES` table, and words it with relplan.values. The
text module is reached by name when first used, as the registry reaches the findings, so this
layer never imports relplan.text (tests/test_text_analyses.py checks that each table matches
its codes).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Generic, TypeVar, cast

C = TypeVar("C", bound=str)


class Words(Generic[C]):
    """The sentences of one analysis module, worded by `module` (a relplan.text module)."""

    def __init__(self, module: str) -> None:
        self.module = module

    def __call__(self, code: C, **values: Any) -> str:
        return table(self.module)[code](**values)


@cache
def table(module: str) -> Mapping[str, Callable[..., str]]:
    """The `SENTENCES` table of a text module: code -> the function that words it."""
    return cast("Mapping[str, Callable[..., str]]", importlib.import_module(module).SENTENCES)
