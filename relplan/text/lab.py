"""What `relplan lab up` prints once the lab runs (from relplan/lab's settings and status)."""

from __future__ import annotations

from relplan.lab.lifecycle import Status
from relplan.lab.settings import LabSettings


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
