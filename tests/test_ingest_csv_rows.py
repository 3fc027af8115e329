"""Canonical CSV files whose rows do not fit: short or long rows, blank lines, bytes that are
not UTF-8, header names that collide with SQL or with the reader's own columns
(relplan/ingest/canonical/csv_rows.py)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from relplan.errors import InputError
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

T0 = 1764460800
HEADER = "call_id,attempt,t_sent,t_end,outcome,prompt_tokens"


def _row(i: int) -> str:
    return f"c{i},0,{T0 + i},{T0 + i + 1},delivered,{10 + i}"


def _write(path: Path, lines: list[str]) -> Path:
    path.write_bytes("".join(line + "\n" for line in lines).encode())
    return path


def _rejects(db: Path) -> list[tuple[int, str]]:
    return [(int(r[0]), str(r[1])) for r in rows(db, "select line, reason from rejects order by 1")]


def test_short_and_long_rows_are_rejects_with_their_line_and_the_rest_ingests(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path / "p.csv",
        [HEADER, _row(1), f"c2,0,{T0}", _row(3), _row(4) + ",extra,more", _row(5)],
    )
    db = tmp_path / "w.duckdb"
    report = ingest(db, path, on_error="skip")
    assert report.sources[0].rows == 3
    assert _rejects(db) == [
        (3, "3 fields, fewer than the header's 6; expected one field per column"),
        (5, "8 fields, more than the header's 6; expected one field per column"),
    ]
    assert sorted(r[0] for r in rows(db, "select call_id from attempts")) == ["c1", "c3", "c5"]
    (raw,) = rows(db, "select raw from rejects where line = 3")[0]
    assert raw == f"c2,0,{T0}"


def test_a_short_row_stops_a_fail_mode_ingest_at_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.csv", [HEADER, _row(1), _row(2), "c3,0"])
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "w.duckdb", path)
    assert (err.value.line, err.value.reason) == (
        4,
        "2 fields, fewer than the header's 6; expected one field per column",
    )


@pytest.mark.parametrize("blank", ["", "   ", "\t"])
def test_errors_name_the_physical_line_after_blank_lines(tmp_path: Path, blank: str) -> None:
    path = _write(
        tmp_path / "p.csv", [HEADER, blank, _row(1), blank, blank, _row(2).replace(",0,", ",x,")]
    )
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "w.duckdb", path)
    assert (err.value.line, err.value.reason) == (6, "attempt: x is not a number")


def test_blank_lines_are_no_records_and_later_rows_keep_their_lines(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.csv", [HEADER, "", _row(1), "", _row(2).replace(",0,", ",x,")])
    db = tmp_path / "w.duckdb"
    report = ingest(db, path, on_error="skip")
    assert (report.sources[0].rows, report.sources[0].rejected) == (1, 1)
    assert _rejects(db) == [(5, "attempt: x is not a number")]
    assert rows(db, "select source_row from attempts") == [(3,)]


def test_a_quoted_field_over_two_lines_is_one_record_named_by_its_first_line(
    tmp_path: Path,
) -> None:
    path = _write(
        tmp_path / "p.csv",
        [HEADER, f'"c1\nsecond",0,{T0},{T0 + 1},delivered,1', _row(2).replace(",0,", ",x,")],
    )
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "w.duckdb", path)
    assert err.value.line == 4


@pytest.mark.parametrize("gz", [False, True])
def test_a_line_that_is_not_utf8_is_a_reject_in_skip_mode(tmp_path: Path, gz: bool) -> None:
    data = (HEADER + "\n" + _row(1) + "\n").encode() + b"c2,0,\xff\xfe,1,delivered,1\n"
    data += (_row(3) + "\n").encode()
    path = tmp_path / ("p.csv.gz" if gz else "p.csv")
    path.write_bytes(gzip.compress(data) if gz else data)
    db = tmp_path / "w.duckdb"
    ingest(db, path, on_error="skip")
    assert _rejects(db) == [(3, "bytes that are not UTF-8 at column 6; expected UTF-8 text")]
    assert rows(db, "select count(*) from attempts") == [(2,)]
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "fail.duckdb", path)
    assert err.value.line == 3


@pytest.mark.parametrize("name", ["select", "from", "order", "ordinality", "_ln", "a b", "x,y"])
def test_a_column_named_like_an_sql_keyword_or_a_reader_column_is_just_ignored(
    tmp_path: Path, name: str
) -> None:
    quoted = f'"{name}"' if "," in name else name
    path = _write(tmp_path / "p.csv", [f"{HEADER},{quoted}", f"{_row(1)},v", f"{_row(2)},w"])
    db = tmp_path / "w.duckdb"
    report = ingest(db, path)
    assert report.sources[0].rows == 2
    assert report.sources[0].unknown_columns == [name]
    assert rows(db, "select source_row, prompt_tokens from attempts order by 1") == [
        (2, 11),
        (3, 12),
    ]


def test_a_header_naming_a_column_twice_is_refused_at_line_1(tmp_path: Path) -> None:
    path = _write(tmp_path / "p.csv", [f"{HEADER},attempt", f"{_row(1)},1"])
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "w.duckdb", path)
    assert (err.value.line, err.value.reason) == (
        1,
        "column 'attempt' appears twice in the header; expected each column once",
    )


def test_engine_csv_short_rows_are_rejects_too(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "e.csv",
        [
            "type,t,execution_id,event,prompt_tokens",
            f"event,{T0},e1,arrived,5",
            "event,1",
            f"event,{T0 + 1},e2,arrived,6",
        ],
    )
    db = tmp_path / "w.duckdb"
    ingest(db, path, on_error="skip")
    assert _rejects(db) == [
        (3, "2 fields, fewer than the header's 5; expected one field per column")
    ]
    assert rows(db, "select count(*) from events") == [(2,)]
