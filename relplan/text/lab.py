"""What `relplan lab up` prints once the lab runs (from relplan/lab's settings and status),
and the lab's progress lines (relplan/lab/environment.py, lifecycle.py and capture.py name
each by a code of their `Said` with its paths and numbers; `SENTENCES` words it,
relplan/wording.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from relplan.lab.lifecycle import Status
from relplan.lab.settings import LabSettings
from relplan.values import fixed, short


def lab_up(s: LabSettings, st: Status, *, prometheus: bool, trace: bool) -> list[str]:
    lines = [
        f"lab up in {s.root}: " + ", ".join(f"{k} pid {v}" for k, v in st.running.items()),
        f"gateway (nginx) {s.gateway_url}  vLLM {s.vllm_url}  model tiny-llama",
    ]
    if prometheus:
        lines.append(f"Prometheus {s.prometheus_url}")
    if trace:
        lines.append(f"engine trace (relplan plugin) {s.trace_dir}")
    lines.append(
        f"cancellation {'on' if s.cancel else 'off'}; stop with: relplan lab down --dir {s.root}"
    )
    return lines


def lab_status(st: Status) -> list[str]:
    """`relplan lab status`: each server, running (with its pid) or stopped, and the settings
    `up` recorded."""
    lines = [f"{name.ljust(10)}  running  pid {pid}" for name, pid in st.running.items()]
    lines += [f"{name.ljust(10)}  stopped" for name in st.stopped]
    if st.settings:
        names = ("cancel", "queue_cap", "max_num_seqs", "trace")
        flags = {k: st.settings.get(k, False) for k in names}
        lines.append("settings: " + ", ".join(f"{k}={v}" for k, v in flags.items()))
    return lines


# --- progress lines (the lab modules' `Said`) -----------------------------------------------


def creating_venv(venv: Path, package: str) -> str:
    return f"creating the lab environment in {venv} (vLLM {package}; a few minutes)"


def rewriting_model(model_dir: Path) -> str:
    return f"rewriting the tiny model in {model_dir}: its tokenizer lacks the drill's words"


def writing_model(model_dir: Path) -> str:
    return f"writing the tiny model to {model_dir}"


def installing_plugin(venv: Path, target: list[str]) -> str:
    return f"installing the relplan plugin into {venv} ({' '.join(target)})"


def restarting_vllm() -> str:
    return "vLLM flags changed: restarting vLLM"


def starting_vllm(url: str, log: Path) -> str:
    return f"starting vLLM on {url} (log {log})"


def plugin_writes_trace(trace_dir: Path) -> str:
    return f"the relplan plugin writes the engine trace into {trace_dir}"


def starting_nginx(url: str, logs: list[Path]) -> str:
    return f"starting nginx on {url} (logs {', '.join(str(x) for x in logs)})"


def starting_prometheus(url: str, scrape_s: float) -> str:
    return f"starting Prometheus on {url}, scraping vLLM every {short(scrape_s)} s"


def stopped(name: str, pid: int) -> str:
    return f"stopped {name} (pid {pid})"


def gateway_still_busy(waited_s: float, left: int) -> str:
    return (
        f"warning: after {fixed(waited_s, 1)} s nginx still handles {left} request(s);"
        " their access-log lines are not in this copy (collect again later, or --wait)"
    )


def gateway_unknown(waited_s: float, url: str) -> str:
    return (
        f"warning: nginx's status page ({url}) gave no count of the requests in flight"
        f" (waited {fixed(waited_s, 1)} s); the access-log lines of requests still in flight"
        " may be missing from this copy"
    )


def gateway_waited(waited_s: float) -> str:
    return f"waited {fixed(waited_s, 1)} s for nginx to finish the requests in flight"


SENTENCES: dict[str, Callable[..., str]] = {
    f.__name__: f
    for f in (
        creating_venv,
        rewriting_model,
        writing_model,
        installing_plugin,
        restarting_vllm,
        starting_vllm,
        plugin_writes_trace,
        starting_nginx,
        starting_prometheus,
        stopped,
        gateway_still_busy,
        gateway_unknown,
        gateway_waited,
    )
}
