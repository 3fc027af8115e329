"""Engine JSON Lines in fail mode take DuckDB's typed reader (numbers read as DOUBLE, the
checks inside the inserts: queries/ingest/engine_read_jsonl_typed.sql, direct_jsonl_*.sql).
It must store exactly what the staged and exact readers store, and refuse what they refuse
with the same FILE:LINE, including the JSON boolean the typed reader would read as 1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from relplan.errors import InputError
from relplan.ingest.canonical import tables
from relplan.ingest.files import _CHUNK, digest
from tests.helpers.fast_read import rows, state
from tests.helpers.ingest import INCIDENT, ingest, write_lines

T0 = 1764460800.0  # 2025-11-30T00:00:00Z


def _stored(db: Path) -> dict[str, list[tuple[object, ...]]]:
    every = state(db)
    return {t: every[t] for t in ("events", "steps", "engine_stats", "request_ids")}


@pytest.mark.slow
def test_typed_path_stores_what_the_staged_and_exact_readers_store(tmp_path: Path) -> None:
    # tests/data/ingest/incident/engine.jsonl plus two records with vLLM's external ids
    # (relplan/vllm_plugin/writer.py writes them), so request_ids are compared too.
    lines = [
        *(INCIDENT / "engine.jsonl").read_text().splitlines(),
        json.dumps(
            {
                "type": "event",
                "t": T0 + 5,
                "execution_id": "cmpl-abc123-0",
                "event": "arrived",
                "prompt_tokens": 10,
                "replica": "r0",
            }
        ),
        json.dumps(
            {
                "type": "event",
                "t": T0 + 6,
                "execution_id": "chatcmpl-req-7",
                "event": "arrived",
                "prompt_tokens": 12,
            }
        ),
    ]
    src = write_lines(tmp_path / "engine.jsonl", lines)
    assert not digest(src).booleans
    got = {}
    for name, opts in (("fail", {}), ("skip", {"on_error": "skip"}), ("exact", {})):
        db = tmp_path / f"{name}.duckdb"
        if name == "exact":
            # An RFC 3339 time (the same instant as line 1's) is what the typed reader cannot
            # convert: the ingest starts again with the exact reader, for the whole file.
            first = lines[0].replace('"t":1764460800.1', '"t":"2025-11-30T00:00:00.1Z"')
            assert first != lines[0]
            ingest(db, write_lines(tmp_path / "exact.jsonl", [first, *lines[1:]]))
        else:
            ingest(db, src, **opts)
        got[name] = _stored(db)
    assert got["fail"] == got["skip"] == got["exact"]
    assert rows(
        tmp_path / "fail.duckdb", "select external_id, client_id from request_ids order by 1"
    ) == [
        ("chatcmpl-req-7", "req-7"),
        ("cmpl-abc123-0", "abc123"),
    ]
    assert len(got["fail"]["steps"]) == 4
    assert len(got["fail"]["events"]) == 8


def _spy_typed(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """What each typed read (`tables._stage_typed`) answered, in order: True when it staged
    the file, False when it sent the file to the staged reader."""
    taken: list[bool] = []
    typed = tables._stage_typed

    def spy(*args: Any) -> bool:
        taken.append(typed(*args))
        return taken[-1]

    monkeypatch.setattr(tables, "_stage_typed", spy)
    return taken


@pytest.mark.slow
def test_a_file_read_on_several_threads_stores_each_record_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DuckDB's JSON reader splits a file of more than about 16 MB between its threads; the
    rows reach the stage in file order only because the typed read preserves insertion order
    (without it, a 20 MB file's rows were out of order in a trial). Every step's `step` is its
    own line number here, so a stored `source_row` that is not its line shows."""
    taken = _spy_typed(monkeypatch)
    n = 150_000  # about 26 MB
    src = tmp_path / "engine.jsonl"
    with src.open("w", encoding="utf-8") as fh:
        for ln in range(1, n + 1):
            t = T0 + ln / 1000
            fh.write(
                f'{{"type":"step","step":{ln},"t_issue":{t},"t_done":{t + 0.01},'
                f'"execution_id":"cmpl-{ln // 50}-0","prompt_computed":{ln % 997},'
                f'"prompt_cached":0,"decode_tokens":1,"replica":"r0"}}\n'
            )
    assert src.stat().st_size > 24_000_000
    db = tmp_path / "w.duckdb"
    ingest(db, src)
    assert taken == [True]
    assert rows(db, "select count(*), count(*) filter (where step <> source_row) from steps") == [
        (n, 0)
    ]


