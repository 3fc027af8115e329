"""`mark` and `collect`: cut the operator's files of one drill out of the running lab.

`mark` notes each log's current size and the time; `collect OUT` copies what each log gained
since (whole lines only), and with Prometheus running, exports every `vllm:*` series over the
marked span at a 1 s step as one `query_range` response (gzipped). What an operator has after
an incident: the vLLM log, nginx's JSON and combined access logs, Prometheus's data. With the
lab up `--trace`, also the engine trace the relplan plugin wrote since the mark, as one
`trace.jsonl`.
"""

from __future__ import annotations

import gzip
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from relplan.errors import InputError
from relplan.lab.settings import TRACE_SECONDS, LabSettings, read_state, write_state
from relplan.wording import Words

# The lines `collect` says about nginx's requests in flight, worded by relplan/text/lab.py
# (relplan/wording.py).
Said = Literal["gateway_still_busy", "gateway_unknown", "gateway_waited"]
_say: Words[Said] = Words("relplan.text.lab")

MAX_EXPORT_BYTES = 512 * 1024 * 1024
# How long `collect` waits by default for nginx to finish the requests still in flight.
GATEWAY_WAIT_SECONDS = 600.0
GATEWAY_POLL_SECONDS = 0.1
# How long one look at nginx's status page may take: a busy nginx at its open-files limit
# leaves the page's own connection in the accept queue.
STATUS_TIMEOUT_SECONDS = 5.0


def parse_stub_status(text: str) -> int:
    """Requests nginx is handling, from its stub_status page, less the one reading the page.

    nginx counts a connection as Reading while it reads a request's header and as Writing
    while it handles the request (proxying included); Waiting (idle keepalive) is no request.
    """
    fields = dict(re.findall(r"(Reading|Writing): (\d+)", text))
    if len(fields) != 2:
        raise ValueError("not an nginx stub_status page (no Reading:/Writing: counts)")
    return max(int(fields["Reading"]) + int(fields["Writing"]) - 1, 0)


def parse_accept_queue(table: str, port: int) -> int:
    """Connections waiting in the accept queue of the sockets listening on `port`, from the
    kernel's /proc/net/tcp (for a listening socket, rx_queue is the accept queue's length)."""
    queued = 0
    for line in table.splitlines()[1:]:
        f = line.split()
        if len(f) > 4 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:
            queued += int(f[4].split(":")[1], 16)
    return queued


def accept_queue(port: int) -> int:
    """Connections the kernel completed to `port` that nginx has not accepted yet: stub_status
    cannot see them (an nginx at its open-files limit leaves them queued), yet each is a request
    whose line is still to come. 0 where /proc/net/tcp does not exist (not Linux)."""
    try:
        table = Path("/proc/net/tcp").read_text()
    except OSError:
        return 0
    return parse_accept_queue(table, port)


class NoStatusPage(Exception):
    """nginx answered without its status page (a lab started before the page existed)."""


def gateway_in_flight(s: LabSettings) -> int | None:
    """Requests nginx is handling or has yet to accept (0 when no nginx listens); None when
    nginx does not answer its status page now (too busy to accept the connection in time)."""
    try:
        with urllib.request.urlopen(s.gateway_status_url, timeout=STATUS_TIMEOUT_SECONDS) as resp:
            handling = parse_stub_status(resp.read(65536).decode("ascii", "replace"))
    except urllib.error.HTTPError as exc:
        raise NoStatusPage(f"HTTP {exc.code} from {s.gateway_status_url}") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, ConnectionRefusedError):
            return 0  # no nginx listens: none has a request in flight
        return None
    except (OSError, ValueError):
        return None
    return handling + accept_queue(s.nginx_port)


def wait_gateway_idle(s: LabSettings, timeout: float) -> tuple[int | None, float]:
    """Wait until nginx handles no request and none waits to be accepted (so every request's
    log line is written), at most `timeout` seconds: the requests still in flight (None: nginx
    did not answer its status page) and the wait.

    With cancellation off, nginx keeps a request whose client left until vLLM answers it, and
    writes its log line only then: a drill's last attempts can be logged after the drill ends.
    A status page that does not answer is asked again until the wait runs out, never taken
    for an idle nginx.
    """
    start = time.monotonic()
    while True:
        try:
            left = gateway_in_flight(s)
        except NoStatusPage:
            return None, time.monotonic() - start
        waited = time.monotonic() - start
        if left == 0 or waited >= timeout:
            return left, waited
        time.sleep(GATEWAY_POLL_SECONDS)


