"""Overhead of the relplan vLLM plugin (docs/vllm-plugin.md): throughput with and without it.

Starts two vLLM API servers on loopback, one after the other: one with the plugin writing a
trace (RELPLAN_TRACE_DIR set), one with it not loaded (VLLM_PLUGINS naming another plugin).
Then load runs go to them interleaved (ABBA order): each run sends `--requests` completions
at `--concurrency`, fresh random prompts per run (so the prefix cache cannot help), the same
prompts to both sides, `ignore_eos` with a fixed `max_tokens` so both generate the same
tokens. Prints the side-by-side table, the overhead and the spread of the run ratios; kills
both servers at the end.

    python bench/vllm_plugin.py [--python /work/lab/venv/bin/python] [--model /work/lab/model]

Skips (exit 0, one line) without a vLLM python (RELPLAN_VLLM_PYTHON, else the lab's at
/work/lab/venv or /root/vllm-venv) or a model directory. The plugin side needs relplan
installed in that environment (`relplan lab up --trace` does it). Standard library only: it
runs under any python.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path

DEFAULT_PYTHONS = ("/work/lab/venv/bin/python", "/root/vllm-venv/bin/python")
DEFAULT_MODELS = ("/work/lab/model", "/work/labmodel", "/work/plugin-model")


def vllm_python() -> str | None:
    """The python of a vLLM environment: $RELPLAN_VLLM_PYTHON, else the lab's or /root's."""
    env = os.environ.get("RELPLAN_VLLM_PYTHON")
    for p in (env,) if env else DEFAULT_PYTHONS:
        if p and Path(p).is_file():
            return p
    return None


def model_dir() -> str | None:
    """$RELPLAN_VLLM_MODEL, else the first of the lab's tiny models that exists."""
    env = os.environ.get("RELPLAN_VLLM_MODEL")
    for d in (env, *DEFAULT_MODELS) if env else DEFAULT_MODELS:
        if d and (Path(d) / "config.json").is_file():
            return d
    return None


def vocabulary(model: str) -> list[str]:
    """The words of the model's WordLevel tokenizer, special tokens left out."""
    tok = json.loads((Path(model) / "tokenizer.json").read_text())
    vocab = tok["model"]["vocab"]
    return [w for w in vocab if w.isalnum()]


