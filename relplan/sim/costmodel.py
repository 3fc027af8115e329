"""Step-duration cost model (docs/simulate.md, The model: step cost).

    step_ms = speed * (a + b * (prefill tokens + decode sequences)
                       + c * sum_i N_i * (C_i + N_i / 2)
                       + f * sum_j L_j)

summed over the step's prefill chunks i (N new tokens computed after C tokens already in the
KV cache, cached prefix included) and its decodes j (context L tokens). The coefficients are
least-squares fits to forward-pass timings of a 7B-class decoder on an H200
(tests/data/gpu-step-costs/, with its provenance in README.md there); `speed` is one factor per engine profile that brings the
calibrated capacity to the profile's target (see `profiles/*.toml` for how it was set).

The engine inlines this formula in its step loop for speed; `step_cost_ms` is the reference
implementation the tests hold the engine to.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CostModel:
    a_ms: float = 3.29
    b_ms_per_token: float = 0.02365
    c_ms_per_pair: float = 1.178e-6
    f_ms_per_context_token: float = 2.40e-5
    speed: float = 1.0


def step_cost_ms(
    model: CostModel,
    prefill_chunks: list[tuple[int, int]],
    decode_contexts: list[int],
) -> float:
    """Milliseconds for one step: `prefill_chunks` as (N new, C before), decodes as contexts L."""
    n_prefill = sum(n for n, _ in prefill_chunks)
    attn = sum(n * (c + n / 2.0) for n, c in prefill_chunks)
    return model.speed * (
        model.a_ms
        + model.b_ms_per_token * (n_prefill + len(decode_contexts))
        + model.c_ms_per_pair * attn
        + model.f_ms_per_context_token * sum(decode_contexts)
    )
