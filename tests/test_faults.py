"""Faults are one line (issue 11): Ctrl-C, a full disk, a read-only folder, a hostile or
broken Prometheus server. Each ends with one line on stderr and exit 130 or 2, and the
workspace as it was."""

from __future__ import annotations

import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from relplan.errors import InputError
from relplan.ingest import IngestOptions, promlive, pull_prometheus
from tests.helpers.fast_read import state
from tests.helpers.http import serve_in_background
from tests.helpers.ingest import INCIDENT, ingest

T0 = 1_764_460_800.0


# One proxy record a line, the bytes json.dumps writes for the record's dict (its floats by
# repr, as json.dumps does): formatted, not dumped, a 200,000-line file costs 0.3 CPU s, not 1.0.
_BIG_LINE = (
    '{"call_id": "big%d", "attempt": 0, "t_sent": %r, "t_end": %r, "outcome": "delivered", '
    '"status": 200, "model": "m", "replica": "r%d", "prompt_tokens": 100, "max_tokens": 10}\n'
)


def _big_proxy(path: Path, n: int, *, bad_last: bool = False) -> Path:
    with path.open("w", encoding="utf-8") as f:
        f.writelines(_BIG_LINE % (i, t, t + 1, i % 4) for i in range(n) for t in (T0 + i * 0.01,))
        if bad_last:
            f.write('{"call_id": "bad", "attempt": "oops"}\n')
    return path


def _relplan(*args: str, **kw: Any) -> subprocess.Popen[str]:
    def child() -> None:
        # A shell's background job may have SIGINT ignored; the CLI must see it as a user would.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        pre = kw.get("pre")
        if pre is not None:
            pre()

    return subprocess.Popen(
        [sys.executable, "-m", "relplan", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=child,  # only signal and rlimit set-up
    )


@pytest.mark.slow
def test_ctrl_c_during_ingest_is_one_line_exit_130_and_nothing_stored(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, INCIDENT / "proxy.jsonl")
    before = state(db)
    big = _big_proxy(tmp_path / "big.jsonl", 50_000)
    # signalled once the file is staged inside the ingest's transaction, before the commit
    proc = _relplan_inside_call(
        "relplan.ingest.driver:stage_file", "ingest", "--db", str(db), str(big)
    )
    err = _interrupt_inside(proc)
    assert proc.returncode == 130, err
    assert err == "relplan: interrupted; nothing stored\n"
    assert state(db) == before


@pytest.mark.slow
def test_ctrl_c_during_analyze_is_one_line_and_exit_130(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, _big_proxy(tmp_path / "big.jsonl", 20_000))
    proc = _relplan_inside_call("relplan.analyses:analyze", "analyze", "--db", str(db))
    err = _interrupt_inside(proc)
    assert proc.returncode == 130, err
    assert err == "relplan: interrupted; nothing stored\n"


def _file_size_limit(limit: int) -> Any:
    def pre() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit: EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return pre


@pytest.mark.slow
def test_a_full_disk_during_ingest_is_one_line_exit_2_and_data_intact(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, INCIDENT / "proxy.jsonl")
    before = state(db)
    big = _big_proxy(tmp_path / "big.jsonl", 200_000)
    limit = db.stat().st_size + 1_000_000
    proc = _relplan("ingest", "--db", str(db), str(big), pre=_file_size_limit(limit))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert err.startswith("relplan: error: the disk is full")
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert state(db) == before
    # and the next ingest, with room again, works
    ingest(db, INCIDENT / "engine.jsonl")
    assert state(db)["attempts"] == before["attempts"]


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    res = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mnt)],
        capture_output=True,
        check=False,
    )
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.decode(errors='replace').strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.mark.slow
def test_a_full_tmpfs_during_ingest_is_one_line_exit_2_and_data_intact(
    small_tmpfs: Path, tmp_path: Path
) -> None:
    db = small_tmpfs / "w.duckdb"
    ingest(db, INCIDENT / "proxy.jsonl")
    before = state(db)
    big = _big_proxy(tmp_path / "big.jsonl", 200_000)
    proc = _relplan("ingest", "--db", str(db), str(big))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert err.startswith("relplan: error: ")
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert state(db) == before


