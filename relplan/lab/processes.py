"""Start the lab's servers as their own process groups, wait for them, stop them all."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from relplan.errors import RelplanError
from relplan.values import fixed

# The servers this process started, kept so they are reaped (and not warned about) here.
_CHILDREN: dict[int, subprocess.Popen[bytes]] = {}


class LabError(RelplanError):
    """A lab server did not start or stop; the message says which and where its log is."""


def open_files_to_hard_limit() -> tuple[int, int]:
    """Raise this process's soft limit on open files to its hard limit, so the servers started
    from it inherit it: a drill with cancellation off keeps hundreds of requests open in nginx
    (two files each) and vLLM, more than a soft limit of 1024 allows. The limits after."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 65536 if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft < want:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def start(args: Sequence[str], log: Path, env: Mapping[str, str] | None = None) -> int:
    """Start a server in its own session (so it outlives this command), output to `log`, with
    the open-files limit raised to the hard limit."""
    open_files_to_hard_limit()
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            list(args),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            env={**os.environ, **(env or {})},
        )
    _CHILDREN[proc.pid] = proc
    return proc.pid


def alive(pid: int) -> bool:
    child = _CHILDREN.get(pid)
    if child is not None:
        return child.poll() is None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of this process still answers kill 0; reap it if so.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return _not_zombie(pid)
    return done == 0


def _stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None if gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()
    except OSError:
        return None


def _not_zombie(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def wait_http(url: str, pid: int, log: Path, what: str, timeout: float) -> None:
    """Poll `url` until it answers 200; fail early when the server process has exited."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            raise LabError(f"{what} exited while starting; see {log}:\n{tail(log)}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise LabError(f"{what} did not answer {url} within {fixed(timeout, 0)} s; see {log}")


def stop(pid: int, grace: float = 30.0) -> bool:
    """SIGTERM the process group, SIGKILL what is left after `grace` s; True if it was running."""
    if not alive(pid):
        return False
    _signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not _group_alive(pid):
            return True
        time.sleep(0.2)
    _signal_group(pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while _group_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _group_alive(pid):
        raise LabError(f"process group {pid} survived SIGKILL")
    return True


def _signal_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)


def _group_alive(pgid: int) -> bool:
    """Whether any live process is left in process group `pgid`."""
    for entry in Path("/proc").iterdir():
        fields = _stat(entry.name) if entry.name.isdigit() else None
        if fields is not None and int(fields[2]) == pgid and fields[0] != "Z":
            return True
    alive(pgid)  # reap our own zombie child, if it is one
    return False


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:])
