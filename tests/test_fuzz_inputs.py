"""Broken variants of every input format through the real CLI: exit 0 or 2, never a
traceback, and in skip mode every input record either stored or rejected with its line:
for the line-based formats (canonical JSON Lines and CSV, Envoy JSON and text, nginx) lines
in = lines with a stored row or a reject; for the vLLM log and a /metrics scrape, the ingest's
line tally note accounts for every physical line and its rejects are the ones stored.

Mutations of valid files (the log and scrape seeds are published real lines): truncation,
byte flips, inserted lines (bad numbers, times, booleans, surrogates, deep nesting, short and
long CSV rows, repeated labels), and re-encodings (BOM, CRLF, gzip). The budget is fixed
(derandomize=True, 2 examples per format, about 25 s of CPU in all;
RELPLAN_FUZZ_EXAMPLES=N runs more). Cases that once failed live in
tests/data/fuzz_regressions/ and are replayed in the fast loop (test_fuzz_regressions_*).
Set RELPLAN_FUZZ_STATS=FILE to have the counts (inputs, clean errors, rejects, tracebacks,
silent drops) written there as JSON.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relplan.cli import app
from tests.helpers.fast_cli import CliRunner
from tests.helpers.fast_read import attached

T0 = 1764460800
PUBLISHED = Path(__file__).resolve().parent / "data" / "published"
SEEDS: dict[str, tuple[str, str]] = {
    "proxy_jsonl": (
        "proxy.jsonl",
        "".join(
            f'{{"call_id":"c{i}","attempt":0,"t_sent":{T0 + i},"t_end":{T0 + i + 1},'
            f'"outcome":"delivered","prompt_tokens":{10 + i},"execution_id":"e{i}"}}\n'
            for i in range(6)
        ),
    ),
    "engine_jsonl": (
        "engine.jsonl",
        "".join(
            f'{{"type":"step","step":{i},"t_issue":{T0 + i},"t_done":{T0 + i + 0.5},'
            f'"execution_id":"e{i}","prompt_computed":{i * 3},"decode_tokens":1}}\n'
            for i in range(6)
        ),
    ),
    "proxy_csv": (
        "proxy.csv",
        "call_id,attempt,t_sent,t_end,outcome,prompt_tokens\n"
        + "".join(f"c{i},0,{T0 + i},{T0 + i + 1},delivered,{i}\n" for i in range(6)),
    ),
    "engine_csv": (
        "engine.csv",
        "type,t,execution_id,event,prompt_tokens\n"
        + "".join(f"event,{T0 + i},e{i},arrived,{i + 1}\n" for i in range(6)),
    ),
    "openmetrics": (
        "metrics.om",
        "# TYPE vllm:num_requests_running gauge\n"
        + "".join(f'vllm:num_requests_running{{replica="r0"}} {i} {T0 + i}\n' for i in range(6))
        + "# EOF\n",
    ),
    "query_range": (
        "range.json",
        json.dumps(
            {
                "status": "success",
                "data": {
                    "resultType": "matrix",
                    "result": [
                        {
                            "metric": {"__name__": "vllm:num_requests_running"},
                            "values": [[T0 + i, str(i)] for i in range(6)],
                        }
                    ],
                },
            }
        ),
    ),
    "run_json": (
        "run.json",
        json.dumps({"name": "run", "t0": T0, "phases": [{"name": "a", "start": 0, "end": 10}]}),
    ),
    "envoy": (
        "envoy.jsonl",
        "".join(
            f'{{"start_time":"2025-11-30T00:00:0{i}.000Z","duration":5,"response_code":200,'
            f'"x-request-id":"r{i}"}}\n'
            for i in range(6)
        ),
    ),
    # Real lines (tests/data/published/SOURCES.md): vLLM V1 server log (issue 16361), Envoy's
    # default access-log format (Envoy docs), ingress-nginx upstreaminfo (issue 4312), a vLLM
    # V1 /metrics scrape (production-stack issue 318; the scrape time in the file name).
    "vllm_log": ("vllm.log", (PUBLISHED / "vllm_v1_server_log_issue16361.txt").read_text()),
    "envoy_text": (
        "access.log",
        (PUBLISHED / "envoy_default_text_doc_example.log").read_text() * 3,
    ),
    "nginx": (
        "access.log",
        (PUBLISHED / "nginx_ingress_upstreaminfo_issue4312_499_retries.log").read_text() * 3,
    ),
    "exposition": (
        "metrics-1764460800.prom",
        (PUBLISHED / "vllm_metrics_v1_prodstack318.prom").read_text(),
    ),
}
# The formats whose records are one non-blank line each (a CSV's first line is its header):
# lines in = lines with a stored row or a reject (a line may give several rows, an nginx
# line's tries, stored or rejected one by one).
LINE_RECORDS = {
    "proxy_jsonl": 0,
    "engine_jsonl": 0,
    "proxy_csv": 1,
    "engine_csv": 1,
    "envoy": 0,
    "envoy_text": 0,
    "nginx": 0,
}
# The formats that account for every physical line in a note ("N lines: S stored, ...,
# R rejected"): N = the file's lines, the parts sum to N, R = the rejects stored.
LINE_TALLY = {"vllm_log", "exposition"}
EXTRA_ARGS = {"vllm_log": ["--year", "2025"]}

BAD_VALUES = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "-1",
    "1e12",
    str(2**63),
    "true",
    "null",
    '"\\ud800"',
    '"x"',
    str(T0 * 1000),
    str(T0 * 1_000_000),
    "[" * 3000 + "]" * 3000,
    "{}",
]
BAD_LINES = [
    "",
    "   ",
    "{",
    "[]",
    '{"call_id":"\\ud800","attempt":0,"t_sent":1764460800,"t_end":1764460801,'
    '"outcome":"delivered"}',
    '{"x":' + "[" * 5000 + "]" * 5000 + "}",
    "a,b",
    "c9,0,1764460800",
    "c9,0,1764460800,1764460801,delivered,1,2,3",
    "\x00",
    "# EOF",
    'x{a="1",a="2"} 1 1764460800',
]


@dataclass
class Tally:
    inputs: int = 0
    clean_errors: int = 0
    ingested: int = 0
    rejects: int = 0
    tracebacks: int = 0
    silent_drops: int = 0


TALLY = Tally()


def _write_stats() -> None:
    out = os.environ.get("RELPLAN_FUZZ_STATS")
    if out:
        Path(out).write_text(json.dumps(asdict(TALLY)))


@st.composite
def mutated(draw: st.DrawFn, fmt: str) -> tuple[bytes, str]:
    name, text = SEEDS[fmt]
    lines = text.splitlines()
    for _ in range(draw(st.integers(0, 3))):
        op = draw(st.sampled_from(["value", "insert", "drop", "swap_type"]))
        if op == "value" and lines:
            i = draw(st.integers(0, len(lines) - 1))
            nums = list(re.finditer(r"(?<![\w.\"])-?\d+(\.\d+)?(?![\w\"])", lines[i]))
            if nums:
                m = draw(st.sampled_from(nums))
                bad = draw(st.sampled_from(BAD_VALUES))
                lines[i] = lines[i][: m.start()] + bad + lines[i][m.end() :]
        elif op == "insert":
            i = draw(st.integers(0, len(lines)))
            lines.insert(i, draw(st.sampled_from(BAD_LINES)))
        elif op == "drop" and len(lines) > 1:
            del lines[draw(st.integers(0, len(lines) - 1))]
        elif op == "swap_type" and lines:
            i = draw(st.integers(0, len(lines) - 1))
            lines[i] = lines[i].replace(":0,", ":true,", 1).replace(",0,", ",yes,", 1)
    eol = draw(st.sampled_from(["\n", "\r\n"]))
    data = (eol.join(lines) + eol).encode("utf-8", errors="surrogatepass")
    if draw(st.booleans()) and draw(st.booleans()):  # a quarter: bytes damaged
        if draw(st.booleans()):
            data = data[: draw(st.integers(0, len(data)))]
        else:
            i = draw(st.integers(0, max(len(data) - 1, 0)))
            if data:
                data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1 :]
    if draw(st.booleans()) and draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    if draw(st.booleans()) and draw(st.booleans()):
        return gzip.compress(data, mtime=0), name + ".gz"
    return data, name


_DATA_TABLES = ("attempts", "events", "steps", "engine_stats", "metric_samples")


def _stored(db: Path) -> tuple[int, int, int, list[str]]:
    """(rows stored over all sources, input lines with a stored row or a reject, rejects,
    notes)."""
    if not db.exists():
        return 0, 0, 0, []
    with attached(db) as con:
        row = con.execute(
            "select coalesce(sum(rows), 0), coalesce(sum(rejected), 0) from sources"
        ).fetchone()
        rejects = con.execute("select count(*) from rejects").fetchone()
        # Lines accounted for: with a stored row or a reject (a line's attempts may be both).
        union = " union ".join(
            [f"select source_id, source_row from {t}" for t in _DATA_TABLES]
            + ["select source_id, line from rejects"]
        )
        lines = con.execute(f"select count(*) from ({union})").fetchone()
        notes = [str(n) for r in con.execute("select notes from sources").fetchall() for n in r[0]]
    assert row is not None
    assert rejects is not None
    assert lines is not None
    assert int(row[1]) == int(rejects[0])
    return int(row[0]), int(lines[0]), int(rejects[0]), notes


_TALLY_NOTE = re.compile(r"^(\d+) lines: (.*)$")


def _tally_drop(data: bytes, name: str, notes: list[str], rejected: int) -> str | None:
    """For LINE_TALLY formats: why the note does not account for every line, None if it does."""
    raw = gzip.decompress(data) if name.endswith(".gz") else data
    physical = raw.count(b"\n") + (0 if raw.endswith(b"\n") or not raw else 1)
    for note in notes:
        m = _TALLY_NOTE.match(note)
        if m is None:
            continue
        total = int(m.group(1))
        tally = re.sub(r"\([^)]*\)", "", m.group(2).split(";")[0])  # "N what, M what, ..."
        parts = [int(x) for x in re.findall(r"(?:^|, )(\d+) ", tally)]
        said_rejected = int(re.findall(r"(\d+) rejected", tally)[-1])
        if total != physical or sum(parts) != total or said_rejected != rejected:
            return f"{physical} lines in, note: {note!r}, {rejected} rejects stored"
        return None
    return f"no line tally note in {notes!r}"


def _records_in(data: bytes, name: str, header_lines: int) -> int | None:
    """Non-blank lines that are records (None when the bytes are not UTF-8 text)."""
    raw = gzip.decompress(data) if name.endswith(".gz") else data
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
    lines = [ln for ln in text.split("\n") if ln.strip()]  # as the readers split lines
    return max(len(lines) - header_lines, 0)


def check_one(data: bytes, name: str, fmt: str, on_error: str) -> None:
    """Ingest `data` as a file named `name` through the CLI and check the promises."""
    TALLY.inputs += 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        db = Path(tmp) / "ws.duckdb"
        args = ["ingest", str(path), "--db", str(db), "--on-error", on_error]
        res = CliRunner().invoke(app, [*args, *EXTRA_ARGS.get(fmt, [])])
        output = res.output + (res.stderr if res.stderr_bytes is not None else "")
        crashed = res.exception is not None and not isinstance(res.exception, SystemExit)
        if crashed or "Traceback" in output:
            TALLY.tracebacks += 1
            _write_stats()
            raise AssertionError(f"traceback for {name} ({on_error}): {res.exception!r}\n{data!r}")
        assert res.exit_code in (0, 2), (res.exit_code, output, data)
        stored, lines, rejected, notes = _stored(db)
        if res.exit_code == 2:
            TALLY.clean_errors += 1
            assert "relplan: error:" in output
            assert stored == 0
            assert rejected == 0
            return
        TALLY.ingested += 1
        TALLY.rejects += rejected
        if fmt in LINE_RECORDS and on_error == "skip":
            expected = _records_in(data, name, LINE_RECORDS[fmt])
            if expected is not None and lines != expected:
                TALLY.silent_drops += 1
                _write_stats()
                raise AssertionError(
                    f"{name}: {expected} records in, {lines} stored or rejected\n{data!r}"
                )
        if fmt in LINE_TALLY and on_error == "skip":
            why = _tally_drop(data, name, notes, rejected)
            if why is not None:
                TALLY.silent_drops += 1
                _write_stats()
                raise AssertionError(f"{name}: {why}\n{data!r}")
    _write_stats()


@pytest.mark.slow
@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_broken_variants_of_every_format_exit_cleanly_and_lose_nothing(fmt: str) -> None:
    @settings(
        max_examples=int(os.environ.get("RELPLAN_FUZZ_EXAMPLES", "2")),
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(case=mutated(fmt), on_error=st.sampled_from(["fail", "skip"]))
    def run(case: tuple[bytes, str], on_error: str) -> None:
        check_one(case[0], case[1], fmt, on_error)

    run()


REGRESSIONS = Path(__file__).resolve().parent / "data" / "fuzz_regressions"


def _regression_cases() -> list[Path]:
    return sorted(p for p in REGRESSIONS.iterdir() if p.is_file() and p.suffix != ".md")


def _case_format(path: Path) -> str:
    """A corpus file is named `<format>--<what>.<ext>` (the format a key of SEEDS)."""
    return path.name.split("--", 1)[0]


@pytest.mark.parametrize("path", _regression_cases(), ids=lambda p: p.name)
@pytest.mark.parametrize("on_error", ["fail", "skip"])
def test_fuzz_regressions_replay_cleanly(path: Path, on_error: str) -> None:
    data = path.read_bytes()
    # The first line of a corpus file may be a `#~ ` comment on what once failed; it is not
    # part of the input.
    if data.startswith(b"#~ "):
        data = data.split(b"\n", 1)[1] if b"\n" in data else b""
    name = path.name.split("--", 1)[1]
    name = "input" + name[name.index(".") :] if "." in name else name
    check_one(data, name, _case_format(path), on_error)


def test_the_line_tally_check_catches_a_line_the_note_does_not_account_for() -> None:
    data = b"a\nb\nc\n"
    good = "3 lines: 2 stored (2 request), 0 merged, 1 ignored (1 blank), 0 rejected; 2 events"
    assert _tally_drop(data, "x.log", [good], 0) is None
    short = "3 lines: 1 stored (1 request), 0 merged, 1 ignored (1 blank), 0 rejected"
    assert _tally_drop(data, "x.log", [short], 0) is not None
    assert _tally_drop(data, "x.log", [good], 1) is not None  # a reject the note misses
    assert _tally_drop(data + b"d\n", "x.log", [good], 0) is not None  # a line never counted
