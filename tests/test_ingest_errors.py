"""Bad input: the first bad record is named as FILE:LINE with what was wrong and what was
expected, and the workspace is left exactly as it was (one transaction per ingest)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from relplan.cli import app
from relplan.errors import InputError
from tests.helpers.fast_cli import CliRunner
from tests.helpers.fast_read import rows, state
from tests.helpers.ingest import INCIDENT, ingest, write_lines

ROOT = Path(__file__).resolve().parent.parent
GOOD = (INCIDENT / "proxy.jsonl").read_text().splitlines()
ENGINE_GOOD = (INCIDENT / "engine.jsonl").read_text().splitlines()


def _changed(good: list[str], line: int, changes: dict[str, object]) -> list[str]:
    """`good` with fields of one line (1-based) changed (None removes a field)."""
    out = list(good)
    rec = json.loads(out[line - 1])
    for k, v in changes.items():
        if v is None:
            rec.pop(k, None)
        else:
            rec[k] = v
    out[line - 1] = json.dumps(rec)
    return out


def _proxy(line: int, **changes: object) -> list[str]:
    """The good proxy log with fields of one line changed."""
    return _changed(GOOD, line, changes)


def _engine(line: int, **changes: object) -> list[str]:
    """The good engine trace with fields of one line changed."""
    return _changed(ENGINE_GOOD, line, changes)


def _replace(lines: list[str], line: int, text: str) -> list[str]:
    out = list(lines)
    out[line - 1] = text
    return out


PROXY_CASES = [
    (
        "malformed_json",
        _replace(GOOD, 3, '{"call_id": "c2", "attempt": 0,'),
        3,
        "malformed JSON; expected one JSON object per line",
    ),
    ("not_an_object", _replace(GOOD, 2, "[1, 2]"), 2, "expected a JSON object, got a JSON array"),
    (
        "malformed_first_line",
        _replace(GOOD, 1, '{"call_id": "c1", "attempt"'),
        1,
        "malformed JSON; expected one JSON object per line",
    ),
    (
        "bad_enum",
        _proxy(2, outcome="timeout"),
        2,
        "outcome 'timeout' is not one of delivered, client_gone, shed, error",
    ),
    (
        "bad_time",
        _proxy(2, t_sent="yesterday"),
        2,
        "t_sent: cannot read yesterday as a time; expected epoch seconds or RFC 3339 with an offset",
    ),
    (
        "time_without_offset",
        _proxy(4, t_end="2025-11-30T00:00:02"),
        4,
        "t_end: cannot read 2025-11-30T00:00:02 as a time",
    ),
    (
        "end_before_send",
        _proxy(5, t_end=1764460802.5),
        5,
        "t_end (1764460802.5) is before t_sent (1764460803.0); expected t_end >= t_sent",
    ),
    (
        "duplicate_attempt",
        _proxy(2, attempt=0),
        2,
        "attempt 0 of call 'c1' already appears on line 1; expected distinct attempt numbers per call",
    ),
    (
        "attached_without_execution",
        _proxy(6, execution_id=None),
        6,
        "attached is true but execution_id is empty",
    ),
    (
        "shed_with_execution",
        _proxy(4, execution_id="e9"),
        4,
        "outcome is shed but execution_id is 'e9'; a shed attempt has no execution",
    ),
    (
        "negative_tokens",
        _proxy(3, prompt_tokens=-5),
        3,
        "prompt_tokens -5.0 is not a whole number >= 0",
    ),
    (
        "fractional_tokens",
        _proxy(3, max_tokens=3.5),
        3,
        "max_tokens 3.5 is not a whole number >= 0",
    ),
    ("tokens_not_a_number", _proxy(3, max_tokens="many"), 3, "max_tokens: many is not a number"),
    ("missing_call_id", _proxy(1, call_id=None), 1, "call_id is missing"),
    ("missing_t_end", _proxy(2, t_end=None), 2, "t_end is missing; expected a time"),
    # Set-wise checking: the lowest bad line is reported, whatever kind of problem it is.
    ("lowest_line_wins", _replace(_proxy(2, outcome="nope"), 4, "{oops"), 2, "outcome 'nope'"),
    (
        "lowest_line_wins_malformed_first",
        _replace(_proxy(5, outcome="nope"), 3, "{oops"),
        3,
        "malformed JSON",
    ),
]

ENGINE_CASES = [
    (
        "bad_event",
        _engine(2, event="started"),
        2,
        "event 'started' is not one of arrived, scheduled, first_token, preempted, aborted,"
        " finished, rejected",
    ),
    ("bad_type", _engine(4, type="gauge"), 4, "type 'gauge' is not one of event, step, stats"),
    (
        "arrived_without_prompt_tokens",
        _engine(1, prompt_tokens=None),
        1,
        "prompt_tokens is missing on an arrived event",
    ),
    (
        "step_done_before_issue",
        _engine(5, t_done=1764460800.3),
        5,
        "t_done (1764460800.3) is before t_issue (1764460800.4)",
    ),
    (
        "step_without_prompt_computed",
        _engine(7, prompt_computed=None),
        7,
        "prompt_computed is missing",
    ),
    ("kv_usage_out_of_range", _engine(4, kv_usage=1.5), 4, "kv_usage 1.5 is outside 0..1"),
    (
        "negative_decode",
        _engine(10, decode_tokens=-1),
        10,
        "decode_tokens -1.0 is not a whole number",
    ),
]


State = dict[str, list[tuple[Any, ...]]]


@pytest.fixture(scope="module")
def db_with_one_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("ingest") / "w.duckdb"
    ingest(d, INCIDENT / "run.json")
    return d


@pytest.fixture
def db(db_with_one_source: Path, tmp_path: Path) -> Path:
    """A workspace that already holds one source, so 'unchanged' is not trivially empty
    (a copy of one built once per module)."""
    d = tmp_path / "w.duckdb"
    shutil.copyfile(db_with_one_source, d)
    return d


@pytest.fixture(scope="module")
def one_source(db_with_one_source: Path) -> State:
    """Every row the workspace `db` starts with (read once per module: `db` is a byte copy)."""
    return state(db_with_one_source)


@pytest.mark.parametrize(
    ("name", "lines", "line", "message"),
    [*PROXY_CASES, *ENGINE_CASES],
    ids=lambda v: str(v)[:30],
)
def test_bad_record_names_file_and_line_and_changes_nothing(
    db: Path,
    one_source: State,
    tmp_path: Path,
    name: str,
    lines: list[str],
    line: int,
    message: str,
) -> None:
    """A bad proxy or engine record: FILE:LINE and the reason, and the workspace unchanged."""
    p = write_lines(tmp_path / f"{name}.jsonl", lines)
    with pytest.raises(InputError) as err:
        ingest(db, p)
    assert str(err.value).startswith(f"{p}:{line}: {message}"), str(err.value)
    assert state(db) == one_source


def test_csv_missing_a_required_column_names_the_header_line(
    db: Path, one_source: State, tmp_path: Path
) -> None:
    p = tmp_path / "p.csv"
    p.write_text("call_id,attempt,t_sent,outcome\nc1,0,1764460800,delivered\n")
    with pytest.raises(InputError, match=r"p\.csv:1: missing column t_end; expected call_id"):
        ingest(db, p)
    assert state(db) == one_source


def test_csv_bad_value_names_its_line_counting_the_header(db: Path, tmp_path: Path) -> None:
    p = tmp_path / "p.csv"
    p.write_text(
        "call_id,attempt,t_sent,t_end,outcome\n"
        "c1,0,1764460800,1764460801,delivered\n"
        "c1,1,1764460802,1764460801,delivered\n"
    )
    with pytest.raises(InputError, match=r"p\.csv:3: t_end \(1764460801\.0\) is before t_sent"):
        ingest(db, p)


def test_a_bad_second_file_keeps_the_good_first_file_out_too(
    db: Path, one_source: State, tmp_path: Path
) -> None:
    bad = write_lines(tmp_path / "bad.jsonl", _proxy(2, outcome="nope"))
    with pytest.raises(InputError, match=r"bad\.jsonl:2: "):
        ingest(db, INCIDENT / "engine.jsonl", bad)
    assert state(db) == one_source


def test_bytes_that_are_not_utf8_name_the_line(db: Path, tmp_path: Path) -> None:
    p = tmp_path / "p.jsonl"
    p.write_bytes(GOOD[0].encode() + b"\n" + b'{"call_id": "\xff\xfe"}\n')
    with pytest.raises(InputError, match=r"p\.jsonl:2: bytes that are not UTF-8"):
        ingest(db, p)


def test_an_empty_file_is_refused(db: Path, tmp_path: Path) -> None:
    p = tmp_path / "empty.jsonl"
    p.write_text("")
    with pytest.raises(InputError, match=r"empty\.jsonl: the file is empty"):
        ingest(db, p)


def test_a_missing_file_is_refused(db: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"nope\.jsonl: no such file or directory"):
        ingest(db, tmp_path / "nope.jsonl")


def test_skip_mode_keeps_going_and_stores_each_bad_record(db: Path, tmp_path: Path) -> None:
    lines = _replace(_proxy(2, outcome="nope"), 4, "{oops")
    p = write_lines(tmp_path / "p.jsonl", lines)
    rep = ingest(db, p, on_error="skip")
    (src,) = rep.sources
    assert (src.rows, src.rejected) == (4, 2)
    got = rows(db, "select path, line, raw, reason from rejects order by line")
    assert [(g[0], g[1], g[2]) for g in got] == [
        (str(p.resolve()), 2, lines[1]),
        (str(p.resolve()), 4, "{oops"),
    ]
    assert got[0][3].startswith("outcome 'nope' is not one of")
    assert got[1][3] == "malformed JSON; expected one JSON object per line"
    assert rows(db, "select call_id, attempt from attempts order by call_id, attempt") == [
        ("c1", 0),
        ("c2", 0),
        ("c3", 1),
        ("c3", 2),
    ]


def test_skip_mode_on_a_parquet_file_keeps_the_row_as_json(db: Path, tmp_path: Path) -> None:
    import duckdb

    pq = tmp_path / "e.parquet"
    con = duckdb.connect()
    con.execute(
        "copy (select 'step' as type, 1 as step, 10.0 as t_issue, 9.0 as t_done, 'x' as"
        " execution_id, 5 as prompt_computed) to '" + str(pq).replace("'", "''") + "'"
    )
    con.close()
    rep = ingest(db, pq, on_error="skip")
    assert rep.sources[0].rejected == 1
    ((line, raw, reason),) = rows(db, "select line, raw, reason from rejects")
    assert line == 1
    assert json.loads(raw)["t_done"] == 9.0
    assert reason.startswith("t_done (9.0) is before t_issue (10.0)")


def test_cli_prints_one_error_line_and_exits_2(db: Path, tmp_path: Path) -> None:
    p = write_lines(tmp_path / "p.jsonl", _proxy(3, outcome="lost"))
    res = CliRunner().invoke(app, ["ingest", str(p), "--db", str(db)])
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.startswith(f"relplan: error: {p}:3: outcome 'lost' is not one of")
    assert res.stderr.count("\n") == 1
    assert "Traceback" not in res.stderr


_KILL_SCRIPT = """
import sys
from pathlib import Path
from relplan.ingest import IngestOptions, ingest_paths
ingest_paths(Path(sys.argv[1]), [Path(sys.argv[2])], IngestOptions())
print("done", flush=True)
"""


def _big_engine_file(path: Path, n: int) -> None:
    with path.open("w") as f:
        for i in range(n):
            f.write(
                f'{{"type":"step","step":{i},"t_issue":{i}.0,"t_done":{i}.5,'
                f'"execution_id":"e{i % 97}","prompt_computed":{i % 500},"decode_tokens":1}}\n'
            )


@pytest.mark.slow
def test_kill_mid_ingest_leaves_the_previous_state(db: Path, tmp_path: Path) -> None:
    """SIGKILL at several moments of a large ingest: afterwards the workspace holds either
    exactly what it held before or the whole file, never part of it."""
    big = tmp_path / "big.jsonl"
    n = 400_000
    _big_engine_file(big, n)
    before = state(db)
    killed_before_commit = 0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for delay in (0.3, 0.8, 1.5, 2.5):
        proc = subprocess.Popen(
            [sys.executable, "-c", _KILL_SCRIPT, str(db), str(big)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        steps = rows(db, "select count(*) from steps")[0][0]
        assert steps in (0, n)
        if steps == n:  # the kill came after the commit (or the ingest finished first)
            break
        assert state(db) == before
        killed_before_commit += 1
    assert killed_before_commit >= 1


def _engine_parquet(path: Path, lines: list[str]) -> Path:
    import duckdb

    src = write_lines(path.with_suffix(".jsonl"), lines)
    con = duckdb.connect()
    con.execute(
        "copy (select * from read_json($p, format='newline_delimited')) to '"
        + str(path).replace("'", "''")
        + "' (format parquet)",
        {"p": str(src)},
    )
    con.close()
    return path


def test_bad_row_of_a_direct_parquet_insert_is_named_by_its_row(
    db: Path, one_source: State, tmp_path: Path
) -> None:
    """Fail mode inserts canonical-typed engine Parquet straight into the tables; a refused
    row rolls that back and the file is staged to name the row (here row 5 of 11)."""
    pq = _engine_parquet(tmp_path / "e.parquet", _engine(5, t_done=1764460800.3))
    with pytest.raises(InputError) as err:
        ingest(db, INCIDENT / "proxy.jsonl", pq)
    assert str(err.value).startswith(f"{pq.resolve()}:5: t_done (1764460800.3) is before t_issue")
    assert state(db) == one_source


def test_a_bad_type_in_a_direct_parquet_file_is_caught_by_the_events_insert(
    db: Path, tmp_path: Path
) -> None:
    pq = _engine_parquet(tmp_path / "e.parquet", _engine(4, type="gauge"))
    with pytest.raises(InputError, match=r"e\.parquet:4: type 'gauge' is not one of"):
        ingest(db, pq)


def test_engine_parquet_with_rfc3339_strings_goes_through_the_converting_reader(
    db: Path, tmp_path: Path
) -> None:
    import duckdb

    src = write_lines(tmp_path / "e.jsonl", _engine(1, t="2025-11-30T00:00:00.1Z"))
    pq = tmp_path / "e.parquet"
    con = duckdb.connect()
    con.execute(  # t as a text column: one RFC 3339 string, the others numbers as text
        "copy (select * replace (t->>'$' as t) from read_json($p, format='newline_delimited'))"
        " to '" + str(pq).replace("'", "''") + "' (format parquet)",
        {"p": str(src)},
    )
    con.close()
    rep = ingest(db, pq)
    assert rep.rows_by_table == {"events": 6, "steps": 4, "engine_stats": 1}
    assert rows(db, "select t from events where source_row = 1") == [(1764460800.1,)]


def test_skip_mode_keeps_raw_text_when_the_fast_reader_took_the_file(
    db: Path, tmp_path: Path
) -> None:
    """Every line types fine (fast JSON reader) but one breaks an invariant: skip mode reads
    the file again line by line so the reject keeps the raw line."""
    lines = _proxy(4, execution_id="e9")
    p = write_lines(tmp_path / "p.jsonl", lines)
    rep = ingest(db, p, on_error="skip")
    assert (rep.sources[0].rows, rep.sources[0].rejected) == (5, 1)
    assert rows(db, "select line, raw from rejects") == [(4, lines[3])]
    assert rows(
        db, "select count(*) from attempts where source_id = $s", {"s": rep.sources[0].source_id}
    ) == [(5,)]


def test_forcing_the_wrong_kind_is_refused(db: Path) -> None:
    with pytest.raises(InputError, match=r"looks like engine data \(jsonl\), not proxy"):
        ingest(db, INCIDENT / "engine.jsonl", kind="proxy")
