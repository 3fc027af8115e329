"""relplan whatif on an incident made by the simulator, whose truth is known.

The incident is the `pulse-retry-cancel` run with seed 1 (the bundled sample's scenario).
whatif fits it from the files alone and replays each control; the truth is a DIRECT
simulation of the same control from the scenario itself: same workload (the incident's C^,
so the same arrivals and lengths), same seed. Tolerances (docs/whatif.md, Accuracy):
- the as-observed replay reaches the incident's verdict, and its delivered and on-time
  shares are within 10 points of the incident's in every window (the fit check's threshold);
- for each control, the predicted verdict is the direct one and the delivered share of
  overload-and-later calls is within 10 points of it.
"""

from __future__ import annotations

from typing import Any

import pytest

from relplan import workspace
from relplan.ingest.base import IngestOptions
from relplan.ingest.driver import ingest_files
from relplan.whatif.check import MAX_ERROR
from relplan.whatif.model import WhatIf
from relplan.whatif.replay import Task, run_tasks
from relplan.whatif.run import WhatIfOptions, whatif

SCENARIO = "pulse-retry-cancel"
CONTROLS = ["no-retries", "coalesce-deferred", "coalesce-immediate", "retry-before-first-token"]
TOLERANCE = 0.10

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def replayed(simulated_run: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[WhatIf, float]:
    run = simulated_run(SCENARIO, 1)
    db = tmp_path_factory.mktemp("whatif") / "incident.duckdb"
    with workspace.open_workspace(db) as con:
        ingest_files(con, [run], IngestOptions())
    with workspace.open_workspace(db, read_only=True) as con:
        res = whatif(con, WhatIfOptions(seeds=1, jobs=2, only=CONTROLS))
    assert res.capacity_calls_per_s is not None
    return res, res.capacity_calls_per_s


def test_fit_recovers_the_simulated_client_and_proxy(replayed: tuple[WhatIf, float]) -> None:
    res, _ = replayed
    values = {p.value for p in res.fit}
    assert {
        "deadline 120 s",
        "3 retries",
        "cancellation immediate",
        "retries not coalesced",
    } <= values
    backoff = next(p.value for p in res.fit if p.value.startswith("backoff"))
    lo, hi = (float(x) for x in backoff.split()[-2].split("-"))
    assert 0.25 <= lo < 0.3
    assert 2.95 < hi <= 3.0


def test_as_observed_replay_matches_the_incident(replayed: tuple[WhatIf, float]) -> None:
    c = replayed[0].check
    assert c.incident.verdict == "metastable"
    assert c.verdict_matches, c.reason
    assert c.trusted, c.reason
    assert c.error is not None
    assert c.error <= MAX_ERROR


def test_each_control_predicts_its_direct_simulation(replayed: tuple[WhatIf, float]) -> None:
    res, cap = replayed
    by_name = {o.name: o for o in res.controls}
    tasks = [
        Task(
            SCENARIO,
            (*by_name[n].sets, f"capacity_calls_per_s={cap}"),
            1,
            n,
            tuple(by_name[n].hooks),
        )
        for n in CONTROLS
    ]
    direct, _, _ = run_tasks(tasks, 2)
    for name, truth in zip(CONTROLS, direct, strict=True):
        pred = by_name[name]
        assert pred.verdict == truth.verdict, name
        w = truth.window("overload+later")
        assert w is not None
        assert w.delivered_share is not None
        assert pred.delivered_share is not None
        assert pred.delivered_share.median is not None
        assert abs(pred.delivered_share.median - w.delivered_share) <= TOLERANCE, name


def test_ranked_controls_put_what_recovered_first(replayed: tuple[WhatIf, float]) -> None:
    res, _ = replayed
    verdicts = {o.name: o.verdict for o in res.controls}
    ranked = [verdicts[n] for n in res.ranked]
    assert ranked == sorted(ranked, key=lambda v: v != "recovered")
    assert res.settings, "settings for the best controls"
    assert res.settings[0].control == res.ranked[0]
