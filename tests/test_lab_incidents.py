"""relplan on four real incidents recorded on the lab (tests/data/lab/README.md), from the
operator's files alone, checked against the drill's own record of every attempt.

The operator's files: the vLLM log, nginx's JSON access log (whose call-key and attempt
headers are named with --call-key / --attempt-field) and Prometheus's export; the one fact
given is the client deadline D = 10 s (--deadline), which no server log records. The client
truth (client/attempts.jsonl.gz) is read only to check relplan's figures.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from relplan.cli import app

LAB = Path(__file__).parent / "data" / "lab"
D = 10.0
# verdicts that say the service did not come back
DOWN = {"metastable", "overloaded"}
EXPECTED = {
    "retries-no-cancel": "down",
    "retries-cancel": "down",
    "no-retries": "recovered",
    "retry-budget": "recovered",
}


def run_cli(args: list[str]) -> Any:
    return CliRunner().invoke(app, args)


def truth(name: str) -> dict[str, float]:
    raw = gzip.decompress((LAB / name / "client" / "attempts.jsonl.gz").read_bytes())
    rows = [json.loads(x) for x in raw.splitlines()]
    calls = {r["call_id"] for r in rows}
    sent = [r for r in rows if r["outcome"] != "shed"]  # a refused retry never left the client
    delivered = {r["call_id"] for r in rows if r["outcome"] == "delivered"}
    on_time = {
        r["call_id"]
        for r in rows
        if r["outcome"] == "delivered" and r["t_end"] - r["t_planned"] <= D
    }
    return {
        "calls": len(calls),
        "executions_per_call": len(sent) / len(calls),
        "delivered": len(delivered) / len(calls),
        "on_time": len(on_time) / len(calls),
    }


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def analysed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[str, Any]]:
    name: str = request.param
    tmp = tmp_path_factory.mktemp(name)
    op = LAB / name / "operator"
    files = [
        shutil.copy(op / f, tmp / f)
        for f in ("vllm.log.gz", "access.json.gz", "prometheus.query_range.json.gz")
    ]
    db = str(tmp / "op.duckdb")
    ingest = run_cli(
        ["ingest", *map(str, files), "--db", db,
         "--call-key", "http_x_relplan_call", "--attempt-field", "http_x_relplan_attempt"]
    )  # fmt: skip
    assert ingest.exit_code == 0, ingest.output
    out = run_cli(["analyze", "--db", db, "--deadline", str(D), "--json"])
    assert out.exit_code == 0, out.output
    return name, json.loads(out.stdout)


def run_row(result: dict[str, Any], analysis: str) -> dict[str, Any]:
    return next(w for w in result[analysis]["windows"] if w["window"] == "run")


pytestmark = pytest.mark.slow


def test_the_verdict_is_right(analysed: tuple[str, dict[str, Any]]) -> None:
    name, result = analysed
    verdict = result["verdict"]["verdict"]
    if EXPECTED[name] == "down":
        assert verdict in DOWN, result["verdict"]
    else:
        assert verdict == "recovered", result["verdict"]


def test_executions_per_call_within_5_percent(analysed: tuple[str, dict[str, Any]]) -> None:
    name, result = analysed
    got = run_row(result, "amplification")["executions_per_call"]
    assert got == pytest.approx(truth(name)["executions_per_call"], rel=0.05)


def test_delivered_and_on_time_within_2_points(analysed: tuple[str, dict[str, Any]]) -> None:
    name, result = analysed
    row = run_row(result, "delivery")
    t = truth(name)
    # nginx also logged the drill's two probe requests (GET /v1/models, one tiny completion)
    assert row["calls"] == t["calls"] + 2
    assert row["delivered_share"] == pytest.approx(t["delivered"], abs=0.02)
    assert row["on_time_share"] == pytest.approx(t["on_time"], abs=0.02)
