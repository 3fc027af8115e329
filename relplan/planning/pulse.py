"""Backlog arithmetic for an overload pulse (docs/planning.md, pulse). No data needed.

A pulse at P x capacity for S seconds leaves (P - 1) * S seconds of full-speed engine work
queued. If that backlog is longer than the client's deadline D, every queued attempt waits
past its deadline: the client leaves and (with retries) sends the call again, so the hold's
offered load becomes H * (1 + R) x capacity. When that exceeds capacity too, the queue can
never drain: the collapse risk of a metastable failure.

Recovery two ways (docs/analyses.md): without retries, a call arriving t s after the pulse
waits the backlog left then, (backlog - (1 - hold) t); it is on time again once that is at most
D: recovered after max(0, backlog - D) / (1 - hold); the backlog is gone (drained after) at
backlog / (1 - hold).

Choices (docs/planning.md, pulse): a pulse at or below capacity leaves no backlog; the
"retry ratio" is retries per call in the hold (0.5 = half the calls retry once), so the hold's
offered load is H * (1 + ratio) and stays under capacity while ratio < 1/H - 1.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from relplan.models import StrictModel
from relplan.wording import Words

# The reasons the verdict can give, worded by relplan/text/pulse.py (relplan/wording.py).
Said = Literal[
    "no_backlog",
    "backlog_over_deadline",
    "backlog_under_deadline",
    "never_drains",
    "retries_collapse",
    "retries_stay_under",
    "drains",
]
_say: Words[Said] = Words("relplan.text.pulse")


class PulseInputs(StrictModel):
    capacity_calls_per_s: float = Field(description="engine capacity C^ in calls/s")
    base: float = Field(description="base load, multiple of capacity")
    pulse: float = Field(description="pulse load, multiple of capacity")
    pulse_seconds: float
    hold: float = Field(description="load after the pulse, multiple of capacity")
    deadline_s: float = Field(description="client per-attempt deadline D")
    retries: int = Field(description="retries per call R")


class PulseResult(StrictModel):
    inputs: PulseInputs
    backlog_seconds: float = Field(description="(pulse - 1) * pulse_seconds, engine seconds")
    backlog_calls: float = Field(description="backlog_seconds * capacity")
    backlog_x_deadline: float = Field(description="backlog_seconds / D")
    drain_seconds: float | None = Field(
        description="drained after: backlog_seconds / (1 - hold) without retries, when the"
        " backlog is gone; null when hold >= 1 (never)"
    )
    recovered_seconds: float | None = Field(
        default=None,
        description="recovered after: max(0, backlog_seconds - D) / (1 - hold) without retries,"
        " when a new call's wait falls to D; null when hold >= 1 (never)",
    )
    retried_hold_x_capacity: float = Field(description="hold * (1 + R)")
    retried_hold_calls_per_s: float = Field(description="hold * (1 + R) * capacity")
    max_pulse_x_capacity: float = Field(description="largest pulse multiple whose backlog < D")
    max_pulse_seconds: float | None = Field(
        description="longest pulse at this multiple whose backlog < D; null when pulse <= 1"
    )
    max_retry_ratio: float | None = Field(
        description="retries per call below which the hold stays under capacity; null if hold >= 1"
    )
    verdict: str = Field(description="collapse risk | never drains | drains | no backlog")
    reasons: list[str]


def plan_pulse(inp: PulseInputs) -> PulseResult:
    cap, d = inp.capacity_calls_per_s, inp.deadline_s
    backlog_s = max(0.0, inp.pulse - 1.0) * inp.pulse_seconds
    drain = backlog_s / (1.0 - inp.hold) if inp.hold < 1.0 else None
    # A call arriving t s after the pulse waits the backlog left then, backlog_s - (1 - hold) t:
    # it is on time once that is at most D (recovered after); the backlog is gone at drain.
    recovered = max(0.0, backlog_s - d) / (1.0 - inp.hold) if inp.hold < 1.0 else None
    retried = inp.hold * (1 + inp.retries)
    max_pulse_seconds = d / (inp.pulse - 1.0) if inp.pulse > 1.0 else None
    max_ratio = 1.0 / inp.hold - 1.0 if inp.hold < 1.0 else None

    reasons: list[str] = []
    over_deadline = backlog_s > d
    if backlog_s == 0:
        reasons.append(_say("no_backlog", pulse=inp.pulse))
    elif over_deadline:
        reasons.append(_say("backlog_over_deadline", backlog_s=backlog_s, deadline_s=d))
    else:
        reasons.append(_say("backlog_under_deadline", backlog_s=backlog_s, deadline_s=d))
    if inp.hold >= 1.0:
        verdict = "never drains"
        reasons.append(_say("never_drains", hold=inp.hold))
    elif over_deadline and retried > 1.0:
        verdict = "collapse risk"
        reasons.append(
            _say(
                "retries_collapse",
                retries=inp.retries,
                retried_x=retried,
                retried_calls_per_s=retried * cap,
            )
        )
    elif backlog_s == 0:
        verdict = "no backlog"
    else:
        verdict = "drains"
        assert drain is not None
        if over_deadline:
            reasons.append(_say("retries_stay_under", retries=inp.retries, retried_x=retried))
        reasons.append(_say("drains", drain_s=drain, recovered_s=recovered or 0.0))
    return PulseResult(
        inputs=inp,
        backlog_seconds=backlog_s,
        backlog_calls=backlog_s * cap,
        backlog_x_deadline=backlog_s / d,
        drain_seconds=drain,
        recovered_seconds=recovered,
        retried_hold_x_capacity=retried,
        retried_hold_calls_per_s=retried * cap,
        max_pulse_x_capacity=1.0 + d / inp.pulse_seconds,
        max_pulse_seconds=max_pulse_seconds,
        max_retry_ratio=max_ratio,
        verdict=verdict,
        reasons=reasons,
    )
