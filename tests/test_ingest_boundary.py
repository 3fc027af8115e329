"""Numbers, times and encodings at the ingest boundary (docs/formats.md, Rules for every input)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from relplan.errors import InputError
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest

T0 = 1764460800


def _row(call: str, attempt: str = "0", t: str = str(T0), tokens: str = "10") -> str:
    return (
        f'{{"call_id":"{call}","attempt":{attempt},"t_sent":{t},"t_end":{t},'
        f'"outcome":"delivered","prompt_tokens":{tokens}}}'
    )


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("attempt", "1e12", "attempt 1000000000000.0 is too large; expected at most 2147483647"),
        ("attempt", "true", "attempt: true is not a number"),
        ("tokens", str(2**63), "is too large; expected at most 9007199254740992"),
        ("tokens", "1e400", "prompt_tokens is not finite"),
        ("t", str(T0 * 1000), "looks like epoch milliseconds; expected epoch seconds"),
        ("t", str(T0 * 1_000_000), "looks like epoch microseconds"),
        ("t", "5e9", "is after 2100"),
    ],
)
def test_an_out_of_range_number_names_its_line(
    tmp_path: Path, field: str, value: str, message: str
) -> None:
    p = tmp_path / "proxy.jsonl"
    bad = {"attempt": _row("b", attempt=value), "tokens": _row("b", tokens=value)}.get(
        field, _row("b", t=value)
    )
    p.write_text(_row("a") + "\n" + bad + "\n")
    with pytest.raises(InputError, match=f"proxy.jsonl:2: .*{message}"):
        ingest(tmp_path / "ws.duckdb", p)
    ingest(tmp_path / "skip.duckdb", p, on_error="skip")
    assert rows(tmp_path / "skip.duckdb", "select call_id from attempts") == [("a",)]
    assert rows(tmp_path / "skip.duckdb", "select line from rejects") == [(2,)]


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("bom.jsonl", ("\ufeff" + _row("a") + "\n" + _row("b") + "\n").encode()),
        ("crlf.jsonl", (_row("a") + "\r\n  \r\n" + _row("b") + "\r\n").encode()),
        (
            "long.jsonl",
            (
                _row("a").replace("}", f',"model":"{"m" * 70000}"}}') + "\n" + _row("b") + "\n"
            ).encode(),
        ),
        ("gz.jsonl.gz", gzip.compress((_row("a") + "\n" + _row("b") + "\n").encode())),
    ],
)
def test_valid_variants_of_json_lines_are_accepted(tmp_path: Path, name: str, data: bytes) -> None:
    p = tmp_path / name
    p.write_bytes(data)
    ingest(tmp_path / "ws.duckdb", p)
    got = rows(tmp_path / "ws.duckdb", "select call_id, source_row from attempts order by 1")
    assert [c for c, _ in got] == ["a", "b"]
    assert got[0][1] == 1


def test_lines_that_are_not_utf8_are_rejects_in_skip_mode(tmp_path: Path) -> None:
    p = tmp_path / "proxy.jsonl"
    p.write_bytes(
        (_row("a") + "\n").encode() + b'{"call_id":"\xff"}\n' + (_row("c") + "\n").encode()
    )
    with pytest.raises(InputError, match=r"proxy\.jsonl:2: bytes that are not UTF-8"):
        ingest(tmp_path / "ws.duckdb", p)
    ingest(tmp_path / "skip.duckdb", p, on_error="skip")
    db = tmp_path / "skip.duckdb"
    assert rows(db, "select call_id, source_row from attempts order by 1") == [("a", 1), ("c", 3)]
    assert rows(db, "select line, reason from rejects") == [
        (2, "bytes that are not UTF-8 at column 13; expected UTF-8 text")
    ]


def test_a_file_name_with_glob_characters_is_read_as_itself(tmp_path: Path) -> None:
    (tmp_path / "p[1].jsonl").write_text(_row("real") + "\n")
    (tmp_path / "p1.jsonl").write_text(_row("other") + "\n")  # what the pattern would match
    ingest(tmp_path / "ws.duckdb", tmp_path / "p[1].jsonl")
    assert rows(tmp_path / "ws.duckdb", "select call_id from attempts") == [("real",)]


def test_deeply_nested_json_is_an_input_error(tmp_path: Path) -> None:
    p = tmp_path / "proxy.jsonl"
    p.write_text('{"call_id":"c","x":' + "[" * 5000 + "]" * 5000 + "}\n")
    with pytest.raises(InputError, match="nested too deeply"):
        ingest(tmp_path / "ws.duckdb", p)
