"""Issue 25's hostile cases, run as a user would: each builds its inputs in a fresh folder,
runs the `relplan` CLI in a new process and classifies what happened.

    python bench/hostile.py                  # every case; the table on stdout
    python bench/hostile.py -k attach        # the cases whose surface or name has 'attach'
    python bench/hostile.py --json out.json  # also the raw results
    python bench/hostile.py --markdown out.json  # the tables of docs/workspace.md from them

Outcomes: `ok` (exit 0, and the case's own check of the result held), `clean error` (exit 2,
stderr one `relplan: error:` line, the workspace as it was: every table, view and sequence
compared, tests/helpers/ingest.py whole_state), `traceback`, `hang` (still running at the
case's time limit, killed), `OOM` (its process tree over --rss-limit, killed), `silent
change` (exit 0 but the check failed, or an error that changed the workspace), `other`.
Wall time and peak RSS (the process tree's, sampled every 20 ms) are given for every case.
The hostile servers (trickling, endless, forged bodies) listen on 127.0.0.1 only, in this
process, and stop with it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import duckdb
import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.helpers.ingest import whole_state  # noqa: E402

T0 = 1_764_460_800.0  # 2025-11-30T00:00:00Z
INCIDENT = ROOT / "tests/data/ingest/incident"
PUB = ROOT / "tests/data/published"
STOP = threading.Event()


@dataclass
class Run:
    argv: list[str]
    db: Path | None = None  # the workspace whose state must not change on an error
    env: dict[str, str] = field(default_factory=dict)
    check: Callable[[], str | None] | None = None  # on exit 0: None if right, else what is wrong
    limit_s: float = 60.0
    prlimit: list[str] = field(default_factory=list)  # e.g. ['--fsize=...']


@dataclass
class Case:
    surface: str
    name: str
    build: Callable[[Path, str], Run]
    was: str = ""  # what issue 25 found


CASES: list[Case] = []


def case(surface: str, name: str, was: str = "") -> Callable[[Callable[[Path, str], Run]], Any]:
    def add(fn: Callable[[Path, str], Run]) -> Callable[[Path, str], Run]:
        CASES.append(Case(surface, name, fn, was))
        return fn

    return add


# --- helpers ---------------------------------------------------------------------------------


def rp(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "relplan", *map(str, args)]


def quiet(*args: str | Path) -> None:
    subprocess.run(rp(*args), check=True, capture_output=True)


def proxy_lines(n: int = 4, t0: float = T0, prefix: str = "c") -> list[dict[str, Any]]:
    return [
        {
            "call_id": f"{prefix}{i}",
            "attempt": 0,
            "t_sent": t0 + i,
            "t_end": t0 + i + 1,
            "outcome": "delivered",
            "status": 200,
            "model": "m",
            "replica": "r0",
            "prompt_tokens": 10,
            "max_tokens": 5,
        }
        for i in range(n)
    ]


def jsonl(path: Path, recs: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    return path


def base_db(tmp: Path) -> Path:
    """A workspace that already holds the incident (proxy, engine, metrics, run.json)."""
    db = tmp / "w.duckdb"
    quiet("ingest", INCIDENT, "--db", db)
    return db


def q(db: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def engine_parts(tmp: Path, hours: tuple[str, ...] = ("00", "01")) -> Path:
    """The incident's engine trace written as Hive partitions day=/hour=/replica=."""
    root = tmp / "traces"
    con = duckdb.connect()
    src = str(INCIDENT / "engine.jsonl")
    for i, h in enumerate(hours):
        d = root / "day=2025-11-30" / f"hour={h}"
        d.mkdir(parents=True)
        con.execute(
            f"copy (select * exclude (replica, rn) from (select *, row_number() over () as rn"
            f" from read_json_auto('{src}')) where rn % {len(hours)} = {i})"
            f" to '{d}/part.parquet' (format parquet)"
        )
    return root


def attach_db(tmp: Path, root: Path) -> Path:
    db = tmp / "a.duckdb"
    quiet("ingest", "--attach", f"{root}/**/*.parquet", "--db", db)
    return db


def analyze_json(db: Path, *extra: str) -> dict[str, Any]:
    out = subprocess.run(
        rp("analyze", "--db", db, "--json", *extra), check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)  # type: ignore[no-any-return]


# --- hostile servers --------------------------------------------------------------------------


