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
Said = Literal["gateway_still_busy", "gateway_waited"]
_say: Words[Said] = Words("relplan.text.lab")

MAX_EXPORT_BYTES = 512 * 1024 * 1024
# How long `collect` waits by default for nginx to finish the requests still in flight.
GATEWAY_WAIT_SECONDS = 600.0
GATEWAY_POLL_SECONDS = 0.1


def parse_stub_status(text: str) -> int:
    """Requests nginx is handling, from its stub_status page, less the one reading the page.

    nginx counts a connection as Reading while it reads a request's header and as Writing
    while it handles the request (proxying included); Waiting (idle keepalive) is no request.
    """
    fields = dict(re.findall(r"(Reading|Writing): (\d+)", text))
    if len(fields) != 2:
        raise ValueError("not an nginx stub_status page (no Reading:/Writing: counts)")
    return max(int(fields["Reading"]) + int(fields["Writing"]) - 1, 0)


def gateway_in_flight(s: LabSettings) -> int | None:
    """Requests in flight at the lab's nginx; None when nginx is down or has no status page
    (a lab started before the page existed)."""
    try:
        with urllib.request.urlopen(s.gateway_status_url, timeout=5) as resp:
            return parse_stub_status(resp.read(65536).decode("ascii", "replace"))
    except (OSError, ValueError):
        return None


def wait_gateway_idle(s: LabSettings, timeout: float) -> tuple[int | None, float]:
    """Wait until nginx handles no request (so every request's log line is written), at most
    `timeout` seconds: the requests still in flight (None: nginx cannot be asked) and the wait.

    With cancellation off, nginx keeps a request whose client left until vLLM answers it, and
    writes its log line only then: a drill's last attempts can be logged after the drill ends.
    """
    start = time.monotonic()
    while True:
        left = gateway_in_flight(s)
        waited = time.monotonic() - start
        if not left or waited >= timeout:
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
    if left:
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
