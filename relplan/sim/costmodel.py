"""Step-duration cost model (docs/simulate.md, The model: step cost).

A step takes the longer of what it must read from memory and what it must compute:

    step_ms = speed * max(floor, compute)
    floor   = m0 + mb * B + fm * sum_j L_j
    compute = a + b * (prefill tokens) + bd * B + c * sum_i N_i * (C_i + N_i / 2)
              + f * sum_j L_j            (the last term only when B > wave_seqs)

summed over the step's prefill chunks i (N new tokens computed after C tokens already in the
KV cache, cached prefix included) and its B decodes j (context L tokens). The floor is the
memory-bandwidth bound: every step reads the weights once (m0; 15.2 GB at 4.26 TB/s is 3.6 ms,
plus launch overhead) and every decode reads its KV cache (fm per context token: 57,344 bytes
at 4.26 TB/s is 1.35e-5 ms). Decode attention stays bandwidth-bound while the batch's
attention blocks (B sequences x 4 KV heads) fit on the GPU's 132 SMs in one wave
(B <= wave_seqs = 33); past that it runs in waves and costs f per context token.

The coefficients are fits (smallest worst-case relative error) to forward-pass timings of a
7B-class decoder on an H200 (tests/data/gpu-step-costs/, with its provenance in README.md
there); they are within 7 % of every measured prefill-only, decode-only and mixed point
(tests/test_sim_costmodel.py holds them to 10 %). `speed` is one factor per engine profile
that brings the calibrated capacity to the profile's target (see `profiles/*.toml`).

The engine inlines this formula in its step loop for speed; `step_cost_ms` is the reference
implementation the tests hold the engine to. A model with `floor_ms = 0` and `wave_seqs = 0`
is the plain linear model `a + b * tokens + c * pairs + f * sum L`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CostModel:
    a_ms: float = 3.46
    b_ms_per_token: float = 0.02143
    c_ms_per_pair: float = 1.521e-6
    f_ms_per_context_token: float = 2.259e-5
    speed: float = 1.0
    b_ms_per_decode_seq: float | None = 0.02966  # None: the same as b_ms_per_token
    wave_seqs: int = 33
    floor_ms: float = 5.844
    floor_ms_per_seq: float = 0.01029
    floor_ms_per_context_token: float = 1.287e-5

    @property
    def decode_seq_ms(self) -> float:
        b = self.b_ms_per_decode_seq
        return self.b_ms_per_token if b is None else b


def step_cost_ms(
    model: CostModel,
    prefill_chunks: list[tuple[int, int]],
    decode_contexts: list[int],
) -> float:
    """Milliseconds for one step: `prefill_chunks` as (N new, C before), decodes as contexts L."""
    n_prefill = sum(n for n, _ in prefill_chunks)
    attn = sum(n * (c + n / 2.0) for n, c in prefill_chunks)
    n_decode = len(decode_contexts)
    context = sum(decode_contexts)
    compute = (
        model.a_ms
        + model.b_ms_per_token * n_prefill
        + model.decode_seq_ms * n_decode
        + model.c_ms_per_pair * attn
        + (model.f_ms_per_context_token * context if n_decode > model.wave_seqs else 0.0)
    )
    floor = (
        model.floor_ms
        + model.floor_ms_per_seq * n_decode
        + model.floor_ms_per_context_token * context
    )
    return model.speed * max(floor, compute)
