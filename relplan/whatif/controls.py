"""The one list of controls `relplan whatif` replays, each sized from the fitted incident.

A control is a name, a label and the scenario overrides (`--set key=value`, as `relplan
simulate` takes them) that apply it to the as-observed scenario. docs/whatif.md (Controls)
explains each; sizes come from the fit:
- `no-retries`: the client does not retry;
- `retry-budget-10`: the proxy lets retries be at most 10 % of first attempts over 60 s (the
  SRE book's budget);
- `retry-budget-pulse`: the same budget at the ratio the pulse arithmetic says the hold can
  absorb, 1/H - 1 for a hold at H × Ĉ (relplan/planning/pulse.py);
- `coalesce-deferred`: retries attach to the call's running execution, cancellation deferred
  past the client's largest backoff (so the retry finds it still running);
- `coalesce-immediate`: coalescing with immediate cancellation (shows why not: the execution
  is gone before the retry arrives);
- `proxy-cap-newest`: the proxy keeps at most ⌈Ĉ·D/3⌉ executions at the engine (a third of a
  deadline's work) and serves its queue newest first, cancelling immediately;
- `vllm-queue-cap`: vLLM refuses arrivals while ⌈Ĉ·D/3⌉ requests wait (`--max-num-queued-reqs`);
- `steps-2048`: 2,048-token steps (`--max-num-batched-tokens 2048`);
- `longer-timeout`: the client waits twice its deadline per attempt;
- `retry-before-first-token`: retry only before the first token. The simulator's client has
  no such setting, so the replay applies a hook to the simulation (relplan/whatif/hooks.py).
A user's scenario FILE adds a control named after it, its settings applied over the fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from relplan.planning.pulse import PulseInputs, plan_pulse


@dataclass(frozen=True)
class Control:
    name: str
    label: str
    sets: list[str] = field(default_factory=list)
    unavailable: str = ""  # why it cannot be replayed ("" when it can)
    hooks: tuple[str, ...] = ()  # simulation hooks (relplan/whatif/hooks.py)


AS_OBSERVED = "as-observed"


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


def queue_size(data: dict[str, Any]) -> int:
    """A third of one deadline's work at Ĉ: ⌈Ĉ·D/3⌉ (at least 1)."""
    cap = float(data.get("capacity_calls_per_s") or 1.0)
    d = float(data["client"].get("deadline_s", 120.0))
    if not math.isfinite(d):
        d = 120.0
    return max(1, math.ceil(cap * d / 3.0))


def deferred_delay(data: dict[str, Any]) -> float:
    """Past the client's largest backoff, rounded up to a whole second, plus one."""
    return float(math.ceil(float(data["client"].get("backoff_max_s", 3.0))) + 1)


def builtin_controls(data: dict[str, Any]) -> list[Control]:
    """The controls for a fitted scenario's raw settings, in the order the table shows them."""
    c = data["client"]
    d = float(c.get("deadline_s", 120.0))
    ratio = pulse_ratio(data)
    q = queue_size(data)
    delay = deferred_delay(data)
    out = [
        Control("no-retries", "no client retries", ["client.max_retries=0"]),
        Control(
            "retry-budget-10",
            "retry budget 10 %",
            ["proxy.retry_budget.ratio=0.1", "proxy.retry_budget.window_s=60"],
        ),
    ]
    if ratio is not None:
        out.append(
            Control(
                "retry-budget-pulse",
                f"retry budget {ratio:.0%} (from the pulse)",
                [f"proxy.retry_budget.ratio={round(ratio, 3)}", "proxy.retry_budget.window_s=60"],
            )
        )
    else:
        out.append(
            Control(
                "retry-budget-pulse",
                "retry budget sized by the pulse arithmetic",
                unavailable="no phase after the overload, or its load is at or above Ĉ",
            )
        )
    out += [
        Control(
            "coalesce-deferred",
            f"coalesce, cancel deferred {delay:g} s",
            ["proxy.coalesce=true", f'proxy.cancellation="deferred({delay:g})"'],
        ),
        Control(
            "coalesce-immediate",
            "coalesce, cancel immediately",
            ["proxy.coalesce=true", 'proxy.cancellation="immediate"'],
        ),
        Control(
            "proxy-cap-newest",
            f"proxy cap {q}, newest first",
            [
                f"proxy.max_outstanding={q}",
                'proxy.queue_order="newest_first"',
                'proxy.cancellation="immediate"',
            ],
        ),
        Control("vllm-queue-cap", f"vLLM queue cap {q}", [f"engine.waiting_cap={q}"]),
        Control("steps-2048", "2,048-token steps", ["engine.max_num_batched_tokens=2048"]),
    ]
    if math.isfinite(d):
        out.append(
            Control(
                "longer-timeout", f"client timeout {2 * d:g} s", [f"client.deadline_s={2 * d:g}"]
            )
        )
    out.append(
        Control(
            "retry-before-first-token",
            "retry only before the first token",
            hooks=("retry-before-first-token",),
        )
    )
    return out


def file_control(path: str, data: dict[str, Any]) -> Control:
    """A user's scenario file as a control: its client, proxy and engine tables as overrides."""
    from pathlib import Path

    sets: list[str] = []
    for table in ("client", "proxy", "engine"):
        for key, value in (data.get(table) or {}).items():
            sets += _flatten(f"{table}.{key}", value)
    name = Path(path).name.split(".")[0]
    return Control(name, f"{name} (file)", sets)


def _flatten(key: str, value: Any) -> list[str]:
    if isinstance(value, dict):
        out: list[str] = []
        for k, v in value.items():
            out += _flatten(f"{key}.{k}", v)
        return out
    if isinstance(value, bool):
        return [f"{key}={'true' if value else 'false'}"]
    if isinstance(value, str):
        return [f'{key}="{value}"']
    return [f"{key}={value}"]
