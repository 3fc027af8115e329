"""The contract every registered input format keeps, checked for each one from the registry
(relplan/ingest/registry.py): a new format gets these tests by declaring itself. The checks
are tests/helpers/contract.py (its docstring says what each one asks); the toy format of the
recipe passes them too (tests/test_ingest_recipe.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from relplan.ingest import registry
from relplan.ingest.adapter import FAMILIES, never
from tests.helpers import contract

ROOT = Path(__file__).resolve().parent.parent
ADAPTERS = registry.adapters()
NAMES = list(ADAPTERS)
WITH_EXAMPLES = [n for n in NAMES if ADAPTERS[n].examples]


def test_every_format_is_declared_once_with_a_family_and_a_reader() -> None:
    assert len(NAMES) == len(set(NAMES))
    for a in ADAPTERS.values():
        assert a.family in FAMILIES
        assert callable(a.read)
        assert callable(a.recognise)
        assert a.kinds
        assert set(a.kinds) <= set(registry.kinds())


def test_every_format_is_under_the_whole_suite() -> None:
    """No format lacks examples: each gets every check below (`mapped`, chosen by `--map`
    and never by content, with its example's mapping file)."""
    assert [n for n, a in ADAPTERS.items() if not a.examples] == []
    assert [n for n, a in ADAPTERS.items() if a.recognise is never] == ["mapped"]


@pytest.mark.parametrize("name", NAMES)
def test_each_format_declares_examples_with_their_source(name: str) -> None:
    a = ADAPTERS[name]
    assert a.examples
    for ex in a.examples:
        assert (ROOT / ex.path).is_file(), ex.path
        assert ex.source


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_a_format_detects_its_own_examples_and_no_other_formats(name: str) -> None:
    contract.detects_its_own_examples(name)


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_a_bad_record_is_named_by_file_and_line(tmp_path: Path, name: str) -> None:
    tried = contract.a_bad_record_is_named_by_file_and_line(tmp_path, name)
    a = ADAPTERS[name]
    # Which bad record each shape gets: no format passes by being skipped.
    if a.shape == "parquet":
        assert tried == "parquet"
    elif a.examples[0].broken or (a.lines and a.shape == "text" and not a.prose):
        assert tried == "line"
    else:
        assert tried in {"line", "document"}


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_ingesting_an_example_twice_adds_nothing(tmp_path: Path, name: str) -> None:
    contract.ingesting_twice_adds_nothing(tmp_path, name)


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_a_format_streams_across_read_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    contract.streams_across_read_batches(tmp_path, monkeypatch, name)
