"""Issue 25's second wave, the cases bench/hostile.py found still open, each through the CLI:
one `relplan: error:` line naming the file (and line), exit 2, nothing stored or written.

- a mapping file's epoch unit that does not fit the values (seconds declared, milliseconds
  given, and the other way round: were stored as year 57883 or as seconds from a run's
  start) and a strptime pattern without a date (year 1900);
- a whole number of more than 4,300 digits (Python's int conversion limit, whose ValueError
  names no place) in JSON Lines, a JSON document and Kubernetes events (was a traceback);
- names that are not UTF-8 for the settings files and outputs (`--map`, a scenario file,
  `simulate --out`, `record --out`: were tracebacks or a file written under that name);
- `record --out` naming a FIFO (opening it for writing waits for a reader forever).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from relplan.cli import app
from tests.helpers.fast_cli import CliRunner
from tests.helpers.fast_read import whole_state
from tests.helpers.ingest import INCIDENT
from tests.helpers.templates import from_template

T0 = 1_764_460_800.0  # 2025-11-30T00:00:00Z
PUB = Path(__file__).resolve().parent / "data" / "published"
MAP = (
    'format = "jsonl"\n[fields]\ncall_id = "call"\nstart = "sent"\nend = "ended"\n'
    'status = "http"\n[time]\nformat = "{fmt}"\n'
)


def _fails(args: list[str], said: str, db: Path | None = None) -> str:
    before = whole_state(db) if db else None
    got = CliRunner().invoke(app, args)
    assert got.exit_code == 2, got.output
    assert got.exception is None or isinstance(got.exception, SystemExit)
    lines = got.stderr.splitlines()
    assert len(lines) == 1, got.stderr
    assert lines[0].startswith("relplan: error: "), got.stderr
    assert said in lines[0], lines[0]
    if db is not None:
        assert whole_state(db) == before
    return lines[0]


def _ingest_engine(out: Path) -> None:
    got = CliRunner().invoke(app, ["ingest", str(INCIDENT / "engine.jsonl"), "--db", str(out)])
    assert got.exit_code == 0, got.output


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A workspace holding the incident's engine trace, ingested through the CLI once per run
    (tests/helpers/templates.py) and copied per test."""
    return from_template(tmp_path / "w.duckdb", "hostile-cases engine.jsonl", _ingest_engine)


@pytest.mark.parametrize(
    ("fmt", "sent", "said"),
    [
        ("epoch_s", T0 * 1000, "as milliseconds it is 2025-11-30; expected epoch_s"),
        ("epoch_ms", T0, "as seconds it is 2025-11-30; expected epoch_ms"),
        ("%H:%M:%S", "10:00:00", "'10:00:00' reads as 1900-01-01T10:00:00+00:00, not between"),
    ],
)
def test_a_mapping_time_in_another_unit_or_without_a_date_is_refused(
    tmp_path: Path, db: Path, fmt: str, sent: object, said: str
) -> None:
    m = tmp_path / "map.toml"
    m.write_text(MAP.format(fmt=fmt), encoding="utf-8")
    log = tmp_path / "g.log"
    ended = sent if isinstance(sent, str) else sent + 5  # type: ignore[operator]
    log.write_text(json.dumps({"call": "a", "sent": sent, "ended": ended, "http": 200}) + "\n")
    args = ["ingest", str(log), "--format", "mapped", "--map", str(m), "--db", str(db)]
    line = _fails(args, said, db)
    assert line.startswith(f"relplan: error: {log}:1: sent (start) ")


DIGITS = "9" * 5000


