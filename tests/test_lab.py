"""The lab's pieces that need no vLLM: the files it writes, its process handling, its capture.

The live lab (a real vLLM behind nginx) is tested in tests/lab/, the CI stage after the suite.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from relplan.lab import capture, configs, processes
from relplan.lab.lifecycle import down, status
from relplan.lab.processes import LabError
from relplan.lab.settings import LabSettings, read_state, write_state


def test_nginx_conf_sets_cancellation_and_both_access_logs(tmp_path: Path) -> None:
    on = configs.nginx_conf(LabSettings(root=tmp_path))
    off = configs.nginx_conf(LabSettings(root=tmp_path, cancel=False, nginx_port=9999))
    assert "proxy_ignore_client_abort off;" in on
    assert "proxy_ignore_client_abort on;" in off
    assert "listen 127.0.0.1:9999;" in off
    assert f"access_log {tmp_path / 'logs' / 'access.log'} combined;" in on
    assert "escape=json" in on
    # The drill's call key and attempt headers, and the times nginx writes at the request's end.
    for var in ("$http_x_request_id", "$http_x_relplan_call", "$http_x_relplan_attempt"):
        assert var in on
    for var in ("$msec", "$request_time", "$upstream_response_time", "$upstream_status"):
        assert var in on


def test_nginx_json_format_is_valid_json_once_variables_are_filled() -> None:
    fmt = configs.JSON_FORMAT.strip("'")
    record = json.loads(re.sub(r"\$[a-z0-9_]+", "x", fmt))
    assert record["msec"] == "x"
    assert len(record) == fmt.count("$")


@pytest.mark.slow
def test_nginx_accepts_the_config(tmp_path: Path) -> None:
    from tests.helpers.tools import require_tool

    nginx = require_tool("nginx")
    s = LabSettings(root=tmp_path)
    (s.nginx_dir / "tmp").mkdir(parents=True)
    s.logs.mkdir()
    conf = s.nginx_dir / "nginx.conf"
    conf.write_text(configs.nginx_conf(s))
    done = subprocess.run(
        [nginx, "-t", "-p", str(s.nginx_dir), "-c", str(conf)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_vllm_args_carry_the_logging_flags_and_the_queue_cap(tmp_path: Path) -> None:
    args = LabSettings(root=tmp_path, queue_cap=8).vllm_args()
    for flag in ("--enable-log-requests", "--enable-logging-iteration-details"):
        assert flag in args
    assert args[args.index("--max-num-queued-reqs") + 1] == "8"
    assert "--max-num-queued-reqs" not in LabSettings(root=tmp_path).vllm_args()
    assert args[args.index("--host") + 1] == "127.0.0.1"


def test_prometheus_scrapes_vllm_every_second(tmp_path: Path) -> None:
    yml = configs.prometheus_yml(LabSettings(root=tmp_path, vllm_port=8123))
    assert "scrape_interval: 1s" in yml
    assert '"127.0.0.1:8123"' in yml


def test_a_started_server_group_is_stopped_with_its_children(tmp_path: Path) -> None:
    # A parent that starts a child, as vLLM's API server starts its engine core.
    script = "import subprocess,sys,time; subprocess.Popen([sys.executable,'-c','import time; time.sleep(600)']); time.sleep(600)"
    pid = processes.start([sys.executable, "-c", script], tmp_path / "out.log")
    assert processes.alive(pid)
    write_state(tmp_path, {"pids": {"vllm": pid}})
    assert status(tmp_path).running == {"vllm": pid}
    assert down(tmp_path, lambda _m: None) == ["vllm"]
    assert not processes._group_alive(pid)
    assert status(tmp_path).running == {}
    assert down(tmp_path, lambda _m: None) == []


def test_lab_status_lists_each_server_and_the_settings_up_recorded(tmp_path: Path) -> None:
    from relplan.cli import app
    from tests.helpers.fast_cli import CliRunner

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that no longer runs
    settings = {"cancel": True, "max_num_seqs": 4, "trace": False}
    write_state(tmp_path, {"pids": {"vllm": gone.pid}, "settings": settings})
    res = CliRunner().invoke(app, ["lab", "status", "--dir", str(tmp_path)])
    assert res.exit_code == 0, res.output
    # relplan/text/lab.py's lab_status: names padded to 10, the settings up did not record False
    assert res.output == (
        "vllm        stopped\n"
        "nginx       stopped\n"
        "prometheus  stopped\n"
        "settings: cancel=True, queue_cap=False, max_num_seqs=4, trace=False\n"
    )
    from relplan.lab.lifecycle import Status
    from relplan.text.lab import lab_status

    st = Status(running={"nginx": 4321}, stopped=["vllm", "prometheus"], settings={})
    assert lab_status(st) == [
        "nginx       running  pid 4321",
        "vllm        stopped",
        "prometheus  stopped",
    ]
    empty = CliRunner().invoke(app, ["lab", "status", "--dir", str(tmp_path / "none")])
    assert empty.output == "vllm        stopped\nnginx       stopped\nprometheus  stopped\n"


def test_wait_http_fails_early_when_the_server_exits(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    pid = processes.start([sys.executable, "-c", "print('boom'); raise SystemExit(3)"], log)
    with pytest.raises(LabError, match="exited while starting") as err:
        processes.wait_http("http://127.0.0.1:9/health", pid, log, "vLLM", timeout=60)
    assert "boom" in str(err.value)


def test_collect_copies_whole_lines_written_since_the_mark(tmp_path: Path) -> None:
    s = LabSettings(root=tmp_path)
    s.logs.mkdir(parents=True)
    s.vllm_log.write_text("before\n")
    s.access_json.write_text('{"a":1}\n')
    capture.mark(s)
    with s.vllm_log.open("a") as f:
        f.write("after 1\nafter 2\npartial")
    written = capture.collect(s, tmp_path / "out", prometheus=False)
    assert (tmp_path / "out" / "vllm.log").read_text() == "after 1\nafter 2\n"
    assert (tmp_path / "out" / "access.json").read_text() == ""
    assert (tmp_path / "out" / "access.log").read_text() == ""
    assert len(written) == 3
    assert "mark" in read_state(tmp_path)


def test_collect_without_a_mark_says_so(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="relplan lab mark"):
        capture.collect(LabSettings(root=tmp_path), tmp_path / "out", prometheus=False)


@pytest.mark.slow
def test_lab_up_refuses_a_bad_cancel_value() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "relplan", "lab", "up", "--cancel", "maybe"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert "--cancel: expected on or off" in done.stderr


def test_trace_sets_the_plugin_environment_and_changing_it_restarts_vllm(tmp_path: Path) -> None:
    from relplan.lab.lifecycle import _env_changed

    plain, traced = LabSettings(root=tmp_path), LabSettings(root=tmp_path, trace=True)
    assert "RELPLAN_TRACE_DIR" not in plain.vllm_env()
    assert traced.vllm_env()["RELPLAN_TRACE_DIR"] == str(tmp_path / "trace")
    assert traced.vllm_env()["VLLM_CPU_KVCACHE_SPACE"] == "2"
    assert not _env_changed({}, plain)  # a state from before the environment was kept
    assert _env_changed({}, traced)
    assert not _env_changed({"vllm_env": traced.vllm_env()}, traced)


def test_collect_cuts_the_plugin_trace_at_the_mark(tmp_path: Path) -> None:
    s = LabSettings(root=tmp_path, trace=True)
    s.logs.mkdir(parents=True)
    s.trace_dir.mkdir()
    state = read_state(tmp_path)
    state["vllm_env"] = s.vllm_env()
    write_state(tmp_path, state)
    marked = float(capture.mark(s)["time"])
    recs = [
        {"type": "stats", "step": 1, "t_issue": marked - 5},
        {"type": "stats", "step": 2, "t_issue": marked + 1},
        {"type": "event", "t": marked - 1, "execution_id": "a", "event": "arrived"},
        {"type": "event", "t": marked + 2, "execution_id": "a", "event": "finished"},
    ]
    (s.trace_dir / "engine-1-1-00001.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    (s.trace_dir / "engine-1-1-00002.part").write_text('{"half"')
    written = capture.collect(s, tmp_path / "out", prometheus=False, settle=0)
    assert written[-1] == tmp_path / "out" / "trace.jsonl"
    got = [json.loads(x) for x in written[-1].read_text().splitlines()]
    assert [(r["type"], r.get("step"), r.get("event")) for r in got] == [
        ("stats", 2, None),
        ("event", None, "finished"),
    ]


def _capacity_bench() -> Any:
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "bench" / "lab_capacity.py"
    spec = importlib.util.spec_from_file_location("bench_lab_capacity", path)
    assert spec is not None
    assert spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_capacity_bench_reads_a_word_level_vocabulary_and_prints_its_table(
    tmp_path: Path,
) -> None:
    from relplan.drill.capacity import Level

    b = _capacity_bench()
    vocab = {"<unk>": 0, "<s>": 1, "w0": 2, "w1": 3}
    (tmp_path / "tokenizer.json").write_text(json.dumps({"model": {"vocab": vocab}}))
    assert b.model_words(tmp_path) == ["w0", "w1"]
    from relplan.drill.client import Record

    def rec(sent: float, end: float, outcome: str = "delivered") -> Record:
        return Record("r", 0, sent, sent, end, outcome, 200, "m", None, 32, None)

    levels = [[rec(0, 2), rec(0, 3), rec(1, 9, "client_gone")], []]
    rows = [Level(4, 30.0, 54, 1, 1.8, 2.25), Level(8, 30.0, 0, 3, 0.0, None)]
    text = b.table(rows, "500", "32", levels)
    # c / mean latency of the delivered calls: 4 / 2.5 s
    assert "| 4 | 30 s | 54 | 1 | 1.80 | 2.2 s | 3 | 1.60 |" in text
    assert "| 8 | 30 s | 0 | 3 | 0.00 | - | 0 | - |" in text


def test_the_lab_tokenizer_knows_every_drill_word_as_itself() -> None:
    """On a tokenizer that knew only w0..w2039, every drill word was `<unk>`: every prompt of
    one length was the same tokens and the prefix cache served 76 % of them (the traced run
    in tests/data/lab/README.md). Each drill word must be its own token."""
    from relplan.drill.prompts import WORDS
    from relplan.lab.make_model import SPECIALS, VOCAB, vocabulary

    vocab = vocabulary(WORDS)
    assert len(vocab) == VOCAB
    assert sorted(vocab.values()) == list(range(VOCAB))
    assert all(w in vocab for w in WORDS)
    assert [vocab[s] for s in SPECIALS] == list(range(len(SPECIALS)))


def test_a_model_written_without_the_drill_words_is_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from relplan.lab import environment

    s = LabSettings(root=tmp_path, words=("time", "year"))
    s.model_dir.mkdir(parents=True)
    for name in ("model.safetensors", "tokenizer.json"):
        (s.model_dir / name).write_text("x")
    (s.model_dir / "relplan-lab.json").write_text(json.dumps({"vocab": 2048, "words": 2040}))
    runs: list[list[str]] = []
    monkeypatch.setattr(environment, "_run", lambda args, check=True: runs.append(args) or 0)
    said: list[str] = []
    environment.ensure_model(s, said.append)
    assert len(runs) == 1
    assert runs[0][-1].endswith("prompt-words.txt")
    assert (s.model_dir / "prompt-words.txt").read_text().split() == ["time", "year"]
    assert "lacks the drill's words" in said[0]
    # written with these words: nothing to do
    meta = {"vocab": 2048, "words": 2040, "prompt_words": ["time", "year"]}
    (s.model_dir / "relplan-lab.json").write_text(json.dumps(meta))
    environment.ensure_model(s, said.append)
    assert len(runs) == 1


def test_stub_status_counts_requests_less_the_one_asking() -> None:
    # The example page of nginx's ngx_http_stub_status_module documentation
    # (https://nginx.org/en/docs/http/ngx_http_stub_status_module.html).
    page = (
        "Active connections: 291 \nserver accepts handled requests\n"
        " 16630948 16630948 31070465 \nReading: 6 Writing: 179 Waiting: 106 \n"
    )
    assert capture.parse_stub_status(page) == 6 + 179 - 1
    with pytest.raises(ValueError, match="stub_status"):
        capture.parse_stub_status("<html>404 Not Found</html>")


def test_lab_servers_inherit_the_hard_open_files_limit() -> None:
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard <= 256:
        pytest.skip(f"the hard open-files limit is {hard}: nothing to raise")
    code = (
        "import resource; from relplan.lab.processes import open_files_to_hard_limit as f;"
        "print(*resource.getrlimit(resource.RLIMIT_NOFILE), *f())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard)),
        capture_output=True,
        text=True,
        check=True,
    )
    before_soft, _, after_soft, after_hard = map(int, done.stdout.split())
    assert before_soft == 256
    assert after_soft == (65536 if hard == resource.RLIM_INFINITY else hard) > 256
    assert after_hard == hard


def test_no_nginx_listening_is_no_request_in_flight(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # bound, not listening: a connection is refused
        s = LabSettings(root=tmp_path, nginx_port=port)
        assert capture.gateway_in_flight(s) == 0
        assert capture.wait_gateway_idle(s, 60)[0] == 0


def test_accept_queue_counts_connections_the_listener_has_not_accepted() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        port = listener.getsockname()[1]
        assert capture.accept_queue(port) == 0
        clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
        try:
            for _ in range(1000):  # the kernel queues each once its handshake completes
                if capture.accept_queue(port) == 3:
                    break
                listener.settimeout(0.01)
                with pytest.raises(TimeoutError):
                    listener.accept()
            assert capture.accept_queue(port) == 3
            listener.settimeout(5)
            listener.accept()[0].close()
            assert capture.accept_queue(port) == 2
        finally:
            for c in clients:
                c.close()


def test_accept_queue_reads_the_rx_queue_of_listening_sockets_only() -> None:
    # /proc/net/tcp as Linux writes it (header, a listener on 127.0.0.1:8080 with 2 queued, an
    # established connection to it with 5 bytes unread): only the listener's counts.
    table = (
        "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid"
        "  timeout inode\n"
        "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000002 00:00000000 00000000     0"
        "        0 1 1 0000000000000000 100 0 0 10 0\n"
        "   1: 0100007F:1F90 0100007F:A1B2 01 00000000:00000005 00:00000000 00000000     0"
        "        0 2 1 0000000000000000 20 4 30 10 -1\n"
    )
    assert capture.parse_accept_queue(table, 8080) == 2
    assert capture.parse_accept_queue(table, 8081) == 0


@dataclass
class HeldLab:
    """nginx with the lab's config (cancellation off) in front of an upstream that holds
    every GET /v1/held until `release` is set; `arrived` lists each held request's
    X-Relplan-Call as it reaches the upstream, `first` is set at the first."""

    s: LabSettings
    arrived: list[str]
    first: threading.Event
    release: threading.Event


@contextlib.contextmanager
def held_lab(tmp_path: Path, open_files: int | None = None) -> Iterator[HeldLab]:
    """Start the upstream and nginx; with `open_files`, nginx's worker may open that many files
    more than it has open when idle (nginx's worker_rlimit_nofile, so a few requests fill it)."""
    from tests.helpers.http import serve_in_background
    from tests.helpers.tools import require_tool

    nginx = require_tool("nginx")
    release, first = threading.Event(), threading.Event()
    arrived: list[str] = []

    class Held(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            arrived.append(self.headers.get("X-Relplan-Call", ""))
            first.set()
            release.wait(60)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Held)
    serve_in_background(upstream)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    s = LabSettings(root=tmp_path, cancel=False, nginx_port=port)
    s.vllm_port = upstream.server_address[1]
    (s.nginx_dir / "tmp").mkdir(parents=True)
    s.logs.mkdir()
    conf = s.nginx_dir / "nginx.conf"

    def start(limit: int | None) -> tuple[subprocess.Popen[bytes], int]:
        text = configs.nginx_conf(s)
        if limit is not None:
            text = text.replace(
                "worker_processes 1;", f"worker_processes 1;\nworker_rlimit_nofile {limit};"
            )
        conf.write_text(text)
        server = subprocess.Popen(
            [nginx, "-p", str(s.nginx_dir), "-c", str(conf), "-g", "daemon off;"],
            stderr=subprocess.DEVNULL,
        )
        servers.append(server)
        processes.wait_http(s.gateway_status_url, server.pid, s.logs / "x", "nginx", 30)
        pids = subprocess.run(["pgrep", "-P", str(server.pid)], capture_output=True, text=True)
        return server, int(pids.stdout.split()[0])

    servers: list[subprocess.Popen[bytes]] = []
    try:
        server, worker = start(None)
        if open_files is not None:
            files = len(list(Path(f"/proc/{worker}/fd").iterdir()))
            server.terminate()
            server.wait(30)
            start(files + open_files)
        yield HeldLab(s, arrived, first, release)
    finally:
        release.set()
        for server in servers:  # every nginx started, even one that did not answer
            server.terminate()
            server.wait(30)
        upstream.shutdown()
        upstream.server_close()


@pytest.mark.slow
def test_collect_waits_for_requests_nginx_at_its_open_files_limit_has_not_accepted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nginx at its open-files limit leaves new connections in the kernel's accept queue, the
    status page's own among them, and logs their requests only once it accepts them. `collect`
    must neither take the unanswered status page for an idle nginx nor miss a queued request
    (one way a drill's last attempts go missing from the copy, as in CI at stop 41)."""
    clients: list[socket.socket] = []
    # room for a handful of requests: a client and an upstream connection each
    with held_lab(tmp_path, open_files=6) as lab:
        s, arrived = lab.s, lab.arrived

        def send(call: str, settle: float) -> str:
            """Send a held request on a new connection: 'held' once it reached the upstream,
            'queued' while the kernel holds its connection for nginx to accept, for `settle`
            seconds with nothing arriving (on a loaded machine nginx may take a moment to
            accept a connection it has room for: every request once read as 'queued')."""
            n = len(arrived)
            c = socket.create_connection(("127.0.0.1", s.nginx_port))
            clients.append(c)
            c.sendall(
                f"GET /v1/held HTTP/1.1\r\nHost: x\r\nX-Relplan-Call: {call}\r\n\r\n".encode()
            )
            end = time.monotonic() + 30
            queued_since = None
            while time.monotonic() < end:
                if len(arrived) > n:
                    return "held"
                if capture.accept_queue(s.nginx_port) == 0:
                    queued_since = None
                elif queued_since is None:
                    queued_since = time.monotonic()
                if queued_since is not None and time.monotonic() - queued_since >= settle:
                    return "queued"
                c.settimeout(0.01)
                try:
                    if c.recv(1, socket.MSG_PEEK):
                        return "answered"  # nginx could not open its upstream connection: 502
                except TimeoutError:
                    pass
            raise AssertionError(f"request {call} neither reached the upstream nor was queued")

        try:
            capture.mark(s)
            got: list[str] = []
            for i in range(12):  # behind a request nginx left queued, the next waits too
                got.append(send(f"c{i}", 0.0 if "queued" in got else 2.0))
            assert "queued" in got, got
            assert got.count("held") >= 1, got
            last = f"c{got.index('queued')}"
            monkeypatch.setattr(capture, "STATUS_TIMEOUT_SECONDS", 0.5)
            asked = capture.gateway_in_flight
            answers: list[int | None] = []

            def first_answer_then_release(s: LabSettings) -> int | None:
                answers.append(asked(s))
                lab.release.set()  # collect has asked nginx once: now let the held ones end
                return answers[-1]

            monkeypatch.setattr(capture, "gateway_in_flight", first_answer_then_release)
            said: list[str] = []
            capture.collect(s, tmp_path / "out", prometheus=False, wait=60, say=said.append)
            monkeypatch.undo()
            assert answers[0] is None, answers  # nginx full: its status page went unanswered
            lines = (tmp_path / "out" / "access.json").read_text().splitlines()
            logged = {json.loads(line)["http_x_relplan_call"] for line in lines}
            assert last in logged, (got, sorted(logged))
            assert logged == {f"c{i}" for i in range(len(got))}, (got, sorted(logged))
            assert capture.gateway_in_flight(s) == 0
            assert any("waited" in m for m in said), said
        finally:
            for c in clients:
                c.close()


@pytest.mark.slow
def test_collect_waits_for_the_line_nginx_writes_when_an_abandoned_request_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancellation off: the client leaves, nginx waits for the upstream and logs the request
    only when it answers. `collect` must wait for that line (the CI failure of stop 36: a
    drill's last attempt was missing from the copied access log)."""
    with held_lab(tmp_path) as lab:
        s = lab.s
        capture.mark(s)
        with socket.create_connection(("127.0.0.1", s.nginx_port)) as client:
            client.sendall(b"GET /v1/held HTTP/1.1\r\nHost: x\r\nX-Request-Id: held-1\r\n\r\n")
            assert lab.first.wait(30)
        # the client has left; nginx still waits for the upstream
        assert capture.gateway_in_flight(s) == 1
        left, _ = capture.wait_gateway_idle(s, timeout=0)
        assert left == 1
        asked = capture.gateway_in_flight

        def first_answer_then_release(s: LabSettings) -> int | None:
            n = asked(s)
            lab.release.set()  # collect has seen the request in flight: now let it end
            return n

        monkeypatch.setattr(capture, "gateway_in_flight", first_answer_then_release)
        said: list[str] = []
        capture.collect(s, tmp_path / "out", prometheus=False, wait=60, say=said.append)
        monkeypatch.undo()
        lines = (tmp_path / "out" / "access.json").read_text().splitlines()
        assert [json.loads(line)["request"] for line in lines] == ["GET /v1/held HTTP/1.1"]
        assert any("waited" in m for m in said), said
        assert capture.gateway_in_flight(s) == 0