def test_files_typed_in_one_ingest_store_their_lines_as_the_exact_reader(tmp_path: Path) -> None:
    """The typed reader's rows of every file go to one stage, one after another: each file's
    lines are its rowids less its own base (ingest/stage_set_base.sql)."""
    lines = (INCIDENT / "engine.jsonl").read_text().splitlines()

    def renamed(tag: str, part: list[str]) -> list[str]:
        return [
            ln.replace('"e1"', f'"{tag}1"').replace('"e2"', f'"{tag}2"').replace('"r0"', f'"{tag}"')
            for ln in part
        ]

    def written(folder: Path, first: str) -> list[Path]:
        folder.mkdir()
        return [
            write_lines(folder / "a.jsonl", [first, *lines[1:]]),
            write_lines(folder / "b.jsonl", renamed("b", lines[:9])),
            write_lines(folder / "c.jsonl", renamed("c", lines[2:])),
        ]

    ingest(tmp_path / "typed.duckdb", *written(tmp_path / "typed", lines[0]))
    # An RFC 3339 time (line 1's instant) the typed reader cannot convert: the whole ingest
    # starts again with the exact reader.
    first = lines[0].replace('"t":1764460800.1', '"t":"2025-11-30T00:00:00.1Z"')
    assert first != lines[0]
    ingest(tmp_path / "exact.duckdb", *written(tmp_path / "exact", first))
    for table, fields in (
        ("steps", "t.t_issue, t.execution_id"),
        ("engine_stats", "t.t_issue, t.num_running"),
        ("events", "t.t, t.event, t.execution_id"),
    ):
        query = (
            f"select parse_filename(s.path), t.source_row, {fields}, t.replica from {table} t"
            " join sources s using (source_id) order by all"
        )
        typed = rows(tmp_path / "typed.duckdb", query)
        assert typed == rows(tmp_path / "exact.duckdb", query)
        assert {r[0] for r in typed} == {"a.jsonl", "b.jsonl", "c.jsonl"}
        assert max(r[1] for r in typed) <= len(lines)


def test_a_json_boolean_in_a_number_is_refused_with_its_line(tmp_path: Path) -> None:
    lines = (INCIDENT / "engine.jsonl").read_text().splitlines()
    lines[2] = lines[2].replace('"prompt_cached":0', '"prompt_cached":true')
    assert '"prompt_cached":true' in lines[2]
    src = write_lines(tmp_path / "engine.jsonl", lines)
    db = tmp_path / "w.duckdb"
    with pytest.raises(InputError) as err:
        ingest(db, src)
    assert (err.value.path, err.value.line) == (str(src), 3)
    assert "prompt_cached: true is not a number" in err.value.reason
    assert not db.exists() or state(db).get("steps") == []


def test_a_refused_record_found_by_the_inserts_names_its_line(tmp_path: Path) -> None:
    lines = (INCIDENT / "engine.jsonl").read_text().splitlines()
    rec = json.loads(lines[4])
    assert rec["type"] == "step"
    rec["t_done"] = rec["t_issue"] - 1
    lines[4] = json.dumps(rec)
    src = write_lines(tmp_path / "engine.jsonl", lines)
    db = tmp_path / "w.duckdb"
    with pytest.raises(InputError, match=r"engine\.jsonl:5: t_done .* is before t_issue"):
        ingest(db, src)
    assert not db.exists() or state(db).get("steps") == []


def _huge_elapsed() -> list[str]:
    """The incident's engine trace with its stats record on line 4 at an elapsed_ms past
    1e300: rp_engine_ok bounds it, rp_engine_reason does not (a record only the full check
    keeps)."""
    lines = (INCIDENT / "engine.jsonl").read_text().splitlines()
    rec = json.loads(lines[3])
    assert rec["type"] == "stats"
    rec["elapsed_ms"] = 1e301
    lines[3] = json.dumps(rec)
    return lines