def _long_digits(case: str, tmp: Path) -> tuple[Path, int]:
    """A file with a 5,000-digit number, and the line it is on."""
    proxy = (INCIDENT / "proxy.jsonl").read_text(encoding="utf-8").splitlines()
    if case == "jsonl-line-4":  # a good log's 4th line: past what detection reads
        proxy[3] = proxy[3].replace('"status":429', '"status":' + DIGITS)
        out, line, text = tmp / "p.jsonl", 4, "\n".join(proxy) + "\n"
    elif case == "jsonl-line-1":  # the first line: detection reads it
        out, line = tmp / "p.jsonl", 1
        text = proxy[0].replace('"attempt":0', '"attempt":' + DIGITS) + "\n"
    elif case == "kube-events":
        text = (PUB / "kube_event_v1_started_knative_docs.json").read_text(encoding="utf-8")
        out, line = tmp / "ev.json", 1 + text[: text.index('"count": 1')].count("\n")
        text = text.replace('"count": 1', '"count": ' + DIGITS)
    else:  # a query_range document
        doc = {
            "status": "success",
            "data": {
                "resultType": "matrix",
                "result": [{"metric": {"__name__": "vllm:num_requests_waiting"}, "values": []}],
            },
        }
        out, line = tmp / "q.json", 1
        text = json.dumps(doc).replace('"values": []', f'"values": [[{DIGITS}, "1"]]')
    assert DIGITS in text
    out.write_text(text, encoding="utf-8")
    return out, line


@pytest.mark.parametrize("case", ["jsonl-line-4", "jsonl-line-1", "kube-events", "query-range"])
def test_a_number_of_5000_digits_is_one_line_naming_where(
    tmp_path: Path, db: Path, case: str
) -> None:
    path, line = _long_digits(case, tmp_path)
    said = "a number of 5000 digits, too large for any count or time"
    if case == "jsonl-line-4":  # read by DuckDB's reader, as a double: infinite
        said = "status is not finite; expected a whole number >= 0"
    got = _fails(["ingest", str(path), "--db", str(db)], said, db)
    assert got.startswith(f"relplan: error: {path}:{line}: "), got


def _latin1(tmp: Path, name: bytes) -> Path:
    return Path(os.fsdecode(os.fsencode(tmp) + b"/" + name))


@pytest.mark.slow
def test_settings_and_output_names_that_are_not_utf8_are_refused(tmp_path: Path, db: Path) -> None:
    said = "the name is not UTF-8 (bytes shown as \\xNN)"
    m = _latin1(tmp_path, b"m\xe9.toml")
    m.write_text(MAP.format(fmt="epoch_s"), encoding="utf-8")
    log = tmp_path / "g.log"
    log.write_text(json.dumps({"call": "a", "sent": T0, "ended": T0 + 1, "http": 200}) + "\n")
    args = ["ingest", str(log), "--format", "mapped", "--map", str(m), "--db", str(db)]
    assert "m\\xe9.toml" in _fails(args, said, db)
    scen = _latin1(tmp_path, b"s\xe9.toml")
    shutil.copy(Path(__file__).parents[1] / "relplan/sim/scenarios/pulse-retry-cancel.toml", scen)
    out = tmp_path / "o"
    _fails(["simulate", "run", str(scen), "--out", str(out)], said)
    assert not out.exists()
    bad_out = _latin1(tmp_path, b"o\xe9")
    _fails(["simulate", "run", "pulse-retry-cancel", "--out", str(bad_out)], said)
    assert not bad_out.exists()
    rec = _latin1(tmp_path, b"m\xe9.txt")
    _fails(["record", "--url", "http://127.0.0.1:9/metrics", "--out", str(rec)], said)
    assert not rec.exists()


def test_record_refuses_a_fifo_as_its_output(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    _fails(
        ["record", "--url", "http://127.0.0.1:9/metrics", "--out", str(fifo)],
        "not a regular file (a FIFO or a device)",
    )


def test_record_names_its_file_when_the_disk_fills(tmp_path: Path) -> None:
    """A write that fails (a full disk, a file-size limit: bench/hostile.py printed only
    'File too large') names the file and what it keeps; no half scrape is left."""
    import errno
    import io

    from relplan import record as record_mod
    from relplan.errors import InputError

    class Full(io.BytesIO):
        full = False

        def write(self, data: object) -> int:
            if not self.full:
                return super().write(bytes(data))  # type: ignore[call-overload]
            super().write(bytes(data)[:10])  # type: ignore[call-overload]
            raise OSError(errno.ENOSPC, "No space left on device")

    fh = Full()
    fh.write(b"# SCRAPE 1\nup 1\n")
    fh.full = True
    with pytest.raises(
        InputError,
        match=r"m\.txt: cannot write the scrape: No space left on device;"
        r" the file keeps the 1 complete scrape\(s\) before it",
    ):
        record_mod._append(fh, b"# SCRAPE 2\nup 1\n", tmp_path / "m.txt", 1)
    assert fh.getvalue() == b"# SCRAPE 1\nup 1\n"


@pytest.mark.slow
def test_simulate_on_a_full_disk_is_one_line_and_writes_nothing(tmp_path: Path) -> None:
    """polars' write error ("File too large (os error 27)") was a ComputeError traceback."""
    import resource
    import signal
    import subprocess
    import sys

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))

    out = tmp_path / "o"
    args = ["--out", str(out), "--set", "workload.phases=[{name='base',seconds=60,rate_x=0.6}]"]
    got = subprocess.run(
        [sys.executable, "-m", "relplan", "simulate", "run", "pulse-retry-cancel", *args],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        check=False,
    )
    assert got.returncode == 2, got.stderr
    assert got.stderr == (
        f"relplan: error: {out}: cannot write the simulation's files: File too large;"
        " nothing written\n"
    )
    assert not out.exists()


