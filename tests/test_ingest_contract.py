"""The contract every registered input format keeps, checked for each one from the registry
(relplan/ingest/registry.py): a new format gets these tests by declaring itself.

- its example files (Adapter.examples, test data under tests/data/ with their sources) are
  detected as it, and no other format's examples are;
- a bad record (a broken line appended to an example) is `FILE:LINE: ...` in fail mode, and
  with `--on-error skip` is counted as a reject while the rest is stored;
- ingesting the same file twice adds nothing the second time;
- it streams: with a read batch of 2 rows (so every example spans several batches) it stores
  what it stores with the default batch.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from relplan.errors import InputError
from relplan.ingest import registry
from relplan.ingest.adapter import Adapter, never
from relplan.ingest.detect import detect
from relplan.ingest.files import FileInfo, digest, peek
from tests.helpers.ingest import ingest, rows

ROOT = Path(__file__).resolve().parent.parent
ADAPTERS = registry.adapters()
NAMES = list(ADAPTERS)
WITH_EXAMPLES = [n for n in NAMES if ADAPTERS[n].examples]


def _info(path: Path) -> FileInfo:
    size, gz, head = peek(path)
    return FileInfo(path, size, gz, head, digest(path))


def _first_example(a: Adapter) -> tuple[Path, dict[str, Any]]:
    return ROOT / a.examples[0].path, a.examples[0].options


def _json_lines(text: str) -> bool:
    try:
        return all(isinstance(json.loads(ln), dict) for ln in text.splitlines() if ln.strip())
    except ValueError:
        return False


def _broken_line(a: Adapter, example: Path) -> str | None:
    """A line the format must refuse, for formats whose every line is a record."""
    if a.shape == "parquet":
        return None
    if _json_lines(example.read_text()):
        return '{"broken": '
    if a.name == "csv":
        # A full row with a time that is none.
        return "c9,0,,not-a-time,1764460840,delivered,e9,false,,200,llama-8b,r1,1,1"
    if a.shape == "text" and not a.prose:
        return "this is not a record"
    return None


def test_every_format_is_declared_once_with_a_family_and_a_reader() -> None:
    assert len(NAMES) == len(set(NAMES))
    for a in ADAPTERS.values():
        assert a.family in {
            "canonical",
            "metrics",
            "vllm",
            "otel",
            "gateways",
            "loadtests",
            "cluster",
        }
        assert callable(a.read)
        assert callable(a.recognise)
        assert a.kinds
        assert set(a.kinds) <= set(registry.kinds())


@pytest.mark.parametrize("name", NAMES)
def test_each_format_declares_examples_unless_chosen_by_an_option(name: str) -> None:
    a = ADAPTERS[name]
    if a.recognise is never:
        assert not a.examples  # --map decides, content never does
        return
    if not a.examples:
        pytest.skip(f"{name}: no example file stored yet (its own tests build theirs)")
    for ex in a.examples:
        assert (ROOT / ex.path).is_file(), ex.path
        assert ex.source


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_a_format_detects_its_own_examples_and_no_other_formats(name: str) -> None:
    for other, a in ADAPTERS.items():
        for ex in a.examples:
            got = detect(_info(ROOT / ex.path)).format
            if other == name:
                assert got == name, ex.path
            else:
                assert got != name, f"{ex.path} ({other}) taken for {name}"


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_a_bad_record_is_named_by_file_and_line_and_skip_counts_it(
    tmp_path: Path, name: str
) -> None:
    a = ADAPTERS[name]
    example, opts = _first_example(a)
    bad = _broken_line(a, example) if a.lines else None
    if bad is None:
        pytest.skip(
            f"{name}: not one record a line (Parquet, a JSON document, or a log with prose lines)"
        )
    text = example.read_text()
    f = tmp_path / f"bad{''.join(example.suffixes)}"
    f.write_text(text.rstrip("\n") + "\n" + bad + "\n")
    line = text.rstrip("\n").count("\n") + 2
    with pytest.raises(InputError) as caught:
        ingest(tmp_path / "fail.duckdb", f, **opts)
    assert f"{f}:{line}: " in str(caught.value) or caught.value.line == line, str(caught.value)
    rep = ingest(tmp_path / "skip.duckdb", f, on_error="skip", **opts)
    assert [s.format for s in rep.sources] == [name]
    assert rep.sources[0].rejected == 1
    good = ingest(tmp_path / "good.duckdb", example, **opts)
    assert rep.sources[0].rows == good.sources[0].rows


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_ingesting_an_example_twice_adds_nothing(tmp_path: Path, name: str) -> None:
    db = tmp_path / "w.duckdb"
    example, opts = _first_example(ADAPTERS[name])
    first = ingest(db, example, **opts)
    assert [s.format for s in first.sources] == [name]
    counts = rows(db, "select count(*) from sources")
    again = ingest(db, example, **opts)
    assert again.sources == []
    assert [s.reason.split(":")[0] for s in again.skipped] == [
        "already in the workspace as source 1"
    ]
    assert rows(db, "select count(*) from sources") == counts


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_a_format_streams_across_read_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    example, opts = _first_example(ADAPTERS[name])
    whole = ingest(tmp_path / "whole.duckdb", example, **opts)
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("relplan.ingest") and hasattr(mod, "BATCH_ROWS"):
            monkeypatch.setattr(mod, "BATCH_ROWS", 2)
    small = ingest(tmp_path / "small.duckdb", example, **opts)
    assert [(s.format, s.rows, s.rejected) for s in small.sources] == [
        (s.format, s.rows, s.rejected) for s in whole.sources
    ]
    for table in ("attempts", "events", "metric_samples"):
        q = f"select count(*) from {table}"
        assert rows(tmp_path / "small.duckdb", q) == rows(tmp_path / "whole.duckdb", q)