def test_a_record_the_quick_test_leaves_out_is_checked_fully_and_kept_when_fine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The typed read checks records with rp_engine_ok alone; a record it does not pass is left
    # out and the file is staged again, where rp_engine_reason decides. An elapsed_ms past
    # 1e300 is such a record (rp_engine_ok bounds it, rp_engine_reason does not): kept, as the
    # staged reader of skip mode keeps it, with no restart of the ingest.
    from relplan.ingest import driver

    lines = _huge_elapsed()
    src = write_lines(tmp_path / "engine.jsonl", lines)
    taken = _spy_typed(monkeypatch)
    sessions: list[bool] = []
    real_session = driver.Session

    def session(*args: Any, **kwargs: Any) -> driver.Session:
        made = real_session(*args, **kwargs)
        sessions.append(made.opts.exact)
        return made

    monkeypatch.setattr(driver, "Session", session)
    ingest(tmp_path / "fail.duckdb", src)
    assert taken == [False]
    assert sessions == [False]  # no restart with the exact reader
    ingest(tmp_path / "skip.duckdb", src, on_error="skip")
    assert _stored(tmp_path / "fail.duckdb") == _stored(tmp_path / "skip.duckdb")
    assert rows(
        tmp_path / "fail.duckdb", "select elapsed_ms from engine_stats where source_row = 4"
    ) == [(1e301,)]


def test_a_parquet_record_the_quick_test_refuses_is_checked_fully_and_kept_when_fine(
    tmp_path: Path,
) -> None:
    # The direct Parquet inserts check records with rp_engine_ok alone (rp_engine_checked); one
    # it does not pass rolls the ingest back and the file is staged, where rp_engine_reason
    # decides: an elapsed_ms past 1e300 is kept, as skip mode's staged path keeps it, and a
    # t_done before t_issue is refused with its row.
    lines = _huge_elapsed()
    con = duckdb.connect()

    def parquet(name: str, body: list[str]) -> Path:
        src = write_lines(tmp_path / f"{name}.jsonl", body)
        out = tmp_path / f"{name}.parquet"
        con.execute(
            "copy (select * from read_json($p, format='newline_delimited')) to '"
            + str(out).replace("'", "''")
            + "' (format parquet)",
            {"p": str(src)},
        )
        return out

    fine = parquet("fine", lines)
    step = json.loads(lines[4])
    assert step["type"] == "step"
    step["t_done"] = step["t_issue"] - 1
    bad = parquet("bad", [*lines[:4], json.dumps(step), *lines[5:]])
    con.close()
    ingest(tmp_path / "fail.duckdb", fine)
    ingest(tmp_path / "skip.duckdb", fine, on_error="skip")
    assert _stored(tmp_path / "fail.duckdb") == _stored(tmp_path / "skip.duckdb")
    assert rows(tmp_path / "fail.duckdb", "select elapsed_ms from engine_stats") == [(1e301,)]
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "bad.duckdb", bad)
    assert (err.value.path, err.value.line) == (str(bad), 5)
    assert "is before t_issue" in err.value.reason


@pytest.mark.slow
def test_direct_parquet_stores_request_ids_like_its_staged_path(tmp_path: Path) -> None:
    src = write_lines(
        tmp_path / "engine.jsonl",
        [
            json.dumps(
                {
                    "type": "event",
                    "t": T0,
                    "execution_id": "cmpl-abc123-0",
                    "event": "arrived",
                    "prompt_tokens": 10,
                }
            ),
            json.dumps(
                {"type": "event", "t": T0 + 1, "execution_id": "cmpl-abc123-0", "event": "finished"}
            ),
        ],
    )
    pq = tmp_path / "engine.parquet"
    con = duckdb.connect()
    con.execute(
        "copy (select * from read_json($p, format='newline_delimited')) to '"
        + str(pq).replace("'", "''")
        + "' (format parquet)",
        {"p": str(src)},
    )
    con.close()
    ids = {}
    for name, opts in (("fail", {}), ("skip", {"on_error": "skip"})):
        db = tmp_path / f"{name}.duckdb"
        ingest(db, pq, **opts)
        ids[name] = rows(
            db, "select execution_id, external_id, client_id, source_row from request_ids"
        )
    assert ids["fail"] == ids["skip"] == [("cmpl-abc123-0", "cmpl-abc123-0", "abc123", 1)]


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("prefix_hits", 9, "prefix_hits (9) exceed prefix_queries (4)"),
        ("elapsed_ms", -1.5, "elapsed_ms -1.5 is not a duration"),
        ("num_preempted", 1.5, "num_preempted 1.5 is not a whole number"),
    ],
)
def test_the_plugin_fields_rules_hold_on_the_typed_path(
    tmp_path: Path, field: str, value: float, reason: str
) -> None:
    # A stats record with the plugin's per-iteration fields (docs/formats.md, Engine trace);
    # rp_engine_ok must not pass what rp_engine_reason refuses.
    lines = (INCIDENT / "engine.jsonl").read_text().splitlines()
    rec = json.loads(lines[3])
    assert rec["type"] == "stats"
    rec.update({"elapsed_ms": 12.5, "prefix_queries": 4, "prefix_hits": 2, field: value})
    lines[3] = json.dumps(rec)
    src = write_lines(tmp_path / "engine.jsonl", lines)
    with pytest.raises(InputError) as err:
        ingest(tmp_path / "w.duckdb", src)
    assert (err.value.path, err.value.line) == (str(src), 4)
    assert reason in err.value.reason