class Hostile(BaseHTTPRequestHandler):
    def _head(self, status: int, ctype: str, length: int | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def _trickle(self, byte: bytes, every: float) -> None:
        try:
            while not STOP.wait(every):
                self.wfile.write(byte)
                self.wfile.flush()
        except OSError:
            return

    def _endless(self, chunk: bytes) -> None:
        try:
            while not STOP.is_set():
                self.wfile.write(chunk)
        except OSError:
            return

    def do_GET(self) -> None:
        text = "text/plain; version=0.0.4"
        p = self.path.split("?")[0]
        if "/slow" in p and "/slow-error" not in p:  # one byte a second, in a body that says 1000
            self._head(200, text if "metrics" in p else "application/json", 1000)
            self._trickle(b"#" if "metrics" in p else b" ", 1.0)
        elif "/slow-error" in p:  # an error whose body trickles past the deadline
            self._head(500, "text/plain", 100_000)
            self._trickle(b"x", 1.0)
        elif "/endless" in p and "/endless-error" not in p:
            self._head(200, text if "metrics" in p else "application/json")
            self._endless(b"demo_total 1\n" * 4096 if "metrics" in p else b" " * 65536)
        elif "/endless-error" in p:
            self._head(500, "text/plain")
            self._endless(b"x" * 65536)
        elif "/forged" in p:
            body = (
                b"# TYPE demo_total counter\ndemo_total 1\n# SCRAPE 2001-01-01T00:00:00Z\n"
                b"demo_total 999\n"
            )
            self._head(200, text, len(body))
            self.wfile.write(body)
        elif "/html" in p:
            body = b"<html><body>Welcome</body></html>\n"
            self._head(200, "text/plain", len(body))
            self.wfile.write(body)
        elif "/json-metrics" in p:
            body = b'{"demo_total": 1}\n'
            self._head(200, "application/json", len(body))
            self.wfile.write(body)
        elif "/deep" in p:
            body = b'{"status":"success","data":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
            self._head(200, "application/json", len(body))
            self.wfile.write(body)
        elif "/huge-int" in p:
            body = (
                b'{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"vllm:x"},"values":[[1764460800,"1"]]}]},"n":'
                + b"9" * 5000
                + b"}"
            )
            self._head(200, "application/json", len(body))
            self.wfile.write(body)
        else:
            self.send_error(404)

    def log_message(self, format: str, *args: object) -> None:
        pass


@contextmanager
def hostile_server() -> Iterator[str]:
    STOP.clear()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    srv.daemon_threads = True
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        STOP.set()
        srv.shutdown()
        srv.server_close()


# --- running and classifying ------------------------------------------------------------------


@dataclass
class Result:
    surface: str
    name: str
    outcome: str
    wall_s: float
    peak_mb: float
    detail: str
    was: str


def _tree_rss(proc: psutil.Process) -> int:
    total = 0
    try:
        for p in [proc, *proc.children(recursive=True)]:
            with suppress(psutil.Error):
                total += p.memory_info().rss
    except psutil.Error:
        pass
    return total


def execute(c: Case, url: str, rss_limit: int) -> Result:
    tmp = Path(tempfile.mkdtemp(prefix="hostile-"))
    try:
        run = c.build(tmp, url)
        before = whole_state(run.db) if run.db else None
        env = {**os.environ, "PYTHONWARNINGS": "ignore", **run.env}
        argv = (["prlimit", *run.prlimit, "--"] if run.prlimit else []) + run.argv
        t = time.monotonic()
        proc = subprocess.Popen(
            argv,
            cwd=tmp,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
        ps = psutil.Process(proc.pid)
        peak, killed = 0, ""
        out_chunks: dict[str, bytes] = {}

        def drain(name: str, stream: Any) -> None:
            out_chunks[name] = stream.read()

        threads = [
            threading.Thread(target=drain, args=("out", proc.stdout), daemon=True),
            threading.Thread(target=drain, args=("err", proc.stderr), daemon=True),
        ]
        for th in threads:
            th.start()
        while proc.poll() is None:
            peak = max(peak, _tree_rss(ps))
            if peak > rss_limit:
                killed = "OOM"
            elif time.monotonic() - t > run.limit_s:
                killed = "hang"
            if killed:
                for p in [*ps.children(recursive=True), ps]:
                    with suppress(psutil.Error):
                        p.kill()
                proc.wait()
                break
            time.sleep(0.02)
        wall = time.monotonic() - t
        for th in threads:
            th.join(5)
        err = out_chunks.get("err", b"").decode("utf-8", "replace")
        rc = proc.returncode
        lines = [ln for ln in err.splitlines() if ln.strip()]
        after = whole_state(run.db) if run.db else None
        if killed:
            outcome, detail = killed, f"killed after {wall:.0f} s"
        elif "Traceback" in err:
            outcome, detail = "traceback", lines[-1] if lines else ""
        elif rc == 0:
            wrong = run.check() if run.check else None
            outcome, detail = ("silent change", wrong) if wrong else ("ok", "")
            if not wrong and lines:
                detail = lines[-1][:200]
        elif rc == 2 and len(lines) == 1 and lines[0].startswith("relplan: error:"):
            if run.db and before != after:
                outcome, detail = "silent change", "error, but the workspace changed: " + lines[0]
            else:
                outcome, detail = "clean error", lines[0]
        else:
            outcome, detail = "other", f"exit {rc}: " + " | ".join(lines[-3:])
        return Result(c.surface, c.name, outcome, wall, peak / 1e6, detail[:300], c.was)
    except Exception as e:  # the case's own set-up or check failed: say so, go on
        return Result(c.surface, c.name, "harness", 0.0, 0.0, repr(e)[:300], c.was)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- attached data --------------------------------------------------------------------------


def _attached_change(change: str) -> Callable[[Path, str], Run]:
    def build(tmp: Path, url: str) -> Run:
        root = engine_parts(tmp)
        db = attach_db(tmp, root)
        files = sorted(root.rglob("*.parquet"))
        if change == "deleted":
            files[0].unlink()
        elif change == "added":
            d = root / "day=2025-11-30" / "hour=02"
            d.mkdir()
            shutil.copy(files[0], d / "part.parquet")
        elif change == "duplicated":
            shutil.copy(files[0], files[0].with_name("part-copy.parquet"))
        elif change == "rewritten":
            con = duckdb.connect()
            con.execute(
                f"copy (select * replace (prompt_computed * 2 as prompt_computed)"
                f" from read_parquet('{files[0]}', hive_partitioning=false)) to '{tmp}/x.parquet' (format parquet)"
            )
            shutil.move(tmp / "x.parquet", files[0])
        elif change == "rewritten, same size and mtime":
            st = files[0].stat()
            data = bytearray(files[0].read_bytes())
            # the file's first data page: flip one byte of a value, keep size and times
            i = data.index(b"PAR1") + 64
            data[i] ^= 0x01
            files[0].write_bytes(bytes(data))
            os.utime(files[0], ns=(st.st_atime_ns, st.st_mtime_ns))
        return Run(rp("analyze", "--db", db, "--json"), db=db)

    return build


for _ch in ("deleted", "added", "duplicated", "rewritten", "rewritten, same size and mtime"):
    case("attach", f"file {_ch} after the attach", "silent change")(_attached_change(_ch))


@case("attach", "two identical files under the glob at attach time")
def _dup_at_attach(tmp: Path, url: str) -> Run:
    root = engine_parts(tmp)
    f = sorted(root.rglob("*.parquet"))[0]
    shutil.copy(f, f.with_name("again.parquet"))
    db = tmp / "a.duckdb"
    quiet("ingest", INCIDENT / "proxy.jsonl", "--db", db)

    def check() -> str | None:
        n = q(db, "select count(*) from attached_files")[0][0]
        return f"attached {n} files, two with the same bytes" if n == 3 else None

    return Run(rp("ingest", "--attach", f"{root}/**/*.parquet", "--db", db), db=db, check=check)


def _incident_parquet(tmp: Path) -> Path:
    """A folder `t` holding the incident's engine trace as one Parquet file, e.parquet."""
    root = tmp / "t"
    root.mkdir()
    duckdb.connect().execute(
        f"copy (select * from read_json_auto('{INCIDENT}/engine.jsonl')) to '{root}/e.parquet'"
        " (format parquet)"
    )
    return root


@case("attach", "same records copied, then attached", "counted twice")
def _copied_then_attached(tmp: Path, url: str) -> Run:
    root = _incident_parquet(tmp)
    db = tmp / "a.duckdb"
    quiet("ingest", root / "e.parquet", "--db", db)
    return Run(rp("ingest", "--attach", f"{root}/*.parquet", "--db", db), db=db)


@case("attach", "same records as JSON Lines copied, then the Parquet attached", "counted twice")
def _jsonl_then_attached(tmp: Path, url: str) -> Run:
    root = _incident_parquet(tmp)
    db = tmp / "a.duckdb"
    quiet("ingest", INCIDENT / "engine.jsonl", "--db", db)

    def check() -> str | None:
        n = q(db, "select count(*) from attached_files")[0][0]
        return f"{n} files with the copied steps attached beside them" if n else None

    return Run(rp("ingest", "--attach", f"{root}/*.parquet", "--db", db), db=db, check=check)


@case("attach", "attached, then the same file copied by ingest", "counted twice")
def _attached_then_copied(tmp: Path, url: str) -> Run:
    root = _incident_parquet(tmp)
    db = attach_db(tmp, root)

    def check() -> str | None:
        n = q(db, "select count(*) from steps")[0][0]
        return f"{n} steps copied beside the attached ones" if n else None

    return Run(rp("ingest", root / "e.parquet", "--db", db), db=db, check=check)


@case("attach", "attached Parquet, then the same records as JSON Lines copied", "counted twice")
def _attached_then_jsonl(tmp: Path, url: str) -> Run:
    root = _incident_parquet(tmp)
    db = attach_db(tmp, root)

    def check() -> str | None:
        n = q(db, "select count(*) from steps")[0][0]
        return f"{n} steps copied beside the same attached ones" if n else None

    return Run(rp("ingest", INCIDENT / "engine.jsonl", "--db", db), db=db, check=check)


@case("attach", "hour=9 beside hour=10, analyze --from/--to over 09:00", "dropped by pruning")
def _hour9(tmp: Path, url: str) -> Run:
    root = tmp / "traces"
    con = duckdb.connect()
    src = str(INCIDENT / "engine.jsonl")
    for h, shift in (("9", 9 * 3600), ("10", 10 * 3600)):
        d = root / "day=2025-11-30" / f"hour={h}"
        d.mkdir(parents=True)
        con.execute(
            f"copy (select * exclude (replica) replace (t + {shift} as t, t_issue + {shift} as"
            f" t_issue, t_done + {shift} as t_done) from read_json_auto('{src}'))"
            f" to '{d}/p.parquet' (format parquet)"
        )
    db = attach_db(tmp, root)
    args = ["--from", "2025-11-30T09:00:00Z", "--to", "2025-11-30T09:59:59Z"]

    def check() -> str | None:
        got = q(db, "select count(*) from attached_files")[0][0]
        res = analyze_json(db, *args)
        text = json.dumps(res)
        return None if (got == 2 and '"steps"' in text) or "step" in text else "hour 9 not read"

    return Run(rp("analyze", "--db", db, "--json", *args), db=db, check=check)


@case("attach", "partition key naming a column (replica=)", "silently replaced")
def _key_column(tmp: Path, url: str) -> Run:
    root = tmp / "traces"
    d = root / "replica=zz"
    d.mkdir(parents=True)
    duckdb.connect().execute(
        f"copy (select * from read_json_auto('{INCIDENT}/engine.jsonl')) to '{d}/p.parquet'"
        " (format parquet)"
    )
    db = tmp / "a.duckdb"
    quiet("ingest", INCIDENT / "proxy.jsonl", "--db", db)
    return Run(rp("ingest", "--attach", f"{root}/**/*.parquet", "--db", db), db=db)


@case("attach", "partition key naming a column (t=)", "silently replaced")
def _key_column_t(tmp: Path, url: str) -> Run:
    root = tmp / "traces"
    d = root / "t=5"
    d.mkdir(parents=True)
    duckdb.connect().execute(
        f"copy (select * exclude(replica) from read_json_auto('{INCIDENT}/engine.jsonl'))"
        f" to '{d}/p.parquet' (format parquet)"
    )
    db = tmp / "a.duckdb"
    quiet("ingest", INCIDENT / "proxy.jsonl", "--db", db)
    return Run(rp("ingest", "--attach", f"{root}/**/*.parquet", "--db", db), db=db)


@case("attach", "type drift: t as text in one partition", "traceback")
def _drift(tmp: Path, url: str) -> Run:
    root = engine_parts(tmp)
    f = sorted(root.rglob("*.parquet"))[0]
    duckdb.connect().execute(
        f"copy (select * replace (cast(t as varchar) as t) from read_parquet('{f}', hive_partitioning=false)) to '{tmp}/x.parquet'"
        " (format parquet)"
    )
    shutil.move(tmp / "x.parquet", f)
    db = tmp / "a.duckdb"
    quiet("ingest", INCIDENT / "proxy.jsonl", "--db", db)
    return Run(rp("ingest", "--attach", f"{root}/**/*.parquet", "--db", db), db=db)


@case("attach", "type drift: step DOUBLE in one partition, BIGINT in the other")
def _drift_num(tmp: Path, url: str) -> Run:
    root = engine_parts(tmp)
    f = sorted(root.rglob("*.parquet"))[0]
    duckdb.connect().execute(
        f"copy (select * replace (cast(step as double) as step) from read_parquet('{f}', hive_partitioning=false)) to"
        f" '{tmp}/x.parquet' (format parquet)"
    )
    shutil.move(tmp / "x.parquet", f)
    db = tmp / "a.duckdb"
    quiet("ingest", INCIDENT / "proxy.jsonl", "--db", db)
    return Run(rp("ingest", "--attach", f"{root}/**/*.parquet", "--db", db), db=db)


@case("attach", "times in milliseconds in one partition", "committed")
def _attach_ms(tmp: Path, url: str) -> Run:
    root = engine_parts(tmp)
    f = sorted(root.rglob("*.parquet"))[0]
    duckdb.connect().execute(
        f"copy (select * replace (t * 1000 as t) from read_parquet('{f}', hive_partitioning=false)) to '{tmp}/x.parquet'"
        " (format parquet)"
    )
    shutil.move(tmp / "x.parquet", f)
    db = tmp / "a.duckdb"
    quiet("ingest", INCIDENT / "proxy.jsonl", "--db", db)
    return Run(rp("ingest", "--attach", f"{root}/**/*.parquet", "--db", db), db=db)


@case("attach", "time_t overflow (t = 1e19) in one partition", "committed")
def _attach_overflow(tmp: Path, url: str) -> Run:
    root = engine_parts(tmp)
    f = sorted(root.rglob("*.parquet"))[0]
    duckdb.connect().execute(
        f"copy (select * replace (1e19 as t) from read_parquet('{f}', hive_partitioning=false)) to '{tmp}/x.parquet'"
        " (format parquet)"
    )
    shutil.move(tmp / "x.parquet", f)
    db = tmp / "a.duckdb"
    quiet("ingest", INCIDENT / "proxy.jsonl", "--db", db)
    return Run(rp("ingest", "--attach", f"{root}/**/*.parquet", "--db", db), db=db)


# --- all or nothing: every adapter ------------------------------------------------------------


def _adapter_cases() -> None:
    from relplan.ingest import registry

    flags = {o.field: o.flag for o in registry.input_options().values()}
    for name, a in registry.adapters().items():
        if not a.examples:
            continue
        ex = a.examples[0]
        if "map_file" in ex.options:
            # --map reads every file of one ingest with the mapping, the late proxy log too;
            # tests/test_failed_ingest_stores_nothing.py checks the mapped format on its own
            # bad line instead
            continue
        opts: list[str] = []
        for k, v in ex.options.items():
            shown = str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
            opts += [flags[k], shown]
        for bad, value in (("ms", 1000.0), ("time_t overflow", 1e19 / T0)):

            def build(
                tmp: Path, url: str, ex: Any = ex, opts: list[str] = opts, v: float = value
            ) -> Run:
                db = base_db(tmp)
                recs = proxy_lines(4, prefix="late")
                recs[3]["t_sent"] = (T0 + 3) * v
                recs[3]["t_end"] = (T0 + 4) * v
                late = jsonl(tmp / "late.jsonl", recs)
                return Run(rp("ingest", ROOT / ex.path, late, "--db", db, *opts), db=db)

            case("all or nothing", f"{name} + a proxy log with {bad}", "committed")(build)


_adapter_cases()


@case("all or nothing", "proxy log, t_sent in ms (year 57883) alone", "committed")
def _ms_alone(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    recs = proxy_lines(4, prefix="late")
    for r in recs:
        r["t_sent"] *= 1000
        r["t_end"] *= 1000
    return Run(rp("ingest", jsonl(tmp / "late.jsonl", recs), "--db", db), db=db)


@case("all or nothing", "engine log, t = 2^63 (time_t overflow)", "committed")
def _engine_overflow(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    p = tmp / "e.jsonl"
    p.write_text(
        '{"type":"event","t":9223372036854775807,"execution_id":"z1","event":"arrived",'
        '"prompt_tokens":5,"replica":"r9"}\n',
        encoding="utf-8",
    )
    return Run(rp("ingest", p, "--db", db), db=db)


@case("all or nothing", "kube events with a year-57883 time after good ones", "committed")
def _kube_ms(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    evs = json.loads((PUB / "kube_event_v1_started_knative_docs.json").read_text())
    evs = evs if isinstance(evs, list) else [evs]
    good = json.loads(json.dumps(evs[0]))
    bad = json.loads(json.dumps(evs[0]))
    bad["lastTimestamp"] = "57883-01-01T00:00:00Z"
    bad["metadata"]["uid"] = "x2"
    doc = {"apiVersion": "v1", "kind": "List", "items": [good, bad]}
    p = tmp / "ev.json"
    p.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    return Run(rp("ingest", p, "--db", db), db=db)


@case("all or nothing", "disk full while committing (RLIMIT_FSIZE 3 MB)", "traceback")
def _disk_full(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    return Run(
        rp("ingest", ROOT / "sample_data/pulse-retry-cancel", "--db", db),
        db=db,
        prlimit=[f"--fsize={3 * 1024 * 1024}"],
    )


# --- time rules -------------------------------------------------------------------------------


def _kube_at(stamp: str) -> Callable[[Path, str], Run]:
    def build(tmp: Path, url: str) -> Run:
        db = base_db(tmp)
        ev = json.loads((PUB / "kube_event_v1_started_knative_docs.json").read_text())
        ev = ev[0] if isinstance(ev, list) else ev
        ev["firstTimestamp"] = ev["lastTimestamp"] = ev["metadata"]["creationTimestamp"] = stamp
        p = tmp / "ev.json"
        p.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": [ev]}, indent=2))

        def check() -> str | None:
            r = q(db, "select min(t), max(t) from kube_events")
            return f"stored kube event times {r}"

        return Run(rp("ingest", p, "--db", db), db=db, check=check)

    return build


case("time rules", "kube event in year 1", "stored")(_kube_at("0001-01-01T00:00:00Z"))
case("time rules", "kube event in year 9999", "stored")(_kube_at("9999-12-31T23:59:59Z"))


@case("time rules", "exposition --at 2200-01-01", "stored")
def _at_2200(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    return Run(
        rp(
            "ingest",
            PUB / "vllm_metrics_v1_prodstack318.prom",
            "--at",
            "2200-01-01T00:00:00Z",
            "--db",
            db,
        ),
        db=db,
        check=lambda: "stored samples in 2200",
    )


@case("time rules", "exposition --at -5 (negative)", "stored")
def _at_neg(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    return Run(
        rp("ingest", PUB / "vllm_metrics_v1_prodstack318.prom", "--at=-5", "--db", db),
        db=db,
        check=lambda: "stored samples at -5",
    )


@case("time rules", "exposition --at in ms", "stored")
def _at_ms(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    return Run(
        rp(
            "ingest",
            PUB / "vllm_metrics_v1_prodstack318.prom",
            "--at",
            str(int(T0 * 1000)),
            "--db",
            db,
        ),
        db=db,
        check=lambda: "stored samples in ms",
    )


@case("time rules", "analyze --from 2200 / --to 2201", "")
def _from_2200(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    return Run(
        rp("analyze", "--db", db, "--from", "2200-01-01T00:00:00Z", "--to", "2201-01-01T00:00:00Z"),
        db=db,
    )


@case("time rules", "analyze --from -5 --to -1 (negative seconds from t0)", "")
def _from_neg(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    return Run(rp("analyze", "--db", db, "--from=-5", "--to=-1"), db=db)


@case("time rules", "proxy log with negative times", "stored")
def _neg_times(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    recs = proxy_lines(3, t0=-100.0, prefix="n")
    return Run(
        rp("ingest", jsonl(tmp / "neg.jsonl", recs), "--db", db),
        db=db,
        check=lambda: "stored negative times",
    )


def _vllm_span(sp: dict[str, Any]) -> None:
    """The published span renamed llm_request with vLLM's attributes (as
    tests/test_ingest_otel.py does)."""
    sp["name"] = "llm_request"
    sp["attributes"] = [
        {"key": "gen_ai.request.id", "value": {"stringValue": "chatcmpl-abc"}},
        {"key": "gen_ai.latency.time_in_queue", "value": {"doubleValue": 0.125}},
        {"key": "gen_ai.latency.time_to_first_token", "value": {"doubleValue": 0.5}},
        {"key": "gen_ai.latency.e2e", "value": {"doubleValue": 1.0}},
        {"key": "gen_ai.usage.prompt_tokens", "value": {"intValue": 7}},
    ]


def _otlp(unit: float) -> Callable[[Path, str], Run]:
    def build(tmp: Path, url: str) -> Run:
        db = base_db(tmp)
        doc = json.loads((PUB / "otlp_json_trace_example_opentelemetry_proto.json").read_text())
        sp = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
        sp["startTimeUnixNano"] = int(1544712660 * unit)
        sp["endTimeUnixNano"] = int(1544712661 * unit)
        _vllm_span(sp)
        p = tmp / "t.json"
        p.write_text(json.dumps(doc))

        def check() -> str | None:
            r = q(
                db,
                "select min(t) from events where source_id = (select max(source_id) from sources)",
            )
            ok = r and r[0][0] is not None and abs(r[0][0] - 1544712660) < 10
            return None if ok else f"stored at {r}"

        return Run(rp("ingest", p, "--db", db), db=db, check=check)

    return build


case("time rules", "OTLP start in ms", "stored as 1970")(_otlp(1e3))
case("time rules", "OTLP start in µs", "")(_otlp(1e6))
case("time rules", "OTLP start in s", "")(_otlp(1.0))


@case("time rules", "vLLM log crossing New Year (--year 2025)", "gains a year")
def _new_year(tmp: Path, url: str) -> Run:
    db = tmp / "v.duckdb"
    lines = [
        "INFO 12-31 23:59:58 [logger.py:49] Received request chatcmpl-a1: params: "
        "SamplingParams(n=1, max_tokens=64), lora_request: None.",
        "INFO 12-31 23:59:59 [async_llm.py:382] Added request chatcmpl-a1.",
        "INFO 01-01 00:00:01 [logger.py:49] Received request chatcmpl-a2: params: "
        "SamplingParams(n=1, max_tokens=64), lora_request: None.",
        "INFO 01-01 00:00:02 [async_llm.py:382] Added request chatcmpl-a2.",
    ]
    p = tmp / "vllm.log"
    p.write_text("\n".join(lines) + "\n")

    def check() -> str | None:
        r = q(db, "select min(t), max(t) from events")
        lo, hi = r[0]
        if lo is None:
            return "no events"
        # 2025-12-31T23:59:58Z = 1767225598; 2026-01-01T00:00:02Z = 1767225602
        return None if abs(lo - 1767225598) < 1 and abs(hi - 1767225601) < 1 else f"times {r}"

    return Run(rp("ingest", p, "--year", "2025", "--db", db), check=check)


@case("time rules", "vLLM log crossing New Year (year from mtime in the new year)", "gains a year")
def _new_year_mtime(tmp: Path, url: str) -> Run:
    db = tmp / "v.duckdb"
    lines = [
        "INFO 12-31 23:59:58 [logger.py:49] Received request chatcmpl-a1: params: "
        "SamplingParams(n=1, max_tokens=64), lora_request: None.",
        "INFO 01-01 00:00:01 [logger.py:49] Received request chatcmpl-a2: params: "
        "SamplingParams(n=1, max_tokens=64), lora_request: None.",
    ]
    p = tmp / "vllm.log"
    p.write_text("\n".join(lines) + "\n")
    m = 1767225700  # 2026-01-01T00:01:40Z, just after the last line
    os.utime(p, (m, m))

    def check() -> str | None:
        lo, hi = q(db, "select min(t), max(t) from events")[0]
        return (
            None
            if lo is not None and abs(lo - 1767225598) < 1 and abs(hi - 1767225601) < 1
            else f"times {lo}, {hi}"
        )

    return Run(rp("ingest", p, "--db", db), check=check)


def _litellm(retries: int) -> Callable[[Path, str], Run]:
    def build(tmp: Path, url: str) -> Run:
        db = base_db(tmp)
        doc = json.loads((PUB / "litellm_spend_logs_payload_fixture.json").read_text())
        meta = json.loads(doc["metadata"])
        meta["attempted_retries"] = retries
        doc["metadata"] = json.dumps(meta)
        p = tmp / "spend.json"
        p.write_text(json.dumps(doc))
        return Run(rp("ingest", p, "--db", db), db=db, check=lambda: f"stored {retries} retries")

    return build


case("time rules", "LiteLLM attempted_retries = -3", "stored")(_litellm(-3))
case("time rules", "LiteLLM attempted_retries = 10^9", "OOM")(_litellm(10**9))


@case("time rules", "Envoy upstream_request_attempt_count = 10^9", "OOM")
def _envoy_1e9(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    line = json.loads((ROOT / "tests/data/ingest/adapters/envoy.jsonl").read_text().splitlines()[0])
    line["upstream_request_attempt_count"] = 10**9
    line["x-request-id"] = "zz"
    p = jsonl(tmp / "envoy.jsonl", [line])
    return Run(rp("ingest", p, "--db", db), db=db, check=lambda: "stored 10^9 tries")


@case("time rules", "file-name time with offset +99:99", "traceback")
def _fname_tz(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    p = tmp / "metrics-2025-11-30T00:00:00+99:99.prom"
    shutil.copy(PUB / "vllm_metrics_v1_prodstack318.prom", p)
    return Run(rp("ingest", p, "--db", db), db=db)


@case("time rules", "file-name time in 2200", "")
def _fname_2200(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    p = tmp / "metrics-2200-01-01T00:00:00Z.prom"
    shutil.copy(PUB / "vllm_metrics_v1_prodstack318.prom", p)
    return Run(rp("ingest", p, "--db", db), db=db, check=lambda: "stored at 2200")


def _mapping(toml: str, log: str, name: str = "g.log") -> Callable[[Path, str], Run]:
    def build(tmp: Path, url: str) -> Run:
        db = base_db(tmp)
        m = tmp / "map.toml"
        m.write_text(toml)
        p = tmp / name
        p.write_text(log)
        return Run(rp("ingest", p, "--format", "mapped", "--map", m, "--db", db), db=db, limit_s=30)

    return build


_CANON = (
    'format = "jsonl"\n[fields]\ncall_id = "call"\nstart = "sent"\nend = "ended"\n'
    'status = "http"\nprompt_tokens = "p"\n[time]\nformat = "{fmt}"\n'
)
case("time rules", "mapping epoch_s given milliseconds", "stored")(
    _mapping(
        _CANON.format(fmt="epoch_s"),
        json.dumps({"call": "a", "sent": T0 * 1000, "ended": T0 * 1000 + 5, "http": 200}) + "\n",
    )
)
case("time rules", "mapping epoch_ms given seconds", "stored as 1970")(
    _mapping(
        _CANON.format(fmt="epoch_ms"),
        json.dumps({"call": "a", "sent": T0, "ended": T0 + 5, "http": 200}) + "\n",
    )
)
case("time rules", "mapping strptime giving year 1900", "stored")(
    _mapping(
        _CANON.format(fmt="%H:%M:%S"),
        json.dumps({"call": "a", "sent": "10:00:00", "ended": "10:00:05", "http": 200}) + "\n",
    )
)


@case("time rules", "scenario with a negative phase", "")
def _scen_neg(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "simulate",
            "run",
            "pulse-retry-cancel",
            "--out",
            tmp / "o",
            "--set",
            "workload.phases=[{name='base',seconds=-5,rate_x=0.6}]",
        )
    )


# --- bounded work -----------------------------------------------------------------------------


@case("bounded", "40,000 kube events", "over 300 s")
def _kube_40k(tmp: Path, url: str) -> Run:
    ev = json.loads((PUB / "kube_event_v1_started_knative_docs.json").read_text())
    ev = ev[0] if isinstance(ev, list) else ev
    items = []
    for i in range(40_000):
        e = json.loads(json.dumps(ev))
        e["metadata"]["uid"] = f"u{i}"
        e["metadata"]["name"] = f"busybox.{i}"
        items.append(e)
    p = tmp / "ev.json"
    p.write_text(json.dumps({"kind": "List", "apiVersion": "v1", "items": items}, indent=2))
    return Run(rp("ingest", p, "--db", tmp / "k.duckdb"), limit_s=120)


case("bounded", "mapping regex (a+)+$ on 'aaaa…!' lines", "hang")(
    _mapping(
        'format = "regex"\npattern = \'^(?P<call>(a+)+)$\'\n[fields]\ncall_id = "call"\n'
        'start = "call"\nend = "call"\n[time]\nformat = "epoch_s"\n',
        ("a" * 5000 + "!\n") * 200,
    )
)
case("bounded", "mapping regex with a backreference", "")(
    _mapping(
        'format = "regex"\npattern = \'^(?P<call>a+)\\1$\'\n[fields]\ncall_id = "call"\n'
        'start = "call"\nend = "call"\n[time]\nformat = "epoch_s"\n',
        "aa\n",
    )
)


@case("bounded", "ingest --match (a+)+$ on a live pull", "")
def _match_redos(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "ingest",
            "--prometheus-url",
            url,
            "--match",
            "(a+)+$",
            "--start",
            str(T0),
            "--end",
            str(T0 + 60),
            "--db",
            tmp / "p.duckdb",
        )
    )


@case("bounded", "record against 1 byte/s (--timeout 3s, --for 4s)", "hang")
def _record_slow(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "record",
            "--url",
            f"{url}/metrics/slow",
            "--out",
            tmp / "m.txt",
            "--every",
            "1s",
            "--for",
            "4s",
            "--timeout",
            "3s",
        ),
        limit_s=60,
    )


@case("bounded", "record, error body trickling past the deadline", "read after the deadline")
def _record_slow_err(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "record",
            "--url",
            f"{url}/metrics/slow-error",
            "--out",
            tmp / "m.txt",
            "--every",
            "1s",
            "--for",
            "4s",
            "--timeout",
            "3s",
        ),
        limit_s=60,
    )


@case("bounded", "record, endless body", "OOM")
def _record_endless(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "record",
            "--url",
            f"{url}/metrics/endless",
            "--out",
            tmp / "m.txt",
            "--every",
            "1s",
            "--for",
            "4s",
            "--timeout",
            "30s",
        ),
        limit_s=90,
    )


@case("bounded", "record, endless error body", "")
def _record_endless_err(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "record",
            "--url",
            f"{url}/metrics/endless-error",
            "--out",
            tmp / "m.txt",
            "--every",
            "1s",
            "--for",
            "4s",
            "--timeout",
            "30s",
        ),
        limit_s=90,
    )


@case("bounded", "live pull against 1 byte/s (--timeout 5s)", "hang")
def _pull_slow(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "ingest",
            "--prometheus-url",
            f"{url}/slow",
            "--start",
            str(T0),
            "--end",
            str(T0 + 60),
            "--timeout",
            "5s",
            "--db",
            tmp / "p.duckdb",
        ),
        limit_s=60,
    )


@case("bounded", "live pull, error body trickling past the deadline", "read after the deadline")
def _pull_slow_err(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "ingest",
            "--prometheus-url",
            f"{url}/slow-error",
            "--start",
            str(T0),
            "--end",
            str(T0 + 60),
            "--timeout",
            "5s",
            "--db",
            tmp / "p.duckdb",
        ),
        limit_s=60,
    )


@case("bounded", "live pull, endless body", "OOM")
def _pull_endless(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "ingest",
            "--prometheus-url",
            f"{url}/endless",
            "--start",
            str(T0),
            "--end",
            str(T0 + 60),
            "--timeout",
            "60s",
            "--db",
            tmp / "p.duckdb",
        ),
        limit_s=120,
    )


@case("bounded", "live pull, endless error body", "")
def _pull_endless_err(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "ingest",
            "--prometheus-url",
            f"{url}/endless-error",
            "--start",
            str(T0),
            "--end",
            str(T0 + 60),
            "--timeout",
            "60s",
            "--db",
            tmp / "p.duckdb",
        ),
        limit_s=120,
    )


@case("bounded", "a FIFO given as the input", "hang")
def _fifo(tmp: Path, url: str) -> Run:
    f = tmp / "in.jsonl"
    os.mkfifo(f)
    db = base_db(tmp)
    return Run(rp("ingest", f, "--db", db), db=db, limit_s=30)


@case("bounded", "a FIFO inside an input folder", "hang")
def _fifo_dir(tmp: Path, url: str) -> Run:
    d = tmp / "in"
    d.mkdir()
    shutil.copy(INCIDENT / "proxy.jsonl", d / "proxy.jsonl")
    os.mkfifo(d / "x.jsonl")
    return Run(rp("ingest", d, "--db", tmp / "n.duckdb"), limit_s=30)


@case("bounded", "/dev/zero as the input", "hang")
def _devzero(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    return Run(rp("ingest", "/dev/zero", "--db", db), db=db, limit_s=30)


@case("bounded", "/dev/zero as --format jsonl", "hang")
def _devzero_fmt(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    return Run(rp("ingest", "/dev/zero", "--format", "jsonl", "--db", db), db=db, limit_s=30)


@case("bounded", "/dev/zero as the mapping file", "hang")
def _devzero_map(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    p = jsonl(tmp / "g.jsonl", proxy_lines(2))
    return Run(
        rp("ingest", p, "--format", "mapped", "--map", "/dev/zero", "--db", db), db=db, limit_s=30
    )


@case("bounded", "/dev/zero as the scenario file", "hang")
def _devzero_scen(tmp: Path, url: str) -> Run:
    return Run(rp("simulate", "run", "/dev/zero", "--out", tmp / "o"), limit_s=30)


def _bomb(name: str, head: bytes, fill: bytes, gb: float) -> Callable[[Path, str], Run]:
    def build(tmp: Path, url: str) -> Run:
        db = base_db(tmp)
        p = tmp / name
        chunk = fill * (1 << 20)
        with gzip.open(p, "wb", compresslevel=9) as f:
            f.write(head)
            for _ in range(int(gb * 1024)):
                f.write(chunk)
        return Run(rp("ingest", p, "--db", db), db=db, limit_s=120)

    return build


case("bounded", "gzip bomb: 2 GB of one JSON line", "OOM")(
    _bomb("proxy.jsonl.gz", b'{"call_id": "', b"a", 2.0)
)
case("bounded", "gzip bomb: 2 GB of blank lines", "OOM")(
    _bomb("proxy.jsonl.gz", json.dumps(proxy_lines(1)[0]).encode() + b"\n", b"\n", 2.0)
)
case("bounded", "gzip bomb: query_range of 2 GB spaces", "OOM")(
    _bomb("q.json.gz", b'{"status": "success", "data": ', b" ", 2.0)
)
case("bounded", "gzip bomb: OTLP document of 2 GB spaces", "OOM")(
    _bomb("t.json.gz", b'{"resourceSpans": [', b" ", 2.0)
)


@case("bounded", "a single 287 MB OTLP line", "OOM")
def _otlp_287(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    doc = json.loads((PUB / "otlp_json_trace_example_opentelemetry_proto.json").read_text())
    sp = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    sp["startTimeUnixNano"] = int(T0 * 1e9)
    sp["endTimeUnixNano"] = int((T0 + 1) * 1e9)
    _vllm_span(sp)
    one = json.dumps(sp)
    n = 287_000_000 // len(one)
    p = tmp / "t.json"
    with p.open("w") as f:
        f.write('{"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [')
        for i in range(n):
            f.write(("," if i else "") + one.replace("EEE19B7EC3C1B174", f"{i:016X}"))
        f.write("]}]}]}")
    return Run(rp("ingest", p, "--db", db), db=db, limit_s=300)


@case("bounded", "a 287 MB proxy JSON Lines line", "")
def _jsonl_287(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    p = tmp / "p.jsonl"
    with p.open("w") as f:
        f.write('{"call_id": "' + "a" * 287_000_000 + '"}\n')
    return Run(rp("ingest", p, "--db", db), db=db, limit_s=120)


@case("bounded", "--db /dev/zero", "")
def _db_zero(tmp: Path, url: str) -> Run:
    return Run(rp("analyze", "--db", "/dev/zero"), limit_s=30)


@case("bounded", "--db a FIFO", "hang")
def _db_fifo(tmp: Path, url: str) -> Run:
    f = tmp / "w.duckdb"
    os.mkfifo(f)
    return Run(rp("ingest", INCIDENT / "proxy.jsonl", "--db", f), limit_s=30)


def _sim(setting: str) -> Callable[[Path, str], Run]:
    def build(tmp: Path, url: str) -> Run:
        return Run(
            rp("simulate", "run", "pulse-retry-cancel", "--out", tmp / "o", "--set", setting),
            limit_s=120,
        )

    return build


case("bounded", "simulate phase of 1e9 s", "OOM")(
    _sim("workload.phases=[{name='base',seconds=1e9,rate_x=0.6}]")
)
case("bounded", "simulate phase of inf s", "OOM")(
    _sim("workload.phases=[{name='base',seconds=inf,rate_x=0.6}]")
)
case("bounded", "simulate phase of nan s", "")(
    _sim("workload.phases=[{name='base',seconds=nan,rate_x=0.6}]")
)
case("bounded", "simulate block_size 1e9", "OOM")(_sim("engine.block_size=1000000000"))
case("bounded", "simulate 200 M calls", "OOM")(
    _sim("workload.phases=[{name='base',seconds=2000000,rate_per_s=100}]")
)
case("bounded", "simulate rate_x 1e12", "")(
    _sim("workload.phases=[{name='base',seconds=100,rate_x=1e12}]")
)
case("bounded", "simulate max_retries 10^9", "")(_sim("client.max_retries=1000000000"))


@case("bounded", "whatif on calls five years apart", "OOM")
def _whatif_5y(tmp: Path, url: str) -> Run:
    db = tmp / "w.duckdb"
    recs = proxy_lines(20)
    later = proxy_lines(20, t0=T0 + 5 * 365 * 86400, prefix="d")
    p = jsonl(tmp / "p.jsonl", recs + later)
    quiet("ingest", p, "--db", db)
    return Run(rp("whatif", "run", "--db", db, "--seeds", "1"), db=db, limit_s=180)


# --- tracebacks -------------------------------------------------------------------------------


@case("tracebacks", "OTLP start 2^64+1 ns", "Arrow overflow")
def _otlp_64(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    doc = json.loads((PUB / "otlp_json_trace_example_opentelemetry_proto.json").read_text())
    sp = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    _vllm_span(sp)
    sp["startTimeUnixNano"] = 2**64 + 1
    p = tmp / "t.json"
    p.write_text(json.dumps(doc))
    return Run(rp("ingest", p, "--db", db), db=db)


@case("tracebacks", "OTLP int attribute 2^64 (token count)", "Arrow overflow")
def _otlp_attr(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    doc = json.loads((PUB / "otlp_json_trace_example_opentelemetry_proto.json").read_text())
    sp = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    _vllm_span(sp)
    sp["attributes"][-1] = {"key": "gen_ai.usage.prompt_tokens", "value": {"intValue": str(2**64)}}
    p = tmp / "t.json"
    p.write_text(json.dumps(doc))
    return Run(rp("ingest", p, "--db", db), db=db)


@case("tracebacks", "LiteLLM prompt_tokens 2^64", "Arrow overflow")
def _litellm_64(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    doc = json.loads((PUB / "litellm_spend_logs_payload_fixture.json").read_text())
    doc["prompt_tokens"] = 2**64
    doc["total_tokens"] = 2**64
    p = tmp / "spend.json"
    p.write_text(json.dumps(doc))
    return Run(rp("ingest", p, "--db", db), db=db)


@case("tracebacks", "Kong latencies 2^64", "Arrow overflow")
def _kong_64(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    doc = json.loads((PUB / "kong_http_log_doc_sample_3.7plus.json").read_text())
    doc["latencies"] = dict.fromkeys(doc.get("latencies", {"request": 1}), 2**64)
    doc["started_at"] = 2**64
    p = tmp / "kong.json"
    p.write_text(json.dumps(doc))
    return Run(rp("ingest", p, "--db", db), db=db)


@case("tracebacks", "Kong status 2^64", "Arrow overflow")
def _kong_status(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    doc = json.loads((PUB / "kong_http_log_doc_sample_3.7plus.json").read_text())
    doc["response"]["status"] = 2**64
    p = tmp / "kong.json"
    p.write_text(json.dumps(doc))
    return Run(rp("ingest", p, "--db", db), db=db)


@case("tracebacks", "nginx status and bytes 2^64", "Arrow overflow")
def _nginx_64(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    line = (
        (PUB / "nginx_ingress_upstreaminfo_issue4312_499_retries.log").read_text().splitlines()[0]
    )
    line = line.replace('" 499 0 ', f'" {2**64} {2**64} ').replace(" 6433 ", f" {2**64} ")
    p = tmp / "access.log"
    p.write_text(line + "\n")
    return Run(rp("ingest", p, "--format", "nginx", "--db", db), db=db)


@case("tracebacks", "nginx upstream status 2^64", "Arrow overflow")
def _nginx_up(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    line = (
        (PUB / "nginx_ingress_upstreaminfo_issue4312_499_retries.log").read_text().splitlines()[0]
    )
    line = line.replace(
        "504, 504, 504, 504, 504, 504, 504, -", f"{2**64}, 504, 504, 504, 504, 504, 504, -"
    )
    p = tmp / "access.log"
    p.write_text(line + "\n")
    return Run(rp("ingest", p, "--format", "nginx", "--db", db), db=db)


case("tracebacks", "mapping prompt_tokens 2^64", "Arrow overflow")(
    _mapping(
        _CANON.format(fmt="epoch_s"),
        json.dumps({"call": "a", "sent": T0, "ended": T0 + 5, "http": 200, "p": 2**64}) + "\n",
    )
)
case("tracebacks", "mapping status 2^64 and start 2^64", "Arrow overflow")(
    _mapping(
        _CANON.format(fmt="epoch_s"),
        json.dumps({"call": "a", "sent": 2**64, "ended": 2**64, "http": 2**64}) + "\n",
    )
)
case("tracebacks", "mapping duration 2^64 ns", "Arrow overflow")(
    _mapping(
        'format = "jsonl"\n[fields]\ncall_id = "call"\nstart = "sent"\nduration = "d"\n'
        '[time]\nformat = "epoch_s"\nduration_unit = "ns"\n',
        json.dumps({"call": "a", "sent": T0, "d": 2**64}) + "\n",
    )
)


@case("tracebacks", "Envoy duration 2^64", "Arrow overflow")
def _envoy_64(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    line = json.loads((ROOT / "tests/data/ingest/adapters/envoy.jsonl").read_text().splitlines()[0])
    line["duration"] = 2**64
    line["response_code"] = 2**64
    return Run(rp("ingest", jsonl(tmp / "envoy.jsonl", [line]), "--db", db), db=db)


@case("tracebacks", "proxy JSONL prompt_tokens of 5,000 digits", "4,300-digit limit")
def _digits(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    p = tmp / "p.jsonl"
    r = proxy_lines(1, prefix="big")[0]
    p.write_text(
        json.dumps(r).replace('"prompt_tokens": 10', '"prompt_tokens": ' + "9" * 5000) + "\n"
    )
    return Run(rp("ingest", p, "--db", db), db=db)


@case("tracebacks", "Envoy attempt count of 5,000 digits", "4,300-digit limit")
def _digits_envoy(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    line = (ROOT / "tests/data/ingest/adapters/envoy.jsonl").read_text().splitlines()[0]
    line = line.replace(
        '"upstream_request_attempt_count":1', '"upstream_request_attempt_count":' + "9" * 5000
    )
    p = tmp / "envoy.jsonl"
    p.write_text(line + "\n")
    return Run(rp("ingest", p, "--db", db), db=db)


@case("tracebacks", "kube event count of 5,000 digits", "4,300-digit limit")
def _digits_kube(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    text = (PUB / "kube_event_v1_started_knative_docs.json").read_text()
    p = tmp / "ev.json"
    p.write_text(text.replace('"count": 1', '"count": ' + "9" * 5000))
    return Run(rp("ingest", p, "--db", db), db=db)


@case("tracebacks", "query_range value of 5,000 digits", "4,300-digit limit")
def _digits_qr(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    doc = {
        "status": "success",
        "data": {
            "resultType": "matrix",
            "result": [
                {"metric": {"__name__": "vllm:num_requests_waiting"}, "values": [[T0, "1"]]}
            ],
        },
    }
    text = json.dumps(doc).replace(f"[{T0}, ", "[" + "9" * 5000 + ", ")
    p = tmp / "q.json"
    p.write_text(text)
    return Run(rp("ingest", p, "--db", db), db=db)


@case("tracebacks", "live answer with a 5,000-digit number", "4,300-digit limit")
def _digits_live(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "ingest",
            "--prometheus-url",
            f"{url}/huge-int",
            "--start",
            str(T0),
            "--end",
            str(T0 + 60),
            "--db",
            tmp / "p.duckdb",
        )
    )


@case("tracebacks", "scenario TOML nested 100,000 deep", "RecursionError")
def _deep_toml(tmp: Path, url: str) -> Run:
    p = tmp / "s.toml"
    p.write_text("x = " + "[" * 100_000 + "]" * 100_000 + "\n")
    return Run(rp("simulate", "run", p, "--out", tmp / "o"))


@case("tracebacks", "mapping TOML nested 100,000 deep", "RecursionError")
def _deep_map(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    m = tmp / "map.toml"
    m.write_text("x = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n")
    p = jsonl(tmp / "g.jsonl", proxy_lines(2))
    return Run(rp("ingest", p, "--format", "mapped", "--map", m, "--db", db), db=db)


@case("tracebacks", "live answer nested 100,000 deep", "RecursionError")
def _deep_live(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "ingest",
            "--prometheus-url",
            f"{url}/deep",
            "--start",
            str(T0),
            "--end",
            str(T0 + 60),
            "--db",
            tmp / "p.duckdb",
        )
    )


@case("tracebacks", "JSON document nested 100,000 deep (query_range file)", "RecursionError")
def _deep_file(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    p = tmp / "q.json"
    p.write_text('{"status":"success","data":' + "[" * 100_000 + "]" * 100_000 + "}")
    return Run(rp("ingest", p, "--db", db), db=db)


@case("tracebacks", "JSON Lines record nested 100,000 deep", "RecursionError")
def _deep_line(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    p = tmp / "p.jsonl"
    r = json.dumps(proxy_lines(1, prefix="deep")[0])
    p.write_text(r[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    return Run(rp("ingest", p, "--db", db), db=db)


@case("tracebacks", "whatif/simulate engine profile nested deep", "RecursionError")
def _deep_profile(tmp: Path, url: str) -> Run:
    p = tmp / "s.toml"
    p.write_text('name = "x"\n[engine]\nprofile = "' + str(tmp / "prof.json") + '"\n')
    (tmp / "prof.json").write_text("[" * 100_000 + "]" * 100_000)
    return Run(rp("simulate", "run", p, "--out", tmp / "o"))


case("tracebacks", "mapping strptime %Q (bad directive)", "traceback")(
    _mapping(
        _CANON.format(fmt="%Q %H"),
        json.dumps({"call": "a", "sent": "x 1", "ended": "x 2", "http": 200}) + "\n",
    )
)
case("tracebacks", "mapping strptime with %z", "traceback")(
    _mapping(
        _CANON.format(fmt="%Y-%m-%dT%H:%M:%S%z"),
        json.dumps(
            {
                "call": "a",
                "sent": "2025-11-30T00:00:00+0100",
                "ended": "2025-11-30T00:00:01+0100",
                "http": 200,
            }
        )
        + "\n",
    )
)
case("tracebacks", "mapping strptime ending in a lone %", "traceback")(
    _mapping(
        _CANON.format(fmt="%Y %"),
        json.dumps({"call": "a", "sent": "2025 %", "ended": "2025 %", "http": 200}) + "\n",
    )
)


@case("tracebacks", "input file name not UTF-8", "traceback")
def _latin1(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    p = Path(os.fsdecode(bytes(tmp) + b"/caf\xe9.jsonl"))
    shutil.copy(INCIDENT / "proxy.jsonl", p)
    return Run(rp("ingest", p, "--db", db), db=db)


@case("tracebacks", "--db path not UTF-8", "traceback")
def _latin1_db(tmp: Path, url: str) -> Run:
    p = Path(os.fsdecode(bytes(tmp) + b"/caf\xe9.duckdb"))
    return Run(rp("ingest", INCIDENT / "proxy.jsonl", "--db", p))


@case("tracebacks", "--map path not UTF-8", "")
def _latin1_map(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    m = Path(os.fsdecode(bytes(tmp) + b"/m\xe9.toml"))
    m.write_text(_CANON.format(fmt="epoch_s"))
    p = jsonl(tmp / "g.jsonl", [{"call": "a", "sent": T0, "ended": T0 + 1, "http": 200}])
    return Run(rp("ingest", p, "--format", "mapped", "--map", m, "--db", db), db=db)


@case("tracebacks", "scenario path not UTF-8", "")
def _latin1_scen(tmp: Path, url: str) -> Run:
    s = Path(os.fsdecode(bytes(tmp) + b"/s\xe9.toml"))
    s.write_text((ROOT / "relplan/sim/scenarios/pulse-retry-cancel.toml").read_text())
    return Run(
        rp(
            "simulate",
            "run",
            s,
            "--out",
            tmp / "o",
            "--set",
            "workload.phases=[{name='base',seconds=5,rate_x=0.6}]",
        )
    )


@case("tracebacks", "simulate --out path not UTF-8", "")
def _latin1_out(tmp: Path, url: str) -> Run:
    o = Path(os.fsdecode(bytes(tmp) + b"/o\xe9"))
    return Run(
        rp(
            "simulate",
            "run",
            "pulse-retry-cancel",
            "--out",
            o,
            "--set",
            "workload.phases=[{name='base',seconds=5,rate_x=0.6}]",
        )
    )


@case("tracebacks", "record --out path not UTF-8", "")
def _latin1_rec(tmp: Path, url: str) -> Run:
    o = Path(os.fsdecode(bytes(tmp) + b"/m\xe9.txt"))
    return Run(
        rp("record", "--url", f"{url}/metrics/forged", "--out", o, "--every", "1s", "--for", "1s")
    )


@case("tracebacks", "report --out path not UTF-8", "")
def _latin1_report(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    o = Path(os.fsdecode(bytes(tmp) + b"/r\xe9.html"))
    return Run(rp("report", "--db", db, "--out", o), db=db, limit_s=120)


def _damaged(sql: str, command: str = "analyze") -> Callable[[Path, str], Run]:
    def build(tmp: Path, url: str) -> Run:
        db = base_db(tmp)
        con = duckdb.connect(str(db))
        con.execute(sql)
        con.close()
        argv = (
            rp(command, "--db", db)
            if command != "ingest"
            else rp("ingest", jsonl(tmp / "p.jsonl", proxy_lines(2, prefix="z")), "--db", db)
        )
        return Run(argv, db=db)

    return build


case("tracebacks", "older schema: relplan_meta dropped, kube_events dropped (v1)", "missing table")(
    _damaged("drop table kube_events; drop table relplan_meta", "analyze")
)
case("tracebacks", "older schema v1, then ingest (migrates)", "")(
    _damaged("drop table kube_events; drop table relplan_meta", "ingest")
)
case("tracebacks", "schema_version 99", "")(
    _damaged("update relplan_meta set value = '99'", "analyze")
)
case("tracebacks", "schema_version 'x'", "")(
    _damaged("update relplan_meta set value = 'x'", "analyze")
)
case("tracebacks", "table attempts dropped", "traceback")(_damaged("drop table attempts"))
case("tracebacks", "column steps.t_done dropped", "traceback")(
    _damaged("alter table steps drop column t_done")
)
case("tracebacks", "attempts.t_sent as VARCHAR, then ingest", "silent ingest")(
    _damaged("alter table attempts alter t_sent type varchar", "ingest")
)
case("tracebacks", "sources replaced by a view", "traceback")(
    _damaged(
        "create table s2 as select * from sources; drop table sources;"
        " create view sources as select * from s2",
        "inspect",
    )
)


@case("tracebacks", "workspace truncated to half", "traceback")
def _truncated(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    return Run(rp("analyze", "--db", db))


@case("tracebacks", "workspace is a JSON Lines file", "")
def _db_jsonl(tmp: Path, url: str) -> Run:
    db = tmp / "x.duckdb"
    shutil.copy(INCIDENT / "proxy.jsonl", db)
    return Run(rp("ingest", INCIDENT / "engine.jsonl", "--db", db))


@case("tracebacks", "disk full creating a new workspace (RLIMIT_FSIZE 1 MB)", "traceback")
def _disk_full_new(tmp: Path, url: str) -> Run:
    return Run(
        rp("ingest", ROOT / "sample_data/pulse-retry-cancel", "--db", tmp / "n.duckdb"),
        prlimit=[f"--fsize={1024 * 1024}"],
    )


@case("tracebacks", "disk full writing a report (RLIMIT_FSIZE 64 KB)", "")
def _disk_full_report(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    return Run(
        rp("report", "--db", db, "--out", tmp / "r.html"),
        db=db,
        prlimit=[f"--fsize={64 * 1024}"],
        limit_s=120,
    )


@case("tracebacks", "disk full writing simulate output (RLIMIT_FSIZE 64 KB)", "")
def _disk_full_sim(tmp: Path, url: str) -> Run:
    return Run(
        rp("simulate", "run", "pulse-retry-cancel", "--out", tmp / "o"),
        prlimit=[f"--fsize={64 * 1024}"],
        limit_s=120,
    )


@case("tracebacks", "disk full while recording (RLIMIT_FSIZE 100 B)", "")
def _disk_full_record(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "record",
            "--url",
            f"{url}/metrics/forged",
            "--out",
            tmp / "m.txt",
            "--every",
            "1s",
            "--for",
            "2s",
        ),
        prlimit=["--fsize=100"],
    )


# --- record ---------------------------------------------------------------------------------


@case("record", "forged # SCRAPE markers in the body", "samples injected")
def _forged(tmp: Path, url: str) -> Run:
    out = tmp / "m.txt"

    def check() -> str | None:
        marks = [ln for ln in out.read_text().splitlines() if ln.startswith("# SCRAPE")]
        if len(marks) != 2:
            return f"{len(marks)} # SCRAPE lines for 2 scrapes"
        db = tmp / "r.duckdb"
        quiet("ingest", out, "--db", db)
        ts = q(db, "select count(distinct t), min(t) from metric_samples")[0]
        return None if ts[0] == 2 and ts[1] > T0 else f"sample times {ts}"

    return Run(
        rp(
            "record", "--url", f"{url}/metrics/forged", "--out", out, "--every", "1s", "--for", "2s"
        ),
        check=check,
    )


@case("record", "an HTML body", "recorded")
def _html(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "record",
            "--url",
            f"{url}/metrics/html",
            "--out",
            tmp / "m.txt",
            "--every",
            "1s",
            "--for",
            "2s",
        )
    )


@case("record", "a JSON body", "recorded")
def _json_body(tmp: Path, url: str) -> Run:
    return Run(
        rp(
            "record",
            "--url",
            f"{url}/metrics/json-metrics",
            "--out",
            tmp / "m.txt",
            "--every",
            "1s",
            "--for",
            "2s",
        )
    )


@case("record", "--out is an existing workspace", "")
def _rec_over_db(tmp: Path, url: str) -> Run:
    db = base_db(tmp)
    return Run(
        rp("record", "--url", f"{url}/metrics/forged", "--out", db, "--every", "1s", "--for", "1s"),
        db=db,
        check=lambda: "appended a scrape to a DuckDB workspace",
    )


@case("record", "--out is /dev/zero or a FIFO", "")
def _rec_fifo(tmp: Path, url: str) -> Run:
    f = tmp / "fifo"
    os.mkfifo(f)
    return Run(
        rp("record", "--url", f"{url}/metrics/forged", "--out", f, "--every", "1s", "--for", "1s"),
        limit_s=30,
    )


# --- main -------------------------------------------------------------------------------------


def markdown(results: list[dict[str, Any]]) -> str:
    """The two tables of docs/workspace.md: outcomes per surface, and the cases issue 25
    found hanging or out of memory with their wall time and peak memory now."""
    order = ["ok", "clean error", "traceback", "hang", "OOM", "silent change", "other"]
    out = [
        "| surface | cases | " + " | ".join(order) + " |",
        "|---|---:|" + "---:|" * len(order),
    ]
    by: dict[str, dict[str, int]] = {}
    for r in results:
        by.setdefault(r["surface"], dict.fromkeys(order, 0))[r["outcome"]] += 1
    for surface, t in by.items():
        out.append(
            f"| {surface} | {sum(t.values())} | " + " | ".join(str(t[k]) for k in order) + " |"
        )
    out += ["", "| case | issue 25 found | now | wall | peak RSS |", "|---|---|---|---:|---:|"]
    for r in results:
        if r["was"] in ("hang", "OOM", "over 300 s", "read after the deadline"):
            out.append(
                f"| {r['name']} | {r['was']} | {r['outcome']} | {r['wall_s']:.1f} s"
                f" | {r['peak_mb']:.0f} MB |"
            )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", default="", help="only cases whose surface or name contains this")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--rss-limit", type=float, default=4.0, help="GB; over it a case is OOM")
    ap.add_argument("--markdown", type=Path, help="print the docs tables of a --json file")
    args = ap.parse_args()
    if args.markdown:
        print(markdown(json.loads(args.markdown.read_text())))
        return
    todo = [c for c in CASES if args.k.lower() in f"{c.surface} {c.name}".lower()]
    results: list[Result] = []
    with hostile_server() as url:
        for c in todo:
            r = execute(c, url, int(args.rss_limit * 1e9))
            results.append(r)
            print(
                f"{r.surface} | {r.name} | {r.outcome} | {r.wall_s:.1f} s | {r.peak_mb:.0f} MB"
                f" | {r.detail}",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps([r.__dict__ for r in results], indent=1))
    tally: dict[str, dict[str, int]] = {}
    for r in results:
        tally.setdefault(r.surface, {}).setdefault(r.outcome, 0)
        tally[r.surface][r.outcome] += 1
    print("\n| surface | cases | outcomes |\n|---|---|---|")
    for s, t in tally.items():
        print(f"| {s} | {sum(t.values())} | " + ", ".join(f"{k} {v}" for k, v in t.items()) + " |")


if __name__ == "__main__":
    main()
