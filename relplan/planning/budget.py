"""Error-budget burn from crash rate x stream duration (docs/planning.md, budget).

A crash kills every stream its replica is serving. With C crashes per replica per window,
K concurrent streams per replica and N replicas, C*N*K streams die per window. Streams of mean
duration d give N*K/d*T requests per window T, of which (1 - SLO) may fail. Burn is killed over
allowed: it grows linearly with both C and d, so long streams turn a tolerable crash rate into
a blown budget. The break-even duration (1 - SLO)*T/C is where crashes alone burn exactly 1x.

Choices (documented in docs/planning.md, budget):
- Undrained planned restarts kill streams like crashes do; `fraction_killed` is killed over
  requests, i.e. C*d/T plus P*d/T when planned restarts are not drained.
- The break-even duration is for crashes alone (docs/planning.md, budget).
- Capacity lost counts every restart, drained or not: (C + P) * r * N replica-minutes.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from relplan.models import StrictModel
from relplan.planning.measured import MeasuredRestarts, MeasuredStreams
from relplan.wording import Words

# The verdicts and the what-ifs' descriptions, worded by relplan/text/budget.py
# (relplan/wording.py).
Said = Literal[
    "blows_budget",
    "uses_budget",
    "as_given",
    "halve_crashes",
    "drain_restarts",
    "nothing_to_drain",
    "as_measured",
]
_say: Words[Said] = Words("relplan.text.budget")

TYPICAL_STREAM_SECONDS: tuple[float, ...] = (10, 30, 60, 120, 300, 600)


class BudgetInputs(StrictModel):
    crashes: float = Field(description="crashes per replica per window (C)")
    concurrency: float = Field(description="mean concurrent streams per replica (K)")
    replicas: int = Field(description="replicas (N)")
    slo: float = Field(description="SLO as a fraction, e.g. 0.999")
    window_s: float = Field(description="SLO window in seconds (T)")
    stream_seconds: list[float] = Field(description="mean stream durations evaluated (d)")
    restart_minutes: float = Field(description="minutes a replica is down per restart (r)")
    planned_restarts: float = Field(description="planned restarts per replica per window (P)")
    drain: bool = Field(description="planned restarts drain first and kill no streams")
    streams_per_crash: float | None = Field(
        default=None,
        description="streams a crash kills when measured (--streams-per-crash); None: K",
    )


class BudgetRow(StrictModel):
    stream_seconds: float
    streams_killed: float = Field(description="C*N*K, plus P*N*K when restarts are not drained")
    requests: float = Field(description="N*K/d*T")
    allowed_failures: float = Field(description="(1 - SLO) * requests")
    burn: float = Field(description="streams_killed / allowed_failures (1.0 = whole budget)")
    fraction_killed: float = Field(description="streams_killed / requests")
    verdict: str


class BudgetCase(StrictModel):
    name: str
    description: str
    crashes: float
    planned_restarts: float
    drain: bool
    break_even_stream_seconds: float = Field(
        description="(1 - SLO)*T/C: streams longer than this blow the budget on crashes alone"
    )
    capacity_lost_replica_minutes: float = Field(description="(C + P) * r * N")
    capacity_lost_share: float = Field(description="replica-minutes lost / (N * T in minutes)")
    rows: list[BudgetRow]


class BudgetResult(StrictModel):
    inputs: BudgetInputs
    measured: MeasuredStreams | None = Field(
        default=None, description="K and d measured from a workspace (--from-db), if used"
    )
    restarts: MeasuredRestarts | None = Field(
        default=None, description="C, P, r and streams per crash measured (--from-db), if any"
    )
    input_sources: dict[str, str] = Field(
        default_factory=dict, description="per input: typed | measured | default"
    )
    baseline: BudgetCase
    what_if: list[BudgetCase]
    as_measured: BudgetCase | None = Field(
        default=None,
        description="every input as measured (--from-db), when a typed flag changed one",
    )


def _row(inp: BudgetInputs, crashes: float, planned: float, drain: bool, d: float) -> BudgetRow:
    n, k, t = inp.replicas, inp.concurrency, inp.window_s
    undrained = 0.0 if drain else planned
    per_crash = k if inp.streams_per_crash is None else inp.streams_per_crash
    killed = (crashes + undrained) * n * per_crash
    requests = n * k / d * t
    allowed = (1.0 - inp.slo) * requests
    burn = killed / allowed
    verdict = _say(
        "blows_budget" if burn >= 1.0 else "uses_budget", burn=burn, undrained=undrained > 0
    )
    return BudgetRow(
        stream_seconds=d,
        streams_killed=killed,
        requests=requests,
        allowed_failures=allowed,
        burn=burn,
        fraction_killed=killed / requests,
        verdict=verdict,
    )


def _case(
    inp: BudgetInputs, name: str, description: str, crashes: float, planned: float, drain: bool
) -> BudgetCase:
    lost = (crashes + planned) * inp.restart_minutes * inp.replicas
    return BudgetCase(
        name=name,
        description=description,
        crashes=crashes,
        planned_restarts=planned,
        drain=drain,
        break_even_stream_seconds=(1.0 - inp.slo) * inp.window_s / crashes,
        capacity_lost_replica_minutes=lost,
        capacity_lost_share=lost / (inp.replicas * inp.window_s / 60.0),
        rows=[_row(inp, crashes, planned, drain, d) for d in inp.stream_seconds],
    )


def plan_budget(
    inp: BudgetInputs,
    measured: MeasuredStreams | None = None,
    *,
    restarts: MeasuredRestarts | None = None,
    measured_inputs: BudgetInputs | None = None,
    input_sources: dict[str, str] | None = None,
) -> BudgetResult:
    """The burn of `inp` with its what-ifs; with `measured_inputs` (every input as measured)
    that differ from `inp`, also the case as measured, to print beside what was typed."""
    c, p = inp.crashes, inp.planned_restarts
    baseline = _case(inp, "as given", _say("as_given"), c, p, inp.drain)
    halve = _case(inp, "halve crashes", _say("halve_crashes", crashes=c), c / 2, p, inp.drain)
    if p > 0 and not inp.drain:
        drain_desc = _say("drain_restarts", planned=p)
    else:
        drain_desc = _say("nothing_to_drain")
    drained = _case(inp, "drain planned restarts", drain_desc, c, p, True)
    as_measured = None
    if measured_inputs is not None and measured_inputs != inp:
        m = measured_inputs
        as_measured = _case(
            m, "as measured", _say("as_measured"), m.crashes, m.planned_restarts, m.drain
        )
    return BudgetResult(
        inputs=inp,
        measured=measured,
        restarts=restarts,
        input_sources=input_sources or {},
        baseline=baseline,
        what_if=[halve, drained],
        as_measured=as_measured,
    )
