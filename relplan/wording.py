"""How a module says something without wording it (issue 29: the words live in relplan/text/).

A module declares the sentences it can say as a Literal of codes and a `Words` for its text
module (`_say: Words[Said] = Words("relplan.text.pulse")`); where it has something to say it
calls `_say(code, **numbers_and_names)`. The text module defines one function per code, listed
in its `SENTENCES` table, and words it with relplan.values. The text module is reached by name
when first used (as the analyses' registry reaches the findings), so a package that relplan.text
imports (the analyses, alerts, planning, drill, lab) can say a sentence without importing
relplan.text, which would close an import circle. Standard library only: the cheap commands
(`relplan pulse`, `relplan budget`) load nothing heavy through it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any, Generic, TypeVar, cast

C = TypeVar("C", bound=str)


class Words(Generic[C]):
    """The sentences of one module, worded by `module` (a relplan.text module)."""

    def __init__(self, module: str) -> None:
        self.module = module

    def __call__(self, code: C, **values: Any) -> str:
        return table(self.module)[code](**values)


@cache
def table(module: str) -> Mapping[str, Callable[..., str]]:
    """The `SENTENCES` table of a text module: code -> the function that words it."""
    return cast("Mapping[str, Callable[..., str]]", importlib.import_module(module).SENTENCES)
