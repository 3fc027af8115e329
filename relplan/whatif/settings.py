"""Hand over the settings: what to configure for a control, sized from the incident.

Each control maps to the settings that implement it in real deployments (docs/whatif.md,
Settings, cites each):
- vLLM flags: `--max-num-queued-reqs` (vLLM PR #49445: a cap on requests in flight, waiting
  plus running, refused with 503 above it; sized as the replayed waiting cap plus the peak
  of running requests the engine trace shows) and `--max-num-batched-tokens`;
- an Envoy cluster's `circuit_breakers.thresholds[].retry_budget` (envoy.config.cluster.v3.
  CircuitBreakers.Thresholds.RetryBudget: `budget_percent` as a Percent, `min_retry_concurrency`)
  and, for the proxy cap, `max_requests`;
- a Gateway API `XBackendTrafficPolicy` (gateway.networking.x-k8s.io/v1alpha1, GEP-3388)
  with `retryConstraint.budget` (`percent`, an integer, and `interval`) and `minRetryRate`;
- the client's `max_retries` and timeout (as the OpenAI Python client names them);
- for coalescing, the per-call key: an `Idempotency-Key` header (IETF httpapi draft) whose
  value every attempt of one call repeats, and the deferral of cancellation.
The YAML is generated from dicts with yaml.safe_dump, so it always parses; tests validate it
against the published schemas (tests/data/schemas/).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import yaml

from relplan.whatif.model import SettingBlock


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


def _budget_percent(sets: list[str]) -> float | None:
    for s in sets:
        if s.startswith("proxy.retry_budget.ratio="):
            return float(s.split("=", 1)[1]) * 100.0
    return None


def _value(sets: list[str], key: str) -> str | None:
    for s in sets:
        if s.startswith(key + "="):
            return s.split("=", 1)[1].strip('"')
    return None


def blocks_for(name: str, label: str, sets: list[str], sizing: Sizing) -> list[SettingBlock]:
    """The settings that implement control `name` (its overrides `sets`)."""
    out: list[SettingBlock] = []

    def add(target: str, title: str, text: str, language: str) -> None:
        out.append(
            SettingBlock(target=target, title=title, control=name, text=text, language=language)
        )

    pct = _budget_percent(sets)
    if pct is not None:
        add(
            "envoy",
            "Envoy cluster: retry budget",
            _yaml(envoy_cluster(sizing, budget_percent=pct, max_requests=None)),
            "yaml",
        )
        add(
            "gateway-api",
            "Gateway API: XBackendTrafficPolicy retryConstraint",
            _yaml(gateway_policy(sizing, pct, 60.0)),
            "yaml",
        )
    cap = _value(sets, "engine.waiting_cap")
    if cap is not None:
        running = sizing.peak_running or 256
        add(
            "vllm",
            "vLLM: cap on requests in flight",
            f"vllm serve MODEL --max-num-queued-reqs {int(cap) + running}\n"
            f"# {cap} waiting (the replayed cap) + {running} running (peak in the engine trace);"
            " vLLM counts both and answers 503 above it",
            "shell",
        )
    steps = _value(sets, "engine.max_num_batched_tokens")
    if steps is not None:
        add(
            "vllm",
            "vLLM: step token budget",
            f"vllm serve MODEL --max-num-batched-tokens {steps}",
            "shell",
        )
    outstanding = _value(sets, "proxy.max_outstanding")
    if outstanding is not None:
        add(
            "envoy",
            "Envoy cluster: cap on requests at the engine",
            _yaml(envoy_cluster(sizing, budget_percent=None, max_requests=int(outstanding)))
            + "# newest-first service of the queue is not an Envoy setting: it needs a proxy\n"
            "# that serves its pending queue last-in first-out\n",
            "yaml",
        )
    retries = _value(sets, "client.max_retries")
    timeout = _value(sets, "client.deadline_s")
    if retries is not None or timeout is not None:
        r = int(retries) if retries is not None else sizing.max_retries
        t = float(timeout) if timeout is not None else sizing.deadline_s
        t_text = "None" if t is None or not math.isfinite(t) else f"{t:g}"
        add(
            "client",
            "Client: retries and timeout",
            f"client = OpenAI(max_retries={r}, timeout={t_text})",
            "text",
        )
    if name == "retry-before-first-token":
        add(
            "client",
            "Client: retry only before the first token",
            "Retry an attempt only when it failed before any token arrived (a refusal, a timeout\n"
            "waiting for the first token); once the response has started streaming, end the call\n"
            "with the error instead of sending the prompt again.\n"
            f"client = OpenAI(max_retries={sizing.max_retries}, timeout=...)  # with stream=True, do"
            " not wrap the stream in a retry loop",
            "text",
        )
    if _value(sets, "proxy.coalesce") == "true":
        cancel = _value(sets, "proxy.cancellation") or "off"
        add(
            "coalescing",
            "Per-call key for coalescing",
            "Every attempt of one call carries the same key, e.g. the header\n"
            "  Idempotency-Key: <one value per call, repeated on each retry>\n"
            "and the proxy attaches a retry to the running execution with that key.\n"
            f"Cancellation when the client leaves: {cancel}"
            + (
                " - keep the execution running that long, past the client's backoff, so the retry finds it."
                if cancel.startswith("deferred")
                else "."
            ),
            "text",
        )
    return out


def settings_for(
    ranked: list[tuple[str, str, list[str]]], sizing: Sizing, best: int = 3
) -> list[SettingBlock]:
    """Settings for the `best` first controls of `ranked` (name, label, sets)."""
    out: list[SettingBlock] = []
    for name, label, sets in ranked[:best]:
        out += blocks_for(name, label, sets, sizing)
    return out