_MIB = 1 << 20
_FIRST = 65536  # digest() reads the first 64 KiB, then chunks of _CHUNK bytes


def _case_bytes(case: str) -> bytes:
    line = b'{"type":"step","step":1,"t_issue":1764460800.0,"replica":"r\xc3\xa9"}\n'
    body = line * (3 * _MIB // len(line))
    if case == "clean":
        return body
    if case == "true across chunks":
        # `tr` ends the first chunk, `ue` starts the second.
        return body[: _FIRST - 2] + b"true" + body[_FIRST + 2 :]
    if case == "false late":
        return body + b'{"type":"event","attached":false}'  # no final newline either
    if case == "split character":
        # A two-byte character across the first chunk boundary: that batch is not UTF-8.
        return body[: _FIRST - 1] + b"\xc3\xa9\n" + body
    if case == "crlf":
        return body.replace(b"\n", b"\r\n")
    if case.startswith("true at offset "):
        # Each of the four byte offsets the scan reads 4-byte words at, mid-chunk.
        at = _FIRST + _CHUNK // 2 + int(case.removeprefix("true at offset "))
        return body[:at] + b"true" + body[at + 4 :]
    if case == "fals at a chunk end, e after it":
        # `fals` ends the second chunk (_CHUNK bytes from the first's end), `e` starts the third.
        at = _FIRST + _CHUNK - 4
        return body[:at] + b"false" + body[at + 5 :]
    if case == "fals without e":
        # `fals` followed by another letter, mid-chunk and at a chunk end: not the word.
        at = _FIRST + _CHUNK - 4
        return body[:1000] + b"falsy" + body[1005:at] + b"falsy" + body[at + 5 :]
    raise AssertionError(case)


@pytest.mark.parametrize(
    "case",
    [
        "clean",
        "true across chunks",
        "false late",
        "split character",
        "crlf",
        *(f"true at offset {k}" for k in range(4)),
        "fals at a chunk end, e after it",
        "fals without e",
    ],
)
@pytest.mark.parametrize("gz", [False, True])
def test_the_numpy_scan_counts_and_finds_what_python_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, gz: bool
) -> None:
    # digest() scans large files with numpy, chunk by chunk (files.SCAN_IN_NUMPY_FROM): the
    # same line count and the same answer for the words true/false as Python's bytes methods,
    # and as a count over the whole content, across chunk boundaries and at every offset.
    import gzip
    import hashlib

    from relplan.ingest import files

    content = _case_bytes(case)
    src = tmp_path / ("f.jsonl.gz" if gz else "f.jsonl")
    src.write_bytes(gzip.compress(content, 1) if gz else content)
    got = {}
    for mode, start in (("python", 1 << 62), ("numpy", 0)):
        monkeypatch.setattr(files, "SCAN_IN_NUMPY_FROM", start)
        got[mode] = digest(src)
    lines = content.count(b"\n") + (0 if content.endswith(b"\n") else 1)
    words = b"true" in content or b"false" in content
    sha = hashlib.sha256(content.replace(b"\r\n", b"\n")).hexdigest()
    assert got["python"] == got["numpy"] == (sha, lines, words)
    assert words == (case not in ("clean", "split character", "crlf", "fals without e"))


def test_only_json_content_is_searched_for_the_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The words true/false matter only to the typed JSON Lines reader: the driver asks
    # digest() to look for them only when the content starts with `{`; not looked for, they are
    # taken to be there (the typed reader is never chosen on a guess).
    from relplan.ingest import driver

    asked: dict[str, bool] = {}

    def recording(path: Path, words: bool = True) -> object:
        asked[path.name] = words
        return digest(path, words)

    monkeypatch.setattr(driver, "digest", recording)
    csv = Path(__file__).parent / "data" / "ingest" / "adapters" / "proxy.csv"
    ingest(tmp_path / "w.duckdb", INCIDENT / "engine.jsonl", csv)
    assert asked == {"engine.jsonl": True, "proxy.csv": False}
    assert not digest(INCIDENT / "engine.jsonl").booleans
    assert digest(INCIDENT / "engine.jsonl", words=False).booleans
