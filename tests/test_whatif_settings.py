"""The settings relplan whatif hands over are valid configuration: each YAML document is
validated against the published schema of its resource (tests/data/schemas/, SOURCES.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from relplan.whatif.controls import builtin_controls
from relplan.whatif.settings import Sizing, envoy_cluster, gateway_policy

SCHEMAS = Path(__file__).parent / "data" / "schemas"
ENVOY = json.loads((SCHEMAS / "envoy-cluster-circuit-breakers.schema.json").read_text())
GATEWAY = yaml.safe_load((SCHEMAS / "xbackendtrafficpolicy.v1alpha1.schema.yaml").read_text())

# A fitted incident like the bundled sample: C^ 2.8 calls/s, D 120 s, a hold at 0.6 C^.
DATA: dict[str, Any] = {
    "capacity_calls_per_s": 2.8,
    "overload_phase": "pulse",
    "workload": {
        "phases": [
            {"name": "base", "seconds": 120.0, "rate_per_s": 1.68},
            {"name": "pulse", "seconds": 107.0, "rate_per_s": 7.56},
            {"name": "hold", "seconds": 720.0, "rate_per_s": 1.68},
        ]
    },
    "client": {"deadline_s": 120.0, "max_retries": 3, "backoff_min_s": 0.25, "backoff_max_s": 3.0},
}
SIZING = Sizing(
    capacity=2.8, deadline_s=120.0, max_retries=3, base_rate_per_s=1.68, peak_running=100
)


def _all_blocks() -> list[Any]:
    out = []
    for c in builtin_controls(DATA):
        out += c.blocks(SIZING)
    return out


def _seconds(text: str) -> float:
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    return sum(float(n) * units[u] for n, u in re.findall(r"([0-9]+)(ms|h|m|s)", text))


def test_every_envoy_block_is_a_valid_cluster_circuit_breakers_config() -> None:
    envoy = [b for b in _all_blocks() if b.target == "envoy"]
    assert {b.control for b in envoy} >= {
        "retry-budget-10",
        "retry-budget-pulse",
        "proxy-cap-newest",
    }
    for b in envoy:
        jsonschema.validate(yaml.safe_load(b.text), ENVOY)


def test_every_gateway_block_is_a_valid_xbackendtrafficpolicy() -> None:
    gw = [b for b in _all_blocks() if b.target == "gateway-api"]
    assert len(gw) == 2
    for b in gw:
        doc = yaml.safe_load(b.text)
        jsonschema.validate(doc, GATEWAY)
        assert doc["apiVersion"] == "gateway.networking.x-k8s.io/v1alpha1"
        assert doc["kind"] == "XBackendTrafficPolicy"
        # the CRD's CEL rule: 1 s <= budget interval <= 1 h
        assert 1.0 <= _seconds(doc["spec"]["retryConstraint"]["budget"]["interval"]) <= 3600.0


def test_retry_budget_is_sized_from_the_control() -> None:
    pulse = next(c for c in builtin_controls(DATA) if c.name == "retry-budget-pulse")
    # hold 1.68 / 2.8 = 0.6 C^: the pulse arithmetic's ratio 1/0.6 - 1 = 2/3
    assert "proxy.retry_budget.ratio=0.667" in pulse.sets
    doc = envoy_cluster(SIZING, budget_percent=66.7, max_requests=None)
    rb = doc["circuit_breakers"]["thresholds"][0]["retry_budget"]
    assert rb["budget_percent"] == {"value": 66.7}
    # 1.68 calls/s x 10 s in flight x 66.7 % -> ceil(11.2) = 12
    assert rb["min_retry_concurrency"] == 12
    pol = gateway_policy(SIZING, 66.7, 60.0)
    assert pol["spec"]["retryConstraint"]["budget"] == {"percent": 67, "interval": "60s"}


def test_vllm_queue_cap_counts_waiting_and_running() -> None:
    b = next(x for x in _all_blocks() if x.control == "vllm-queue-cap")
    # ceil(2.8 x 120 / 3) = 112 waiting + the batch cap, 256 (vLLM's default --max-num-seqs)
    assert b.text.splitlines()[0] == "vllm serve MODEL --max-num-queued-reqs 368"
    assert "waiting and running requests both count" in b.text


def test_coalescing_block_names_the_per_call_key_and_the_deferral() -> None:
    b = next(x for x in _all_blocks() if x.control == "coalesce-deferred")
    assert "Idempotency-Key" in b.text
    assert "deferred(4)" in b.text  # ceil(3.0 s backoff) + 1


@pytest.mark.parametrize(
    ("doc", "schema"),
    [
        (
            {
                "name": "vllm",
                "circuit_breakers": {"thresholds": [{"retry_budget": {"budget_percent": 10}}]},
            },
            ENVOY,
        ),
        ({"name": "vllm", "circuit_breakers": {"thresholds": [{"priority": "LOW"}]}}, ENVOY),
        (
            {
                "apiVersion": "x",
                "kind": "XBackendTrafficPolicy",
                "spec": {"targetRefs": [], "retryConstraint": {}},
            },
            GATEWAY,
        ),
        (
            {
                "spec": {
                    "targetRefs": [{"group": "", "kind": "Service", "name": "vllm"}],
                    "retryConstraint": {"budget": {"percent": 10.5}},
                }
            },
            GATEWAY,
        ),
    ],
)
def test_the_schemas_refuse_what_the_resources_refuse(
    doc: dict[str, Any], schema: dict[str, Any]
) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)
