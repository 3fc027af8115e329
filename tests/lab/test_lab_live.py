"""End to end on a real vLLM: `relplan lab up`, a short drill through nginx, the operator's
files collected, ingested and analysed, checked against the drill's own record of every
attempt (the client truth); then `relplan lab down` leaves no process behind.

The drill is small and bounded (loopback only; about 40 calls, under two minutes): a 5 s
pulse at 2.7 Ĉ between 10 s and 20 s at 0.6 Ĉ, three retries, cancellation off.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.tools import require_tool

RELPLAN = [sys.executable, "-m", "relplan"]


def relplan(*args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [*RELPLAN, *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"relplan {' '.join(args)}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    require_tool("nginx")
    given = os.environ.get("RELPLAN_LAB_DIR")
    root = Path(given) if given else tmp_path_factory.mktemp("lab")
    try:
        relplan("lab", "up", "--dir", str(root), "--cancel", "off", timeout=2400)
        yield root
    finally:
        relplan("lab", "down", "--dir", str(root), timeout=120)
        left = subprocess.run(
            ["pgrep", "-f", str(root)], capture_output=True, text=True, check=False
        ).stdout.split()
        assert left == [], f"processes left behind: {left}"


@pytest.fixture(scope="module")
def drilled(lab: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("drill")
    relplan("lab", "mark", "--dir", str(lab))
    # Ĉ given (the lab's ramp: docs/lab.md), so no ramp calls share the gateway log.
    relplan(
        "drill", "http://127.0.0.1:8080", "--out", str(out / "client"),
        "--capacity", "2.4",
        "--prompt-tokens", "500", "--output-tokens", "32", "--no-stream",
        "--base-seconds", "10s", "--pulse-seconds", "5s", "--hold-seconds", "20s",
        "--drain-seconds", "15s", "--deadline", "10s", "--retry", "fixed:3:1",
        "--metrics-url", "http://127.0.0.1:8000/metrics", "--name", "ci-live",
        timeout=900,
    )  # fmt: skip
    said = relplan("lab", "collect", str(out / "operator"), "--dir", str(lab)).stdout
    (out / "collect.txt").write_text(said)
    return out


def attempts(drilled: Path) -> list[dict[str, object]]:
    lines = (drilled / "client" / "attempts.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_every_attempt_is_in_the_gateway_log_and_reached_vllm(drilled: Path) -> None:
    sent = {
        (str(a["call_id"]), int(str(a["attempt"])))
        for a in attempts(drilled)
        if a["outcome"] != "shed"  # refused by the client itself: never sent
    }
    logged = set()
    for line in (drilled / "operator" / "access.json").read_text().splitlines():
        rec = json.loads(line)
        if rec["http_x_relplan_call"]:
            logged.add((rec["http_x_relplan_call"], int(rec["http_x_relplan_attempt"])))
    # on a failure, say what the client recorded of each attempt missing and what collect said
    missing = [a for a in attempts(drilled) if (a["call_id"], a["attempt"]) in sent - logged]
    said = (drilled / "collect.txt").read_text()
    assert logged == sent, f"missing from the gateway log: {missing}\ncollect said:\n{said}"
    vllm_log = (drilled / "operator" / "vllm.log").read_text()
    for call, attempt in sent:
        assert f"Added request cmpl-{call}-{attempt}-" in vllm_log


def test_the_operator_files_ingest_and_count_the_attempts(drilled: Path) -> None:
    db = drilled / "operator.duckdb"
    op = drilled / "operator"
    relplan(
        "ingest", str(op / "vllm.log"), str(op / "access.json"), "--db", str(db),
        "--call-key", "http_x_relplan_call", "--attempt-field", "http_x_relplan_attempt",
    )  # fmt: skip
    out = relplan("analyze", "--db", str(db), "--only", "amplification", "--json").stdout
    result = json.loads(out)
    truth = attempts(drilled)
    calls = len({a["call_id"] for a in truth})
    sent = [a for a in truth if a["outcome"] != "shed"]
    run = next(w for w in result["amplification"]["windows"] if w["window"] == "run")
    # nginx also logged the drill's two probes (GET /v1/models and one short completion)
    assert run["calls"] == calls + 2
    assert run["executions_per_call"] == pytest.approx((len(sent) + 2) / (calls + 2), rel=0.05)