@pytest.mark.slow
def test_a_read_only_folder_is_one_line_exit_2_and_still_readable(small_tmpfs: Path) -> None:
    db = small_tmpfs / "w.duckdb"
    ingest(db, INCIDENT / "proxy.jsonl")
    before = state(db)
    res = subprocess.run(
        ["mount", "-o", "remount,ro", str(small_tmpfs)], capture_output=True, check=False
    )
    if res.returncode != 0:
        pytest.skip("cannot remount the tmpfs read-only")
    proc = _relplan("ingest", "--db", str(db), str(INCIDENT / "engine.jsonl"))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2, err
    assert err.startswith(f"relplan: error: {db}: cannot open workspace")
    assert "Read-only file system" in err
    assert err.count("\n") == 1
    assert state(db) == before
    proc = _relplan("analyze", "--db", str(db))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err


@pytest.mark.slow
def test_a_failed_big_ingest_does_not_grow_the_workspace(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, INCIDENT / "proxy.jsonl")
    size = db.stat().st_size
    before = state(db)
    bad = _big_proxy(tmp_path / "bad.jsonl", 200_000, bad_last=True)
    # under a small memory limit the staging tables go to the workspace file itself
    env = {**os.environ, "RELPLAN_MEMORY_LIMIT": "100MB"}
    res = subprocess.run(
        [sys.executable, "-m", "relplan", "ingest", "--db", str(db), str(bad)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert res.returncode == 2, res.stderr
    assert "bad.jsonl:200001: " in res.stderr, res.stderr
    assert state(db) == before
    # the file's size after, with what is beside it (WAL, spill folder), said on a failure
    beside = sorted((p.name, p.stat().st_size) for p in tmp_path.iterdir())
    assert db.stat().st_size == size, (size, beside, res.stderr)


# --- a hostile or broken Prometheus server -------------------------------------------------

NAMES_OK = {"status": "success", "data": ["vllm:num_requests_waiting"]}


class _Server:
    """A loopback HTTP server whose answer to each path is set by the test."""

    def __init__(self) -> None:
        self.queries: list[str] = []
        self.handler: Any = None
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                qs = urllib.parse.parse_qs(url.query)
                outer.queries.extend(qs.get("query", []))
                outer.handler(self, url.path)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        serve_in_background(self.httpd)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[_Server]:
    s = _Server()
    yield s
    s.close()


def _send_json(h: BaseHTTPRequestHandler, doc: Any) -> None:
    body = json.dumps(doc).encode()
    h.send_response(200)
    h.send_header("Content-Type", "application/json")
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def _pull(server: _Server, tmp_path: Path, timeout: float = 10.0, match: str = "vllm:.*") -> Any:
    return pull_prometheus(
        tmp_path / "w.duckdb",
        server.url,
        match,
        T0,
        T0 + 60,
        15.0,
        IngestOptions(timeout=timeout),
    )


@pytest.mark.slow
def test_a_trickling_server_cannot_hold_a_pull_past_its_deadline(
    server: _Server, tmp_path: Path
) -> None:
    def trickle(h: BaseHTTPRequestHandler, path: str) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.end_headers()
        try:
            for ch in json.dumps(NAMES_OK) * 100:
                h.wfile.write(ch.encode())
                h.wfile.flush()
                time.sleep(1.0)
        except OSError:
            pass

    server.handler = trickle
    started = time.monotonic()
    with pytest.raises(InputError, match=r"no complete answer within [\d.]+ s \(--timeout\)") as e:
        _pull(server, tmp_path, timeout=2.5)
    assert time.monotonic() - started < 5.0
    # the message names the --timeout given, not what was left of it when the GET started
    # (it said 2.49 s on a loaded machine, where the set-up before the first GET took 10 ms)
    assert "no complete answer within 2.5 s (--timeout); nothing stored" in str(e.value)
    assert not (tmp_path / "w.duckdb").exists()  # a failed pull into a new path leaves none


def test_a_response_too_large_is_refused_with_a_message(
    server: _Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(promlive, "MAX_RESPONSE_BYTES", 1000)

    def big(h: BaseHTTPRequestHandler, path: str) -> None:
        if path.endswith("/values"):
            _send_json(h, NAMES_OK)
            return
        values = [[T0 + i, "1"] for i in range(200)]
        doc = {"metric": {"__name__": "vllm:num_requests_waiting"}, "values": values}
        _send_json(h, {"status": "success", "data": {"resultType": "matrix", "result": [doc]}})

    server.handler = big
    with pytest.raises(InputError, match=r"larger than [\d.]+ MiB; pull a narrower --match"):
        _pull(server, tmp_path)


def test_a_response_too_large_without_a_length_is_refused_while_read(
    server: _Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(promlive, "MAX_RESPONSE_BYTES", 1000)

    def endless(h: BaseHTTPRequestHandler, path: str) -> None:
        h.send_response(200)
        h.end_headers()
        try:
            for _ in range(100):
                h.wfile.write(b" " * 500)
        except OSError:
            pass

    server.handler = endless
    with pytest.raises(InputError, match="larger than"):
        _pull(server, tmp_path)


@pytest.mark.parametrize("where", ["names", "query_range"])
def test_a_reply_with_null_data_is_an_input_error(
    server: _Server, tmp_path: Path, where: str
) -> None:
    def null(h: BaseHTTPRequestHandler, path: str) -> None:
        if path.endswith("/values") and where != "names":
            _send_json(h, NAMES_OK)
        else:
            _send_json(h, {"status": "success", "data": None})

    server.handler = null
    with pytest.raises(InputError, match="with no data"):
        _pull(server, tmp_path)


@pytest.mark.parametrize(
    "name",
    ['vllm:x"} or vector(1) or {a="', "vllm:back\\slash", "vllm:new\nline", "vllm:tab\tcr\r"],
)
def test_metric_names_are_escaped_in_the_selector(
    server: _Server, tmp_path: Path, name: str
) -> None:
    def answer(h: BaseHTTPRequestHandler, path: str) -> None:
        if path.endswith("/values"):
            _send_json(h, {"status": "success", "data": [name]})
        else:
            _send_json(h, {"status": "success", "data": {"resultType": "matrix", "result": []}})

    server.handler = answer
    _pull(server, tmp_path, match="(?s)vllm:.*")  # `.` matching the newline too
    assert len(server.queries) == 1
    query = server.queries[0]
    assert query == "{__name__=" + promql_literal(name) + "}"
    # the literal decodes back to the name and nothing follows it
    inner = query[len("{__name__=") : -1]
    assert json.loads(inner) == name


def promql_literal(name: str) -> str:
    return promlive.promql_string(name)


def test_promql_string_escapes_what_would_end_the_literal() -> None:
    assert promlive.promql_string('a"b') == '"a\\"b"'
    assert promlive.promql_string("a\\b") == '"a\\\\b"'
    assert promlive.promql_string("a\nb\x01") == '"a\\nb\\x01"'


def test_a_live_pull_keeps_only_points_inside_the_window_and_each_once(
    server: _Server, tmp_path: Path
) -> None:
    """A server that answers with points before and after the window, and the same series
    twice: only [start, end] is stored, each point once, and the note says what was dropped."""

    def sloppy(h: BaseHTTPRequestHandler, path: str) -> None:
        if path.endswith("/values"):
            _send_json(h, NAMES_OK)
            return
        values = [[T0 + 15 * i, str(i)] for i in range(-2, 7)]  # -30 s .. +90 s
        series = {"metric": {"__name__": "vllm:num_requests_waiting", "a": "1"}, "values": values}
        again = {**series, "values": [*values[2:4], values[3]]}
        doc = {"resultType": "matrix", "result": [series, again]}
        _send_json(h, {"status": "success", "data": doc})

    server.handler = sloppy
    rep = _pull(server, tmp_path)
    (src,) = rep.sources
    con_rows = state(tmp_path / "w.duckdb")["metric_samples"]
    times = sorted(r[0] for r in con_rows)
    assert times == [T0 + 15 * i for i in range(5)]  # T0 .. T0 + 60, once each
    assert src.rows == 5
    assert any(
        "dropped 4 points outside the requested window and 3 repeated points" in n
        for n in src.notes
    ), src.notes


def test_a_label_name_twice_in_a_live_answer_is_an_input_error(
    server: _Server, tmp_path: Path
) -> None:
    def twice(h: BaseHTTPRequestHandler, path: str) -> None:
        if path.endswith("/values"):
            _send_json(h, NAMES_OK)
            return
        body = (
            (
                '{"status":"success","data":{"resultType":"matrix","result":[{"metric":'
                '{"__name__":"vllm:num_requests_waiting","a":"1","a":"2"},"values":[[T0,"1"]]}]}}'
            )
            .replace("T0", str(int(T0)))
            .encode()
        )
        h.send_response(200)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    server.handler = twice
    with pytest.raises(InputError, match="the key 'a' appears twice in one object"):
        _pull(server, tmp_path)
    assert not (tmp_path / "w.duckdb").exists()  # a failed pull into a new path leaves none


# --- Ctrl-C in the commands that write files ------------------------------------------------


# `relplan ARGS` with MODULE:ATTR wrapped (ATTR a function, or CLASS.METHOD): the wrapper says
# "inside", runs the function (the command's work), then waits there for the signal. So the
# interrupt always lands inside the command, during its work or just after it, before anything
# is written: however loaded the machine, the command cannot finish first. (No race with the
# signal: each short sleep returns to the interpreter, which raises the pending
# KeyboardInterrupt.) The wrapper is in place before the CLI imports the module's names.
_INSIDE_CALL = """
import importlib, runpy, sys, time
module, attr = sys.argv[1].rsplit(":", 1)
owner = importlib.import_module(module)
*path, name = attr.split(".")
for part in path:
    owner = getattr(owner, part)
real = getattr(owner, name)
def hooked(*args, **kwargs):
    sys.stdout.write("inside\\n")
    sys.stdout.flush()
    result = real(*args, **kwargs)
    while True:
        time.sleep(0.05)
    return result
setattr(owner, name, hooked)
sys.argv = ["relplan", *sys.argv[2:]]
runpy.run_module("relplan", run_name="__main__", alter_sys=True)
"""


def _relplan_inside_call(target: str, *args: str) -> subprocess.Popen[str]:
    return _child(_INSIDE_CALL, target, *args)


def _child(code: str, *args: str) -> subprocess.Popen[str]:
    def child() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=child,
    )


def _interrupt_inside(proc: subprocess.Popen[str]) -> str:
    """SIGINT as soon as the child says it is inside the work; returns its stderr."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 120)
    assert ready, "the command did not reach its work within 120 s"
    assert proc.stdout.readline() == "inside\n"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    return err


@pytest.mark.slow
def test_ctrl_c_during_report_is_one_line_exit_130_and_no_page_written(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, _big_proxy(tmp_path / "big.jsonl", 20_000))
    out = tmp_path / "out" / "report.html"
    proc = _relplan_inside_call(
        "relplan.report.pipeline:collect_report_data", "report", "--db", str(db), "--out", str(out)
    )
    err = _interrupt_inside(proc)
    assert proc.returncode == 130, err
    assert err == "relplan: interrupted; nothing stored\n"
    assert not out.exists()
    assert not out.parent.exists() or list(out.parent.iterdir()) == []  # no temp file left


@pytest.mark.slow
def test_ctrl_c_during_simulate_is_one_line_exit_130_and_no_files_written(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    # signalled inside the simulation's event loop (after its first metrics scrape), so it can
    # neither finish first nor be caught before it starts
    proc = _relplan_inside_call(
        "relplan.sim.simulator:Simulation._scrape",
        "simulate",
        "run",
        "pulse-retry-cancel",
        "--out",
        str(out),
    )
    err = _interrupt_inside(proc)
    assert proc.returncode == 130, err
    assert err == "relplan: interrupted; nothing stored\n"
    assert not out.exists() or list(out.iterdir()) == []


def _many_metrics(path: Path, replicas: int, points: int) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for name, kind in (
            ("vllm:num_requests_waiting", "gauge"),
            ("vllm:kv_cache_usage_perc", "gauge"),
        ):
            f.write(f"# TYPE {name} {kind}\n")
            for r in range(replicas):
                for i in range(points):
                    v = (i % 50) / 50 if "perc" in name else i % 40
                    f.write(f'{name}{{replica="r{r}"}} {v} {T0 + i}\n')
        f.write("# EOF\n")
    return path


@pytest.mark.slow
def test_ctrl_c_during_alerts_eval_is_one_line_and_exit_130(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    ingest(db, _many_metrics(tmp_path / "m.om", 10, 1000))
    proc = _relplan_inside_call(
        "relplan.alerts.health:evaluate_health", "alerts", "eval", "--db", str(db), "--step", "1s"
    )
    err = _interrupt_inside(proc)
    assert proc.returncode == 130, err
    assert err == "relplan: interrupted; nothing stored\n"


# --- bounded alert evaluation ----------------------------------------------------------------


def _two_far_samples(path: Path, gap_s: float) -> Path:
    path.write_text(
        "# TYPE vllm:num_requests_waiting gauge\n"
        f'vllm:num_requests_waiting{{replica="r0"}} 1 {T0}\n'
        f'vllm:num_requests_waiting{{replica="r0"}} 2 {T0 + gap_s}\n'
        "# EOF\n"
    )
    return path


@pytest.mark.parametrize("command", ["unittest", "eval"])
def test_alert_evaluation_over_a_stated_limit_is_refused_before_any_work(
    tmp_path: Path, command: str
) -> None:
    from relplan.cli import app
    from tests.helpers.fast_cli import CliRunner

    db = tmp_path / "w.duckdb"
    ingest(db, _two_far_samples(tmp_path / "m.om", 60 * 86400.0))  # 60 days at 15 s
    out = tmp_path / "ci"
    out.mkdir()
    args = ["alerts", command, "--db", str(db), "--step", "15s"]
    args += ["--out-dir", str(out)] if command == "unittest" else []
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert "evaluation" in res.output
    assert "over the limit of" in res.output
    assert list(out.iterdir()) == []


def test_unit_test_bounds_count_series_times_evaluations() -> None:
    from relplan.alerts import promtool
    from relplan.errors import UsageError

    promtool.unit_test_bounds(1000, 100, 15_000, 15_000_000)
    with pytest.raises(UsageError, match="over the limit of 20,000;"):
        promtool.unit_test_bounds(20_001, 1, 15_000, 300_000_000)
    with pytest.raises(UsageError, match="for 2,000 input series"):
        promtool.unit_test_bounds(15_000, 2_000, 15_000, 225_000_000)


@pytest.mark.slow
def test_a_full_disk_during_an_ingest_into_a_new_path_is_one_line_and_leaves_no_file(
    tmp_path: Path,
) -> None:
    db = tmp_path / "new.duckdb"
    big = _big_proxy(tmp_path / "big.jsonl", 100_000)
    proc = _relplan("ingest", "--db", str(db), str(big), pre=_file_size_limit(300_000))
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err
    assert err.startswith("relplan: error: the disk is full"), err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.jsonl"]
