"""`relplan compare` on the real lab incidents (tests/data/lab/README.md): the drill's own
attempt logs of a recovered and a metastable run give the directions that really happened, the
gate fails the real regression and passes a run compared with itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from relplan.cli import app

LAB = Path(__file__).parent / "data" / "lab"
pytestmark = pytest.mark.slow


def compare(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["compare", *args])
    return res.exit_code, res.stdout


def side(name: str) -> str:
    return str(LAB / name / "client")


def test_the_gate_fails_the_real_regression_and_passes_a_rerun() -> None:
    code, out = compare(
        side("no-retries"), side("retries-no-cancel"), "--fail-if", "on_time.hold < -5pt"
    )
    assert code == 1
    assert "FAIL on_time.hold < -5pt" in out
    code, out = compare(side("no-retries"), side("no-retries"), "--fail-if", "on_time.hold < -5pt")
    assert code == 0, out


def test_a_retry_budget_is_better_than_retries_where_it_really_was() -> None:
    code, out = compare(side("retries-no-cancel"), side("retry-budget"), "--format", "json")
    assert code == 0
    figures = {f["name"]: f for f in json.loads(out)["figures"]}
    diff = figures["on_time.hold"]["differences"][0]
    assert diff["direction"] == "better"
    assert diff["beyond_noise"] is True
    assert diff["diff"] == pytest.approx(1.0)  # 0 % on time in the hold, against 100 %
