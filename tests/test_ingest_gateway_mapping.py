"""Mapping files (TOML) for any other gateway: the worked examples of
docs/formats.md run as written, errors name the mapping, and a lossless mapping reads
canonical attempts back unchanged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relplan.errors import InputError
from tests.helpers.fast_read import rows
from tests.helpers.ingest import ingest, write_lines

DOC = Path(__file__).resolve().parent.parent / "docs" / "formats.md"
_BLOCK = re.compile(r"```(\w+) example=(\w+)\n(.*?)```", re.DOTALL)
_EXPECT = re.compile(r"<!-- expect (\w+): (.*?) -->")


def _examples() -> dict[str, dict[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    out: dict[str, dict[str, str]] = {}
    for lang, name, body in _BLOCK.findall(text):
        out.setdefault(name, {})["toml" if lang == "toml" else "log"] = body
    for name, expect in _EXPECT.findall(text):
        out[name]["expect"] = expect
    return out


EXAMPLES = _examples()


def test_the_docs_have_worked_examples() -> None:
    assert {"traefik", "haproxy", "canonical"} <= set(EXAMPLES)
    assert all({"toml", "log", "expect"} <= set(e) for e in EXAMPLES.values())


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_docs_example_ingests_every_record_as_documented(tmp_path: Path, name: str) -> None:
    ex = EXAMPLES[name]
    mapping = tmp_path / f"{name}.toml"
    mapping.write_text(ex["toml"])
    log = tmp_path / f"{name}.log"
    log.write_text(ex["log"])
    db = tmp_path / "w.duckdb"
    rep = ingest(db, log, map_file=mapping)
    assert (rep.sources[0].format, rep.sources[0].rejected) == ("mapped", 0)
    got = rows(db, "select call_id, attempt, outcome from attempts order by call_id, attempt")
    assert ", ".join(f"{c}/{a} {o}" for c, a, o in got) == ex["expect"]
    assert rep.sources[0].rows == len(ex["log"].strip().splitlines())


def test_haproxy_example_reads_times_as_utc_and_minus_one_as_no_status(tmp_path: Path) -> None:
    ex = EXAMPLES["haproxy"]
    (tmp_path / "m.toml").write_text(ex["toml"])
    (tmp_path / "h.log").write_text(ex["log"])
    db = tmp_path / "w.duckdb"
    ingest(db, tmp_path / "h.log", map_file=tmp_path / "m.toml")
    assert rows(db, "select t_sent, t_end, status, replica from attempts order by t_sent") == [
        (1764460800.25, pytest.approx(1764460830.251), None, "be_vllm/vllm-1"),
        (1764460831.0, 1764460833.5, 200, "be_vllm/vllm-2"),
    ]


def test_a_bad_mapping_file_names_the_key(tmp_path: Path) -> None:
    m = tmp_path / "m.toml"
    m.write_text('format = "jsonl"\n[fields]\ncall_id = "id"\nstart = "t"\n')
    log = write_lines(tmp_path / "a.jsonl", ['{"id": "x", "t": 1}'])
    with pytest.raises(
        InputError,
        match=r"m\.toml: mapping file: fields: Value error, give exactly one of end and duration",
    ):
        ingest(tmp_path / "w.duckdb", log, map_file=m)


@pytest.mark.parametrize(
    ("head", "said"),
    [
        ("format = \"regex\"\npattern = '(a)\\1'\n", "RE2 accepts (invalid escape sequence"),
        ("format = \"regex\"\npattern = '(?=a)x'\n", "invalid perl operator: (?="),
    ],
)
def test_a_pattern_that_could_backtrack_without_bound_is_refused(
    tmp_path: Path, head: str, said: str
) -> None:
    m = tmp_path / "m.toml"
    m.write_text(head + '[fields]\ncall_id = "id"\nstart = "t"\nend = "e"\n')
    log = write_lines(tmp_path / "a.log", ["x"])
    with pytest.raises(InputError, match=re.escape(said)):
        ingest(tmp_path / "w.duckdb", log, map_file=m)


def test_a_catastrophic_pattern_matches_in_linear_time(tmp_path: Path) -> None:
    """`(x+x+)+y` against 5,000 x's: Python's re would backtrack for longer than the age of
    the universe; RE2 answers at once, and the line is a reject like any other non-match."""
    m = tmp_path / "m.toml"
    m.write_text(
        "format = \"regex\"\npattern = '^(?P<id>(x+x+)+y) (?P<t>\\S+) (?P<e>\\S+) (?P<s>\\d+)$'\n"
        '[fields]\ncall_id = "id"\nstart = "t"\nend = "e"\nstatus = "s"\n[time]\nformat = "epoch_s"\n'
    )
    log = write_lines(
        tmp_path / "a.log",
        ["x" * 5000 + " 1764460800 1764460801 200", "xxy 1764460800 1764460801 200"],
    )
    rep = ingest(tmp_path / "w.duckdb", log, map_file=m, on_error="skip")
    assert (rep.sources[0].rows, rep.sources[0].rejected) == (1, 1)


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ('[time]\nformat = "%Y-%"\n', "is not a strptime pattern"),
        ("a = " + "[" * 5000 + "]" * 5000 + "\n", "TOML nested too deeply"),
    ],
)
def test_a_bad_time_format_or_deep_toml_is_one_clean_error(
    tmp_path: Path, toml: str, said: str
) -> None:
    m = tmp_path / "m.toml"
    m.write_text('format = "jsonl"\n' + toml + '[fields]\ncall_id = "id"\nstart = "t"\nend = "e"\n')
    log = write_lines(tmp_path / "a.jsonl", ['{"id": "x", "t": 1, "e": 2}'])
    with pytest.raises(InputError, match=re.escape(said)):
        ingest(tmp_path / "w.duckdb", log, map_file=m)


def test_a_record_the_mapping_cannot_read_names_its_line(tmp_path: Path) -> None:
    m = tmp_path / "m.toml"
    m.write_text(
        '[fields]\ncall_id = "id"\nstart = "t"\nduration = "d"\nstatus = "s"\n[time]\nformat = "epoch_ms"\n'
    )
    log = write_lines(
        tmp_path / "a.jsonl",
        [
            '{"id": "x", "t": 1764460800000, "d": 5, "s": 200}',
            '{"id": "y", "t": "soon", "d": 5, "s": 200}',
        ],
    )
    with pytest.raises(InputError, match=r"a\.jsonl:2: t \(start\) 'soon' is not a epoch_ms time"):
        ingest(tmp_path / "w.duckdb", log, map_file=m)


CANONICAL = EXAMPLES["canonical"]["toml"]


@pytest.mark.slow
@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.dictionaries(
        st.text("abc", min_size=1, max_size=3),
        st.lists(
            st.tuples(
                st.floats(1.7e9, 1.8e9),
                st.floats(0, 600),
                st.sampled_from(["delivered", "client_gone", "shed", "error"]),
                st.one_of(st.none(), st.integers(100, 599)),
                st.one_of(st.none(), st.sampled_from(["r1", "r2"])),
                st.one_of(st.none(), st.integers(0, 10**6)),
            ),
            min_size=1,
            max_size=3,
        ),
        min_size=1,
        max_size=4,
    )
)
def test_canonical_attempts_written_through_a_mapping_read_back_unchanged(
    tmp_path_factory: pytest.TempPathFactory,
    calls: dict[str, list[tuple[float, float, str, int | None, str | None, int | None]]],
) -> None:
    tmp = tmp_path_factory.mktemp("rt")
    expect, lines = [], []
    for call, tries in calls.items():
        for i, (sent, dur, outcome, status, host, prompt) in enumerate(tries):
            expect.append((call, i, sent, sent + dur, outcome, status, host, prompt))
            lines.append(
                json.dumps(
                    {
                        "call": call,
                        "try": i,
                        "sent": sent,
                        "ended": sent + dur,
                        "result": outcome,
                        "http": status,
                        "host": host,
                        "usage": {"prompt": prompt},
                    }
                )
            )
    (tmp / "m.toml").write_text(CANONICAL)
    log = write_lines(tmp / "a.jsonl", lines)
    db = tmp / "w.duckdb"
    ingest(db, log, map_file=tmp / "m.toml")
    got = rows(
        db,
        "select call_id, attempt, t_sent, t_end, outcome, status, replica,"
        " prompt_tokens from attempts order by call_id, attempt",
    )
    assert got == sorted(expect)
