"""`up`, `down` and `status`: the lab's servers as one unit with a state file."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from relplan.lab import configs, environment, processes
from relplan.lab.processes import LabError
from relplan.lab.settings import (
    VLLM_PACKAGE,
    LabSettings,
    read_state,
    settings_dict,
    write_state,
)
from relplan.wording import Words

Say = Callable[[str], None]
# The progress lines, worded by relplan/text/lab.py (relplan/wording.py).
Said = Literal[
    "restarting_vllm",
    "starting_vllm",
    "plugin_writes_trace",
    "starting_nginx",
    "starting_prometheus",
    "stopped",
]
_say: Words[Said] = Words("relplan.text.lab")
VLLM_START_TIMEOUT = 900.0  # the first start compiles the model (minutes on a loaded CPU)
SERVERS = ("vllm", "nginx", "prometheus")


@dataclass
class Status:
    running: dict[str, int]
    stopped: list[str]
    settings: dict[str, object]


def tool(name: str) -> str:
    for candidate in (shutil.which(name), f"/usr/sbin/{name}", f"/usr/bin/{name}"):
        if candidate and Path(candidate).exists():
            return candidate
    raise LabError(f"{name} is not installed (Debian: apt-get install -y {name})")


def up(s: LabSettings, say: Say) -> Status:
    """Start what is not running (restarting vLLM or reloading nginx when a flag changed)."""
    nginx = tool("nginx")
    prometheus = tool("prometheus") if s.prometheus else None
    s.root.mkdir(parents=True, exist_ok=True)
    s.logs.mkdir(parents=True, exist_ok=True)
    environment.ensure_venv(s, say)
    environment.ensure_model(s, say)
    if s.trace:
        environment.ensure_plugin(s, say)
    state = read_state(s.root)
    pids = {k: int(v) for k, v in dict(state.get("pids", {})).items()}  # type: ignore[call-overload]
    pids = {k: v for k, v in pids.items() if processes.alive(v)}
    if "vllm" in pids and (state.get("vllm_args") != s.vllm_args() or _env_changed(state, s)):
        say(_say("restarting_vllm"))
        processes.stop(pids.pop("vllm"))
    if "vllm" not in pids:
        say(_say("starting_vllm", url=s.vllm_url, log=s.vllm_log))
        if s.trace:
            say(_say("plugin_writes_trace", trace_dir=s.trace_dir))
        pids["vllm"] = processes.start(s.vllm_args(), s.vllm_log, env=s.vllm_env())
        _save(s, pids)
        processes.wait_http(
            f"{s.vllm_url}/health", pids["vllm"], s.vllm_log, "vLLM", VLLM_START_TIMEOUT
        )
    conf = s.nginx_dir / "nginx.conf"
    (s.nginx_dir / "tmp").mkdir(parents=True, exist_ok=True)
    conf.write_text(configs.nginx_conf(s))
    nginx_args = [nginx, "-p", str(s.nginx_dir), "-c", str(conf)]
    if "nginx" in pids:
        subprocess.run([*nginx_args, "-s", "reload"], check=True, capture_output=True)
        time.sleep(0.5)  # the old workers finish their requests; new ones take the new conf
    else:
        say(_say("starting_nginx", url=s.gateway_url, logs=[s.access_json, s.access_log]))
        pids["nginx"] = processes.start([*nginx_args, "-g", "daemon off;"], s.logs / "nginx.out")
        _save(s, pids)
        processes.wait_http(
            f"{s.gateway_url}/health", pids["nginx"], s.logs / "nginx.out", "nginx", 30
        )
    if prometheus and "prometheus" not in pids:
        yml = s.root / "prometheus.yml"
        yml.write_text(configs.prometheus_yml(s))
        say(_say("starting_prometheus", url=s.prometheus_url, scrape_s=1))
        # a fresh store each start: within its 5-minute lookback a kept store answers a query
        # with the previous vLLM's last counter values, a reset in every export
        shutil.rmtree(s.root / "prometheus-data", ignore_errors=True)
        pids["prometheus"] = processes.start(
            [
                prometheus,
                f"--config.file={yml}",
                f"--storage.tsdb.path={s.root / 'prometheus-data'}",
                f"--web.listen-address=127.0.0.1:{s.prometheus_port}",
            ],
            s.logs / "prometheus.log",
        )
        _save(s, pids)
        processes.wait_http(
            f"{s.prometheus_url}/-/ready", pids["prometheus"], s.logs / "prometheus.log",
            "Prometheus", 60,
        )  # fmt: skip
    _save(s, pids)
    return status(s.root)


def _env_changed(state: dict[str, object], s: LabSettings) -> bool:
    """Whether vLLM runs with another environment than `s` gives (a state written before the
    environment was kept had the KV-cache size only)."""
    before = state.get("vllm_env", {"VLLM_CPU_KVCACHE_SPACE": str(s.kv_cache_gib)})
    return before != s.vllm_env()


def _save(s: LabSettings, pids: dict[str, int]) -> None:
    state = read_state(s.root)
    state.update(
        pids=pids,
        settings=settings_dict(s),
        vllm_args=s.vllm_args(),
        vllm_env=s.vllm_env(),
        versions={"vllm": VLLM_PACKAGE, "nginx": _version([tool("nginx"), "-v"])},
    )
    write_state(s.root, state)


def _version(args: list[str]) -> str:
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    return (done.stdout + done.stderr).strip().splitlines()[0] if done.returncode == 0 else "?"


def down(root: Path, say: Say) -> list[str]:
    """Stop every server `up` started; the names of those that were running."""
    state = read_state(root)
    pids = dict(state.get("pids", {}))  # type: ignore[call-overload]
    stopped = []
    for name in reversed(SERVERS):
        pid = pids.pop(name, None)
        if pid is not None and processes.stop(int(pid)):
            say(_say("stopped", name=name, pid=pid))
            stopped.append(name)
    if state:
        state["pids"] = {}
        write_state(root, state)
    return stopped


def status(root: Path) -> Status:
    state = read_state(root)
    pids = {k: int(v) for k, v in dict(state.get("pids", {})).items()}  # type: ignore[call-overload]
    running = {k: v for k, v in pids.items() if processes.alive(v)}
    settings = state.get("settings", {})
    return Status(
        running=running,
        stopped=[k for k in SERVERS if k not in running],
        settings=settings if isinstance(settings, dict) else {},
    )
