"""The checks every registered input format passes (tests/test_ingest_contract.py runs them on
each format of the registry; tests/test_ingest_recipe.py on the toy format of the recipe), one
function per check, taking the format by name so that a format registered at run time gets
them too:

- `detects_its_own_examples`: its example files (Adapter.examples, under tests/data/ with
  their sources) are detected as it, and no other format's examples are;
- `a_bad_record_is_named_by_file_and_line`: a bad record is `FILE:LINE: ...` in fail mode and
  stores nothing; for a line-based format, `--on-error skip` counts it as one reject and
  stores the rest as the good file does. The bad record is the example's own `broken` line,
  else a broken JSON line (JSON Lines) or a line of text no record can be (a text format
  that is no prose log); a JSON document is cut in half; a Parquet file loses its footer;
- `ingesting_twice_adds_nothing`: a second ingest of an example is skipped and adds nothing;
- `streams_across_read_batches`: with a read batch of 2 rows (every example spans several
  batches) it stores what it stores with the default batch.

The clean ingest of a format's first example, which the last three start from, is made once per
test run (tests/helpers/templates.py) and copied with its report; each example's detected
format is worked out once per process and set of registered formats.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from relplan.errors import InputError
from relplan.ingest import registry
from relplan.ingest.adapter import Adapter, never
from relplan.ingest.base import IngestOptions
from relplan.ingest.detect import UnknownContent, detect
from relplan.ingest.files import FileInfo, digest, peek
from relplan.ingest.outcome import IngestReport
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest
from tests.helpers.templates import from_template, template

ROOT = Path(__file__).resolve().parents[2]


def file_info(path: Path) -> FileInfo:
    size, gz, head = peek(path)
    return FileInfo(path, size, gz, head, digest(path))


def _first_example(a: Adapter) -> tuple[Path, dict[str, Any]]:
    return ROOT / a.examples[0].path, _options(a.examples[0].options)


def _options(options: dict[str, Any]) -> dict[str, Any]:
    """An example's options, a file under tests/ (a mapping) taken from the repository root."""
    return {
        k: ROOT / v if isinstance(v, str | Path) and str(v).startswith("tests/") else v
        for k, v in options.items()
    }


def _clean_ingest(dest: Path, name: str) -> IngestReport:
    """`dest` holding the format's first example ingested into a new workspace, and that
    ingest's report: the ingest made once per run, its file and report copied."""
    example, opts = _first_example(registry.adapters()[name])
    key = f"contract clean ingest: {name} {example} {sorted(opts.items())!r}"

    def build(path: Path) -> None:
        report = ingest(path, example, **opts)
        path.with_name("report.json").write_text(report.model_dump_json(), encoding="utf-8")

    from_template(dest, key, build)
    report = template(key, build).with_name("report.json").read_text(encoding="utf-8")
    return IngestReport.model_validate_json(report)


_DETECTED: dict[tuple[tuple[str, ...], Path], str | None] = {}


def _detected(path: Path) -> str | None:
    """The format detected from the file's content, None when no format claims it (a mapped
    log); once per process and set of registered formats."""
    key = (tuple(registry.adapters()), path)
    if key not in _DETECTED:
        try:
            _DETECTED[key] = detect(file_info(path)).format
        except UnknownContent:
            _DETECTED[key] = None
    return _DETECTED[key]


def _text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")


def _json_lines(text: str) -> bool:
    try:
        return all(isinstance(json.loads(ln), dict) for ln in text.splitlines() if ln.strip())
    except ValueError:
        return False


def _broken_line(a: Adapter, text: str) -> str | None:
    """A line the format must refuse when appended, or None when it has no such line."""
    if a.examples[0].broken:
        return a.examples[0].broken
    if a.lines and _json_lines(text):
        return '{"broken": '
    if a.lines and a.shape == "text" and not a.prose:
        return "this is not a record"
    return None