@contextmanager
def server(
    python: str, model: str, port: int, env_extra: dict[str, str], log: Path, args: list[str]
) -> Iterator[subprocess.Popen[bytes]]:
    """A vLLM API server on 127.0.0.1:`port`, killed (its whole process group) on exit."""
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "2", **env_extra}
    cmd = [
        python,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        model,
        "--max-model-len",
        "8192",
        "--max-num-batched-tokens",
        "2048",
        "--max-num-seqs",
        "64",
        "--port",
        str(port),
        "--host",
        "127.0.0.1",
        # The lab's dtype (relplan/lab/settings.py): bfloat16 is slow on CPUs without AVX512.
        "--dtype",
        "float32",
        *args,
    ]
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, cwd="/tmp", start_new_session=True
        )
    try:
        yield proc
    finally:
        try:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def wait_ready(proc: subprocess.Popen[bytes], port: int, timeout: float = 600.0) -> None:
    """Polls /health until it answers 200; raises when the server exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"vLLM on port {port} exited with {proc.returncode}")
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return
        except OSError:
            pass
        finally:
            c.close()
        time.sleep(1.0)
    raise RuntimeError(f"vLLM on port {port} not ready after {timeout:.0f} s")


def complete(port: int, model: str, prompt: str, max_tokens: int, request_id: str) -> int:
    """One /v1/completions call; the output tokens it reports."""
    body = json.dumps(
        {
            "model": model,
            "prompt": prompt,
            "max_tokens": max_tokens,
            "ignore_eos": True,
            "temperature": 0,
        }
    )
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        c.request(
            "POST",
            "/v1/completions",
            body,
            {"Content-Type": "application/json", "X-Request-Id": request_id},
        )
        r = c.getresponse()
        data = json.loads(r.read())
    finally:
        c.close()
    if r.status != 200:
        raise RuntimeError(f"HTTP {r.status}: {data}")
    return int(data["usage"]["completion_tokens"])


def prompts(words: list[str], n: int, length: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(words) for _ in range(length)) for _ in range(n)]


def load_run(
    port: int, model: str, batch: list[str], max_tokens: int, concurrency: int, tag: str
) -> tuple[float, int]:
    """Sends `batch` at `concurrency`; (seconds, output tokens)."""
    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        futs = [
            pool.submit(complete, port, model, p, max_tokens, f"{tag}-{i}")
            for i, p in enumerate(batch)
        ]
        tokens = sum(f.result() for f in futs)
    return time.perf_counter() - t0, tokens


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=None)
    ap.add_argument("--model", default=None)
    ap.add_argument("--pairs", type=int, default=6, help="load runs per side, interleaved")
    ap.add_argument("--requests", type=int, default=32, help="requests per run")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--prompt-words", type=int, default=256)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--port", type=int, default=8100, help="the plugin's side; PORT+1 without")
    a = ap.parse_args()
    python = a.python or vllm_python()
    model = a.model or model_dir()
    if python is None or model is None:
        print("skipped: no vLLM python (RELPLAN_VLLM_PYTHON) or no model (RELPLAN_VLLM_MODEL)")
        return 0
    words = vocabulary(model)
    work = Path(tempfile.mkdtemp(prefix="relplan-vllm-bench-"))
    trace = work / "trace"
    sides = {
        "with plugin": (a.port, {"RELPLAN_TRACE_DIR": str(trace), "RELPLAN_TRACE_SECONDS": "2"}),
        "without": (a.port + 1, {"VLLM_PLUGINS": "relplan-none"}),
    }
    results: dict[str, list[tuple[float, int]]] = {k: [] for k in sides}
    try:
        # Both servers up, started one after the other (two starting together on this 2-core
        # machine starved each other's start-up), then the load runs interleaved in ABBA
        # order (with, without, without, with, ...) so a drift in the machine's load falls
        # on both sides alike. Run i sends the same fresh prompts to both; each server has
        # its own prefix cache, so they are new to each.
        with ExitStack() as stack:
            for name, (port, env) in sides.items():
                log = work / f"{name.split()[0]}.log"
                proc = stack.enter_context(server(python, model, port, env, log, []))
                wait_ready(proc, port)
            for port, _env in sides.values():
                load_run(port, model, prompts(words, 8, a.prompt_words, 0), 8, 8, "warm")
            names = list(sides)
            for i in range(a.pairs):
                batch = prompts(words, a.requests, a.prompt_words, 1000 + i)
                order = names if i % 2 == 0 else names[::-1]
                for name in order:
                    port = sides[name][0]
                    results[name].append(
                        load_run(port, model, batch, a.max_tokens, a.concurrency, f"b{i}")
                    )
        parts = sorted(trace.glob("*.jsonl"))
        rows = sum(len(p.read_text().splitlines()) for p in parts)
    finally:
        keep = os.environ.get("RELPLAN_BENCH_KEEP")
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"vLLM plugin overhead: {a.pairs} runs a side, interleaved, {a.requests} requests each")
    print(
        f"at concurrency {a.concurrency}, {a.prompt_words}-word prompts, {a.max_tokens} tokens out"
    )
    print(f"{'run':>4}  {'with plugin tok/s':>18}  {'without tok/s':>14}  {'ratio':>6}")
    ratios = []
    for i in range(a.pairs):
        (s1, t1), (s2, t2) = results["with plugin"][i], results["without"][i]
        r1, r2 = t1 / s1, t2 / s2
        ratios.append(r1 / r2)
        print(f"{i + 1:>4}  {r1:>18.1f}  {r2:>14.1f}  {r1 / r2:>6.3f}")
    tot1 = sum(t for _, t in results["with plugin"]) / sum(s for s, _ in results["with plugin"])
    tot2 = sum(t for _, t in results["without"]) / sum(s for s, _ in results["without"])
    print(f" all  {tot1:>18.1f}  {tot2:>14.1f}  {tot1 / tot2:>6.3f}")
    print(
        f"overhead: {100 * (1 - tot1 / tot2):+.1f} % (goal < 3 %); run ratios "
        f"{min(ratios):.3f}..{max(ratios):.3f}, median {statistics.median(ratios):.3f}"
    )
    print(f"trace: {rows} records in {len(parts)} parts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