@pytest.mark.parametrize("command", ["ingest", "analyze"])
def test_a_db_that_is_a_fifo_or_a_device_is_refused_before_it_is_opened(
    tmp_path: Path, command: str
) -> None:
    """`--db` naming a FIFO blocked in open() forever (bench/hostile.py: killed at 30 s)."""
    fifo = tmp_path / "w.duckdb"
    os.mkfifo(fifo)
    for db in (fifo, Path("/dev/zero")):
        args = [command, "--db", str(db)]
        if command == "ingest":
            args.append(str(INCIDENT / "proxy.jsonl"))
        _fails(args, f"{db}: not a regular file (a FIFO, a device or a socket)")


def test_a_dated_time_out_of_range_suggests_no_unit(tmp_path: Path, db: Path) -> None:
    """A date has no unit to mistake: 9999-12-31 was said to be '1978-01-11 as milliseconds'."""
    ev = json.loads((PUB / "kube_event_v1_started_knative_docs.json").read_text(encoding="utf-8"))
    ev["firstTimestamp"] = ev["lastTimestamp"] = "9999-12-31T23:59:59Z"
    path = tmp_path / "ev.json"
    path.write_text(json.dumps(ev, indent=2), encoding="utf-8")
    got = _fails(["ingest", str(path), "--db", str(db)], "(9999-12-31 is not between 1973-03-03")
    assert "milliseconds" not in got
    prom = PUB / "vllm_metrics_v1_prodstack318.prom"
    got = _fails(
        ["ingest", str(prom), "--at", "9999-12-31T00:00:00Z", "--db", str(db)],
        "--at: '9999-12-31T00:00:00Z': 9999-12-31 is not between 1973-03-03 and 2100-01-01",
    )
    # a number keeps its unit hint: epoch milliseconds given for seconds
    _fails(
        ["ingest", str(prom), "--at", "1764460800000", "--db", str(db)],
        "as milliseconds it is 2025-11-30: give seconds",
    )


def test_a_fifo_inside_an_input_folder_is_listed_as_skipped_never_opened(tmp_path: Path) -> None:
    """It was left out without a word; opened, it would block the ingest forever."""
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(INCIDENT / "proxy.jsonl", folder / "proxy.jsonl")
    os.mkfifo(folder / "x.jsonl")
    got = CliRunner().invoke(app, ["ingest", str(folder), "--db", str(tmp_path / "w.duckdb")])
    assert got.exit_code == 0, got.output
    assert (
        f"skipped {folder / 'x.jsonl'}: not a regular file (a FIFO, a device, a socket or a"
        " broken link): not opened"
    ) in got.output


@pytest.mark.parametrize("stamp", ["2025-11-30T00:00:00+99:99", "2200-01-01T00:00:00Z"])
def test_a_file_name_time_that_is_no_real_time_is_named_in_the_error(
    tmp_path: Path, db: Path, stamp: str
) -> None:
    """The name's time was ignored without a word; the error only asked for --at."""
    path = tmp_path / f"metrics-{stamp}.prom"
    shutil.copy(PUB / "vllm_metrics_v1_prodstack318.prom", path)
    _fails(
        ["ingest", str(path), "--db", str(db)],
        f"the time in the file name ({stamp}) is not a real time",
        db,
    )