def logs(s: LabSettings) -> dict[str, Path]:
    return {"vllm.log": s.vllm_log, "access.json": s.access_json, "access.log": s.access_log}


def mark(s: LabSettings) -> dict[str, object]:
    sizes = {name: (p.stat().st_size if p.exists() else 0) for name, p in logs(s).items()}
    state = read_state(s.root)
    marked: dict[str, object] = {"time": time.time(), "sizes": sizes}
    state["mark"] = marked
    write_state(s.root, state)
    return marked


def collect(
    s: LabSettings,
    out: Path,
    prometheus: bool,
    settle: float = TRACE_SECONDS + 0.5,
    wait: float = GATEWAY_WAIT_SECONDS,
    say: Callable[[str], None] = lambda _m: None,
) -> list[Path]:
    """Copy what the logs gained since the mark into `out`, once nginx has no request in
    flight (at most `wait` seconds); with the trace on, wait `settle` seconds first (the
    plugin closes a part every TRACE_SECONDS) and cut it too."""
    state = read_state(s.root)
    marked = state.get("mark")
    if not isinstance(marked, dict):
        raise InputError("no mark: run `relplan lab mark` before the drill", str(s.root))
    left, waited = wait_gateway_idle(s, wait)
    if left is None:
        say(_say("gateway_unknown", waited_s=waited, url=s.gateway_status_url))
    elif left:
        say(_say("gateway_still_busy", waited_s=waited, left=left))
    elif waited >= GATEWAY_POLL_SECONDS:
        say(_say("gateway_waited", waited_s=waited))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, path in logs(s).items():
        start = int(marked["sizes"].get(name, 0))
        data = path.read_bytes()[start:] if path.exists() else b""
        cut = data.rfind(b"\n") + 1  # whole lines only
        (out / name).write_bytes(data[:cut])
        written.append(out / name)
    if prometheus:
        written.append(export_prometheus(s, float(marked["time"]), time.time(), out))
    env = state.get("vllm_env")
    if isinstance(env, dict) and env.get("RELPLAN_TRACE_DIR"):
        time.sleep(settle)
        written.append(collect_trace(Path(env["RELPLAN_TRACE_DIR"]), float(marked["time"]), out))
    return written


def collect_trace(trace_dir: Path, since: float, out: Path) -> Path:
    """The plugin's closed parts (`*.jsonl`, in the order written) cut to the records from
    `since` on (a stats record's `t_issue`, an event's `t`), as OUT/trace.jsonl. An execution
    that arrived before the mark and ended after it keeps only its later events."""
    path = out / "trace.jsonl"
    parts = sorted(trace_dir.glob("*.jsonl"), key=lambda p: (p.stat().st_mtime, p.name))
    with path.open("w", encoding="utf-8") as fh:
        for part in parts:
            for line in part.read_text(encoding="utf-8").splitlines():
                rec = json.loads(line)
                t = rec.get("t_issue") if rec.get("type") == "stats" else rec.get("t")
                if isinstance(t, (int, float)) and t >= since:
                    fh.write(line + "\n")
    return path


def export_prometheus(s: LabSettings, start: float, end: float, out: Path) -> Path:
    query = urllib.parse.urlencode(
        {
            "query": '{__name__=~"vllm:.*"}',
            "start": f"{start:.3f}",
            "end": f"{end:.3f}",
            "step": "1s",
        }
    )
    url = f"{s.prometheus_url}/api/v1/query_range?{query}"
    with urllib.request.urlopen(url, timeout=60) as resp:
        body = resp.read(MAX_EXPORT_BYTES + 1)
    if len(body) > MAX_EXPORT_BYTES:
        raise InputError(f"the export is larger than {MAX_EXPORT_BYTES} bytes", url)
    doc = json.loads(body)
    if doc.get("status") != "success":
        raise InputError(f"Prometheus answered {doc.get('error', doc.get('status'))}", url)
    path = out / "prometheus.query_range.json.gz"
    path.write_bytes(gzip.compress(body, mtime=0))
    return path
