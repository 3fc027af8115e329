"""All or nothing (issue 25): an ingest that reports an error leaves the workspace exactly as
it was, for every registered input format (relplan/ingest/registry.py, each example file of
each) and for `--attach`.

Each case runs the CLI on a workspace that already holds data and compares everything the
file holds before and after (tests/helpers/ingest.py, whole_state: every table's columns,
row count and a hash of its rows, views, sequences). The command fails partway:

- `own_line`: the example with a broken line appended (formats whose every line is a record):
  the adapter itself refuses a record after it has staged the others;
- `malformed`: the example, then a proxy log whose 4th line is no JSON: the example is staged
  when the second file fails (and the fast readers give way to the exact ones, which must
  still read the example);
- `milliseconds`: the example, then a proxy log whose 4th line has its time in milliseconds
  (year 57883; issue 25's "a failed ingest commits");
- `new_path`: `malformed` into a `--db` that did not exist: no workspace file is left behind.

The error is one `relplan: error: FILE:LINE: ...` line, exit 2, naming the bad file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

from relplan.cli import app
from relplan.errors import InputError
from relplan.ingest import registry
from relplan.ingest.adapter import Adapter, never
from tests.helpers.fast_cli import CliRunner
from tests.helpers.fast_read import whole_state
from tests.helpers.ingest import INCIDENT, ingest

ROOT = Path(__file__).resolve().parent.parent
ADAPTERS = registry.adapters()
# `own_line` and `malformed` for every example, the others for each format's first; the fast
# loop (not slow) keeps `malformed` of each format's first example and one `new_path`.
CASES = [
    pytest.param(
        name,
        i,
        bad,
        id=f"{name}-{i}-{bad}",
        marks=()
        if i == 0 and (bad == "malformed" or (bad == "new_path" and name == "jsonl"))
        else pytest.mark.slow,
    )
    for name, a in ADAPTERS.items()
    for i in range(len(a.examples))
    for bad in ("own_line", "malformed", "milliseconds", "new_path")
    if i == 0 or bad in ("own_line", "malformed")
    # a format chosen by an option (--map) reads every file of the ingest: no second format
    if a.recognise is not never or bad == "own_line"
]
T0 = 1_764_460_800.0
# The CLI flag of each option an example needs.
# Each example option's flag, from the formats' own declarations (registry).
_FLAGS = {o.field: o.flag for o in registry.input_options().values()}


def _flags(options: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for key, value in options.items():
        shown = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
        if shown.startswith("tests/"):  # a file of the example (a mapping)
            shown = str(ROOT / shown)
        out += [_FLAGS[key], shown]
    return out


def _late_proxy(path: Path, bad: str) -> Path:
    """A proxy log of calls no example has: three good lines, then the bad one (line 4)."""
    recs = [
        {
            "call_id": f"late{i}",
            "attempt": 0,
            "t_sent": T0 + i,
            "t_end": T0 + i + 1,
            "outcome": "delivered",
            "status": 200,
            "model": "m",
            "replica": "r0",
            "prompt_tokens": 10,
            "max_tokens": 5,
        }
        for i in range(4)
    ]
    lines = [json.dumps(r) for r in recs[:3]]
    if bad == "malformed":
        lines.append('{"call_id": "late3", "attempt": ')
    else:  # a time in milliseconds
        recs[3]["t_sent"] = (T0 + 3) * 1000
        recs[3]["t_end"] = (T0 + 4) * 1000
        lines.append(json.dumps(recs[3]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _own_broken_line(a: Adapter, example: Path, tmp: Path) -> tuple[Path, int] | None:
    """The example with a line it must refuse appended, and that line's number; None for
    formats that are not one record a line."""
    if not a.lines or a.prose or a.shape == "parquet":
        return None
    text = example.read_text(encoding="utf-8")
    if a.shape == "json":
        try:
            if not all(isinstance(json.loads(ln), dict) for ln in text.splitlines() if ln.strip()):
                return None
        except ValueError:
            return None
        bad = '{"broken": '
    elif a.name == "csv":
        bad = "c9,0,,not-a-time,1764460840,delivered,e9,false,,200,llama-8b,r1,1,1"
    else:
        bad = "this is not a record"
    out = tmp / f"bad{''.join(example.suffixes)}"
    out.write_text(text.rstrip("\n") + "\n" + bad + "\n", encoding="utf-8")
    return out, text.rstrip("\n").count("\n") + 2


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with data in it: the incident's engine trace and metrics."""
    db = tmp_path_factory.mktemp("base") / "base.duckdb"
    done = CliRunner().invoke(
        app, ["ingest", "--db", str(db), str(INCIDENT / "engine.jsonl"), str(INCIDENT / "run.json")]
    )
    assert done.exit_code == 0, done.output
    return db


@pytest.fixture(scope="module")
def base_state(base: Path) -> dict[str, Any] | None:
    """Everything the base workspace holds (each test's `w.duckdb` starts as a byte copy)."""
    return whole_state(base)


