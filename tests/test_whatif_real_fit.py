"""`whatif fit` on the real incidents recorded on the lab (tests/data/lab/README.md), from the
operator's files alone (vLLM's log with request and iteration lines, nginx's JSON log,
Prometheus's export), checked against the drill's own record (client/): every prompt was
500 tokens and every output 32 (--prompt-tokens 500 --output-tokens 32, ignore_eos), the
client retried up to 3 times after a fixed 1 s wait (or not at all), and only nginx's
setting decided whether vLLM aborted what a client left.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from relplan import sql
from relplan.cli import app
from relplan.sim.costfit import fit_engine
from relplan.whatif.fit import ClientFlags, Fitted, fit_incident
from relplan.workspace import connect
from tests.helpers.fast_cli import CliRunner
from tests.helpers.lab import ingest_operator

LAB = Path(__file__).parent / "data" / "lab"
RETRIES = {"retries-no-cancel": 3, "retries-cancel": 3, "retry-budget": 3, "no-retries": 0}
# the drill's probes, logged by nginx too: GET /v1/models and a 1-token completion

pytestmark = pytest.mark.slow


def _ingest(name: str, tmp: Path) -> Path:
    return ingest_operator(LAB / name, tmp)


@pytest.fixture(scope="module", params=sorted(RETRIES))
def fitted(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, Fitted, list[dict[str, Any]], Path]:
    name: str = request.param
    tmp = tmp_path_factory.mktemp(name)
    db = _ingest(name, tmp)
    con = connect(db, read_only=True)
    try:
        # retries-cancel's deadline is left to the data: its client's cut attempts show it
        flags = ClientFlags() if name == "retries-cancel" else ClientFlags(deadline_s=10.0)
        fit = fit_incident(con, tmp / "fit" / "scenario.toml", flags=flags)
    finally:
        con.close()
    calls = [json.loads(x) for x in fit.calls_path.read_text(encoding="utf-8").splitlines()]
    return name, fit, calls, db


def _truth(name: str) -> list[dict[str, Any]]:
    raw = gzip.decompress((LAB / name / "client" / "attempts.jsonl.gz").read_bytes())
    return [json.loads(x) for x in raw.splitlines()]


def _source(fit: Fitted, part: str, value_has: str) -> str:
    return next(p.source for p in fit.provenance if p.part == part and value_has in p.value)


def test_lengths_come_from_vllms_histograms(fitted: tuple[str, Fitted, Any, Path]) -> None:
    name, fit, calls, _ = fitted
    truth = _truth(name)
    meta = json.loads((LAB / name / "client" / "run.json").read_text(encoding="utf-8"))["meta"]
    assert (meta["prompt_tokens"], meta["output_tokens"], meta["ignore_eos"]) == ("500", "32", True)
    # the usage vLLM returned with every delivered attempt
    assert {r["prompt_tokens"] for r in truth if r["outcome"] == "delivered"} == {500}
    # nginx also logged the drill's two probes (GET /v1/models, a 1-token completion)
    assert len(calls) == len({r["call_id"] for r in truth}) + 2
    assert sum(c["input_length"] == 500 for c in calls) >= len(calls) - 2
    assert sum(c["output_length"] == 32 for c in calls) >= len(calls) - 2
    src = _source(fit, "lengths", "prompt lengths")
    assert "vllm:request_prompt_tokens histogram" in src
    assert "vllm:request_generation_tokens histogram" in src


def test_client_retries_backoff_and_deadline(fitted: tuple[str, Fitted, Any, Path]) -> None:
    name, fit, _, _ = fitted
    client = fit.client
    # the highest attempt that reached nginx (the retry budget refused the later ones at the
    # client, so nginx never saw them: the gateway log cannot show the policy's 3)
    sent = max(r["attempt"] for r in _truth(name) if r["outcome"] != "shed")
    assert client["max_retries"] == sent
    assert sent == RETRIES[name] or name == "retry-budget"
    assert client["deadline_s"] == pytest.approx(10.0, abs=0.05)
    if name == "retries-cancel":
        assert "attempts the client cut" in _source(fit, "client", "deadline")
    if RETRIES[name]:
        # the drill waited a fixed 1 s (--retry fixed:3:1): the fitted bounds hold it
        assert client["backoff_min_s"] <= 1.05
        assert client["backoff_max_s"] >= 1.0
        assert client["backoff_max_s"] < 2.0


def test_cancellation_follows_vllms_abort_lines(fitted: tuple[str, Fitted, Any, Path]) -> None:
    name, fit, _, _ = fitted
    want = "immediate" if name == "retries-cancel" else "off"
    assert fit.data["proxy"]["cancellation"] == want, fit.provenance


def test_the_engine_is_fitted_from_the_iteration_lines(
    fitted: tuple[str, Fitted, Any, Path],
) -> None:
    name, fit, _, db = fitted
    con = connect(db, read_only=True)
    try:
        eng = fit_engine(con)
        busy = con.execute(
            "select sum(value) from metric_samples where name = 'vllm_log:iteration_elapsed_seconds'"
        ).fetchone()
        done = con.execute(
            "select sum(v) from (select arg_max(value, t) - arg_min(value, t) as v "
            "from metric_samples where name = 'vllm:request_success_total' group by labels)"
        ).fetchone()
    finally:
        con.close()
    assert eng.source == "iteration lines"
    assert all(c.constrained for c in eng.coefficients)
    assert eng.median_abs_error_pct is not None
    assert eng.kv_capacity_tokens == 1365 * 128  # vllm:cache_config_info of the lab
    assert fit.data["engine"]["block_size"] == 128
    assert fit.data["engine"]["max_num_batched_tokens"] <= 2048  # the lab's setting
    assert "iteration lines" in _source(fit, "engine", "step costs")
    # Ĉ from the fitted step costs against what the engine really finished per busy second,
    # where the engine ran full for most of the span (requests waited at 298 of 326 scrapes);
    # a run that was mostly light finishes fewer per busy second than it could
    if name == "retries-no-cancel":
        assert busy is not None
        assert done is not None
        measured = float(done[0]) / float(busy[0])
        assert fit.data["capacity_calls_per_s"] == pytest.approx(measured, rel=0.15)


def test_iteration_lines_keep_their_counts_apart(tmp_path: Path) -> None:
    """Two lines copied from tests/data/lab/retries-no-cancel/operator/vllm.log.gz."""
    log = tmp_path / "vllm.log"
    log.write_text(
        "(APIServer pid=11269) INFO 12-03 16:49:09 [loggers.py:199] Engine 000: Iteration(3865):"
        " 1 context requests, 116 context tokens, 63 generation requests, 63 generation tokens,"
        " iteration elapsed time: 519.88 ms, CPU KV cache usage: 9.4%\n"
        "(APIServer pid=11269) INFO 12-03 16:49:08 [loggers.py:199] Engine 000: Iteration(3864):"
        " 0 context requests, 0 context tokens, 64 generation requests, 64 generation tokens,"
        " iteration elapsed time: 155.32 ms, CPU KV cache usage: 9.5%\n",
        encoding="utf-8",
    )
    db = tmp_path / "w.duckdb"
    got = CliRunner().invoke(app, ["ingest", str(log), "--db", str(db), "--year", "2026"])
    assert got.exit_code == 0, got.output
    con = connect(db, read_only=True)
    try:
        rows = sql.rows(con, "sim/iteration_costs")
    finally:
        con.close()
    by_step = {r["step"]: r for r in rows}
    assert by_step[3865]["context_tokens"] == 116
    assert by_step[3865]["context_requests"] == 1
    assert by_step[3865]["generation_requests"] == 63
    assert by_step[3865]["seconds"] == pytest.approx(0.51988)
    assert by_step[3864]["context_tokens"] == 0
    assert by_step[3864]["generation_requests"] == 64


def test_the_shared_prefix_is_read_before_the_first_retry(tmp_path: Path) -> None:
    """Fresh prompts (tests/data/lab/fresh/retries-no-cancel): the drill's 64 shared words never
    fill one of vLLM's 128-token cache blocks, so vLLM cached nothing until the retries resent
    prompts it had seen (vllm:prompt_tokens_cached_total rose by 0 over the 237 requests before
    the first retry; its stats line said "Prefix cache hit rate: 0.0 %"). Over the whole run
    the counter gives 207 tokens a request, the retries' own prompts; taken as a shared prefix
    it put the fitted Ĉ at 3.41 calls/s against the ramp's 1.87."""
    db = ingest_operator(LAB / "fresh" / "retries-no-cancel", tmp_path)
    con = connect(db, read_only=True)
    try:
        fit = fit_incident(
            con, tmp_path / "fit" / "scenario.toml", flags=ClientFlags(deadline_s=10.0)
        )
    finally:
        con.close()
    assert fit.data["workload"]["prefix_tokens"] == 0
    assert not any("shared prefix" in p.value for p in fit.provenance)
    assert float(fit.data["capacity_calls_per_s"]) == pytest.approx(1.87, rel=0.2)


def test_whether_retries_found_their_prompts_cached(fitted: tuple[str, Fitted, Any, Path]) -> None:
    """On the first recording every prompt was the same `<unk>` tokens: the shared prefix the
    fit takes from the counter before the first retry (384 of 500 tokens, all 3 full blocks)
    already accounts for everything vLLM served from its cache after it, so nothing says a
    retry found its own call's prompt; without retries the setting is assumed off.
    (fresh/retries-no-cancel, where it is on: tests/test_whatif_real_fresh.py.)"""
    name, fit, _, _ = fitted
    assert "retry_prompt_cached" not in fit.data["engine"]
    src = next(p.source for p in fit.provenance if p.value == "retries' prompts not cached")
    if name == "retries-no-cancel":
        assert "0 beyond the shared prefix" in src
    if name == "no-retries":
        assert src.startswith("assumed")
