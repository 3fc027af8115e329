"""Replay checked against reality on the fresh-prompt recordings (docs/whatif.md, Again with
fresh prompts; tests/data/lab/README.md, `fresh/`).

`whatif` is fitted from the operator's files of fresh/retries-no-cancel (vLLM's log with its
request and iteration lines, nginx's JSON log, Prometheus's export; D = 10 s given) and each
control is compared with its real runs, as tests/test_whatif_real.py does for the first
recording. Two mechanisms make the replay reproduce this incident (measured step by step
against the vLLM log, docs/whatif.md): the fit's phases lie on their own calls although the
operator's files open with the drill's capacity ramp (tests/test_whatif_fit.py), and a retry
finds its call's prompt in vLLM's prefix cache (vllm:prompt_tokens_cached_total rose by
173,952 tokens after the first retry, 384 for each of the 453 retries;
tests/test_sim_engine.py).

`python -m tests.test_whatif_real fresh` prints the table.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from relplan.whatif.run import Replayed
from tests.test_whatif_real import (
    FRESH,
    Row,
    RunEngine,
    predicted_row,
    real_rows,
    run_replay,
)

pytestmark = pytest.mark.slow

# a prediction on the engine of the control's real run: its hold on-time share within this of
# that run's (largest gap measured: 6 points, the retry budget, 92 % against 86 %)
ENGINE_MATCHED_BAND = 0.10
# a prediction from the incident alone: within this of the real seeds' median (largest gap
# measured: 16 points, retry before the first token, 86 % against 67 / 70 / 93 %)
INCIDENT_ONLY_BAND = 0.20
# the 20 s deadline's real run (21:19 UTC, load average 5.7-9.3) had an engine 12 % slower than
# the incident's (12:31 UTC, load 1.4-5.5): Ĉ 1.91 against 2.16 calls/s from their vLLM logs.
# From the incident alone it is predicted to recover (96 % on time), on its own engine not
# (2 %), as it really did not (1 %): the case sits on the edge, and the engine decides it
SLOWER_DAY = {"longer-deadline"}
# a hold mostly on time: the line between the two tiers the ranking is checked on
MOSTLY_ON_TIME = 0.5

Compared = tuple[Replayed, dict[str, RunEngine], dict[str, list[Row]]]


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> Compared:
    tmp: Path = tmp_path_factory.mktemp("whatif-real-fresh")
    # the incident on the other runs' engines is the table's, never checked: not replayed here
    done, engines = run_replay(tmp, lab=FRESH, every_engine=False)
    return done, engines, real_rows(float(done.fitted.data["capacity_calls_per_s"]), tmp, FRESH)


def _predicted(compared: Compared, name: str) -> Row:
    return predicted_row(compared[0].by_control[name])


def test_the_fit_says_retries_found_their_prompts_cached(compared: Compared) -> None:
    fitted = compared[0].fitted
    assert fitted.data["engine"]["retry_prompt_cached"] is True
    src = next(p.source for p in fitted.provenance if p.value == "retries' prompts cached")
    assert "173,952" in src
    assert "384 a retry over 453 retries" in src
    # the ramp's calls, before the drill's phases, have a phase of their own
    phases = fitted.data["workload"]["phases"]
    assert phases[0]["name"] == "before"
    assert phases[0]["seconds"] == pytest.approx(126.26, abs=0.01)


def test_the_as_observed_replay_reproduces_the_incident(compared: Compared) -> None:
    """Metastable as in reality, every call tried 4 times, and the engine's backlog gone at
    about the same time after the pulse (predicted 128 s, real 131 s, from Prometheus)."""
    p = _predicted(compared, "as-observed")
    real = compared[2]["as-observed"]
    assert p.recovered_s is None
    assert all(r.recovered_s is None for r in real)
    assert p.on_time == pytest.approx(real[0].on_time, abs=ENGINE_MATCHED_BAND)
    assert p.executions_per_call == pytest.approx(real[0].executions_per_call, rel=0.05)
    assert p.drained_s is not None
    assert real[0].drained_s is not None
    assert p.drained_s == pytest.approx(real[0].drained_s, rel=0.10)


def test_cancellation_alone_does_not_recover_for_the_right_reason(compared: Compared) -> None:
    """Cancellation on: predicted 6 % on time, 3.72 executions per call, drained 97 s after the
    pulse; real 6 / 0 / 0 %, 3.72-3.87, 98 s. Aborts free work, but every retry brings its
    prompt back, and the cache only spares its full blocks."""
    p = _predicted(compared, "cancellation-on")
    real = compared[2]["cancellation-on"]
    assert p.recovered_s is None
    assert not any(r.recovered_s is not None for r in real)
    assert p.executions_per_call == pytest.approx(real[0].executions_per_call, rel=0.05)
    assert p.drained_s is not None
    assert real[0].drained_s is not None
    assert p.drained_s == pytest.approx(real[0].drained_s, rel=0.10)


def test_with_each_runs_engine_every_prediction_is_within_its_band(compared: Compared) -> None:
    done, engines, real = compared
    for c, dirs in FRESH.controls:
        for i, d in enumerate(dirs):
            name = f"{c.name}@{d}"
            assert name in done.by_control, f"no engine fitted for {name}: {sorted(engines)}"
            p = _predicted(compared, name)
            assert p.on_time == pytest.approx(real[c.name][i].on_time, abs=ENGINE_MATCHED_BAND), (
                name,
                p,
                real[c.name][i],
            )


def test_the_incident_alone_is_within_its_band(compared: Compared) -> None:
    real = compared[2]
    for c, _ in FRESH.controls:
        if c.name in SLOWER_DAY:
            continue
        median = statistics.median(r.on_time for r in real[c.name])
        assert _predicted(compared, c.name).on_time == pytest.approx(
            median, abs=INCIDENT_ONLY_BAND
        ), c.name


def test_the_incident_alone_ranks_the_controls_as_reality_did(compared: Compared) -> None:
    """Ranked by predicted on-time share in the hold, every control whose real hold was mostly
    on time (median of its seeds) comes above every one whose hold was not. Inside the upper
    tier no order is claimed: the real medians are 70-100 % with seeds spread over up to 26
    points (retry before the first token: 67 / 70 / 93 %), the predictions 85-100 %."""
    real = compared[2]
    names = [c.name for c, _ in FRESH.controls if c.name not in SLOWER_DAY] + ["as-observed"]
    good = {n: statistics.median(r.on_time for r in real[n]) >= MOSTLY_ON_TIME for n in names}
    ranked = sorted(names, key=lambda n: -_predicted(compared, n).on_time)
    tiers = [good[n] for n in ranked]
    assert tiers == sorted(tiers, reverse=True), ranked
    assert any(tiers)
    assert not all(tiers)
    for n in names:  # a predicted recovery is never wrong
        if _predicted(compared, n).recovered_s is not None:
            assert good[n], n


def test_the_longer_deadline_is_decided_by_the_engine_of_the_day(compared: Compared) -> None:
    real = compared[2]["longer-deadline"]
    on_its_engine = _predicted(compared, "longer-deadline@longer-deadline")
    assert on_its_engine.recovered_s is None
    assert real[0].recovered_s is None
    assert on_its_engine.on_time == pytest.approx(real[0].on_time, abs=ENGINE_MATCHED_BAND)
    incident = float(compared[0].fitted.data["capacity_calls_per_s"])
    assert compared[1]["longer-deadline"].capacity < 0.9 * incident


def test_from_the_operators_files_alone_the_fit_check_is_trusted(tmp_path: Path) -> None:
    """`relplan whatif --deadline 10` on the operator's files, no phases given (the analyses
    detect them from the waiting queue): the as-observed replay reaches the incident's verdict
    with the same shares in every window and the same executions per call."""
    import json

    from relplan.cli import app
    from tests.helpers.fast_cli import CliRunner
    from tests.helpers.lab import ingest_operator

    db = ingest_operator(FRESH.incident_dir, tmp_path)
    got = CliRunner().invoke(
        app,
        [
            *("whatif", "--db", str(db), "--deadline", "10", "--seeds", "1", "--jobs", "1"),
            *("--control", "no-retries", "--json"),
        ],
    )
    assert got.exit_code == 0, got.output
    check = json.loads(got.stdout)["check"]
    assert check["trusted"], check["reason"]
    assert check["incident"]["verdict"] == check["replay"]["verdict"] == "metastable"
    assert check["error"] <= 0.02
    assert check["replay"]["executions_per_call"] == pytest.approx(
        check["incident"]["executions_per_call"], rel=0.02
    )