_ALONE: dict[tuple[str, int], str | None] = {}


def _refused_alone(base: Path, name: str, index: int, tmp: Path) -> str | None:
    """The error of the example ingested alone into the base workspace (some published
    examples are refused whole without --on-error skip), None when it ingests."""
    key = (name, index)
    if key not in _ALONE:
        ex = ADAPTERS[name].examples[index]
        db = tmp / "alone.duckdb"
        shutil.copy(base, db)
        try:
            ingest(db, ROOT / ex.path, **ex.options)
            _ALONE[key] = None
        except InputError as exc:
            _ALONE[key] = str(exc)
        finally:
            db.unlink()
    return _ALONE[key]


def _fails_cleanly(args: list[str], where: str) -> None:
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 2, done.output
    err = done.stderr
    assert err.startswith(f"relplan: error: {where}"), err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err


@pytest.mark.parametrize(("name", "index", "bad"), CASES)
def test_a_failed_ingest_leaves_the_workspace_as_it_was(
    tmp_path: Path, base: Path, base_state: dict[str, Any] | None, name: str, index: int, bad: str
) -> None:
    a = ADAPTERS[name]
    example = ROOT / a.examples[index].path
    flags = _flags(a.examples[index].options)
    db = tmp_path / "w.duckdb"
    if bad == "new_path":
        files = [example, _late_proxy(tmp_path / "late.jsonl", "malformed")]
        where = f"{files[1]}:4: "
        alone = _refused_alone(base, name, index, tmp_path)
        if alone is not None:
            where = alone.split(": ", 1)[0]
    else:
        shutil.copy(base, db)
        if bad == "own_line":
            broken = _own_broken_line(a, example, tmp_path)
            if broken is None:
                pytest.skip(f"{name}: not one record a line")
            if _refused_alone(base, name, index, tmp_path) is not None:
                pytest.skip(f"{name}: example {index} is refused whole (see `malformed`)")
            files, where = [broken[0]], f"{broken[0]}:{broken[1]}: "
        else:
            files = [example, _late_proxy(tmp_path / "late.jsonl", bad)]
            where = f"{files[1]}:4: "
            alone = _refused_alone(base, name, index, tmp_path)
            if alone is not None:  # then the example is what fails, first
                where = alone.split(": ", 1)[0]
    before = None if bad == "new_path" else base_state
    _fails_cleanly(["ingest", "--db", str(db), *flags, *map(str, files)], where)
    assert whole_state(db) == before
    if bad == "new_path":
        assert sorted(p.name for p in tmp_path.iterdir()) == ["late.jsonl"]


def _steps(out: Path, *, bad_row: bool = False, text_time: bool = False) -> None:
    """Two hours of engine steps as Hive partitions; with `bad_row` the second hour's file has
    a step that ends before it is issued (its 6th row), with `text_time` its t_issue is text."""
    con = duckdb.connect()
    try:
        for hour in (0, 1):
            folder = out / "day=2025-11-30" / f"hour={hour:02d}"
            folder.mkdir(parents=True)
            last = hour == 1
            t_done = "t - 1" if bad_row and last else "t + 0.03"
            t_issue = "cast(t as varchar)" if text_time and last else "t"
            con.execute(
                f"copy (select 'step' as type, i as step, {t_issue} as t_issue,"
                f" case when i = {hour * 100 + 5} then {t_done} else t + 0.03 end as t_done,"
                " 'x' || i as execution_id, 10::bigint as prompt_computed, 'r0' as replica"
                f" from (select i, {T0} + i * 36.0 as t from range({hour * 100}, {hour * 100 + 100})"
                f" r(i))) to '{folder}/data_0.parquet' (format parquet)"
            )
    finally:
        con.close()


@pytest.mark.parametrize("case", ["bad_row", "text_time", "copied_already", "new_path"])
def test_a_failed_attach_leaves_the_workspace_as_it_was(
    tmp_path: Path, base: Path, case: str
) -> None:
    traces = tmp_path / "traces"
    _steps(traces, bad_row=case in ("bad_row", "new_path"), text_time=case == "text_time")
    second = traces / "day=2025-11-30" / "hour=01" / "data_0.parquet"
    db = tmp_path / "w.duckdb"
    if case != "new_path":
        shutil.copy(base, db)
    if case == "copied_already":
        done = CliRunner().invoke(app, ["ingest", "--db", str(db), str(second)])
        assert done.exit_code == 0, done.output
    before = whole_state(db)
    where = f"{second}:6: " if case in ("bad_row", "new_path") else f"{second}: "
    _fails_cleanly(["ingest", "--db", str(db), "--attach", f"{traces}/**/*.parquet"], where)
    assert whole_state(db) == before
    if case == "new_path":
        assert sorted(p.name for p in tmp_path.iterdir()) == ["traces"]