def detects_its_own_examples(name: str) -> None:
    """Detected from content as itself, or, for a format only an option chooses (`--map`),
    chosen by its example's options; no other format's example is taken for it."""
    mine = registry.adapters()[name]
    for other, a in registry.adapters().items():
        for ex in a.examples:
            got = _detected(ROOT / ex.path)
            if other != name:
                assert got != name, f"{ex.path} ({other}) taken for {name}"
            elif mine.recognise is never:
                opts = IngestOptions(**_options(ex.options))
                assert registry.chosen_by(opts) == name, ex.path
            else:
                assert got == name, ex.path


def a_bad_record_is_named_by_file_and_line(tmp_path: Path, name: str) -> str:
    """Returns which bad record was tried: `line`, `document` or `parquet`."""
    a = registry.adapters()[name]
    example, opts = _first_example(a)
    if a.shape == "parquet":
        f = tmp_path / "cut.parquet"
        f.write_bytes(example.read_bytes()[:-12])  # the footer and its magic bytes gone
        with pytest.raises(InputError) as caught:
            ingest(tmp_path / "fail.duckdb", f, fmt=name, **opts)
        assert str(f) in str(caught.value), str(caught.value)
        assert not (tmp_path / "fail.duckdb").exists()
        return "parquet"
    text = _text(example)
    bad = _broken_line(a, text)
    if bad is None:
        assert a.shape == "json", f"{name}: no bad record to try (declare Example.broken)"
        f = tmp_path / f"cut{example.suffixes[0] if example.suffixes else '.json'}"
        cut = text[: len(text) // 2]
        f.write_text(cut)
        with pytest.raises(InputError) as caught:
            ingest(tmp_path / "fail.duckdb", f, **opts)
        line = caught.value.line
        assert line is not None, str(caught.value)
        assert 1 <= line <= cut.count("\n") + 1, str(caught.value)
        assert str(caught.value).startswith(f"{f}:{line}: "), str(caught.value)
        assert not (tmp_path / "fail.duckdb").exists()
        return "document"
    f = tmp_path / f"bad{''.join(s for s in example.suffixes if s != '.gz')}"
    f.write_text(text.rstrip("\n") + "\n" + bad + "\n")
    line = text.rstrip("\n").count("\n") + 2
    with pytest.raises(InputError) as caught:
        ingest(tmp_path / "fail.duckdb", f, **opts)
    assert str(caught.value).startswith(f"{f}:{line}: "), str(caught.value)
    assert not (tmp_path / "fail.duckdb").exists()
    rep = ingest(tmp_path / "skip.duckdb", f, on_error="skip", **opts)
    assert [s.format for s in rep.sources] == [name]
    assert rep.sources[0].rejected == 1
    good = _clean_ingest(tmp_path / "good.duckdb", name)
    assert rep.sources[0].rows == good.sources[0].rows
    return "line"


def ingesting_twice_adds_nothing(tmp_path: Path, name: str) -> None:
    db = tmp_path / "w.duckdb"
    example, opts = _first_example(registry.adapters()[name])
    first = _clean_ingest(db, name)
    assert [s.format for s in first.sources] == [name]
    counts = rows(db, "select count(*) from sources")
    again = ingest(db, example, **opts)
    assert again.sources == []
    assert [s.reason.split(":")[0] for s in again.skipped] == [
        "already in the workspace as source 1"
    ]
    assert rows(db, "select count(*) from sources") == counts


def streams_across_read_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    example, opts = _first_example(registry.adapters()[name])
    whole = _clean_ingest(tmp_path / "whole.duckdb", name)
    patched = 0
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("relplan.ingest") and hasattr(mod, "BATCH_ROWS"):
            monkeypatch.setattr(mod, "BATCH_ROWS", 2)
            patched += 1
    assert patched, "no relplan.ingest module has BATCH_ROWS: nothing streams"
    small = ingest(tmp_path / "small.duckdb", example, **opts)
    assert [(s.format, s.rows, s.rejected) for s in small.sources] == [
        (s.format, s.rows, s.rejected) for s in whole.sources
    ]
    counts = " union all ".join(
        f"select '{t}', count(*) from {t}"
        for t in ("attempts", "events", "metric_samples", "engine_stats", "request_ids")
    )  # one query per workspace: each connection costs about 20 ms of CPU
    counts += " order by 1"
    assert rows(tmp_path / "small.duckdb", counts) == rows(tmp_path / "whole.duckdb", counts)
