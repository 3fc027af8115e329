"""What the engine schedules: an execution and its states, the engine's lifecycle events,
the engine's configuration and the listener it reports results to (engine.py runs them)."""

from __future__ import annotations

from typing import Any, Final, Protocol

# Execution states, in lifecycle order (comparisons such as `state >= FINISHED` rely on it).
# Plain ints rather than an IntEnum: the step loop compares them for every execution it
# touches, and CPython's fast comparison path takes exact ints only.
NEW, WAITING, PREFILL, DECODING, FINISHING, FINISHED, ABORTED, REJECTED = range(8)


class EngineEvent:
    """The lifecycle events the engine records; each value indexes EVENT_NAMES."""

    ARRIVED: Final = 0
    SCHEDULED: Final = 1
    FIRST_TOKEN: Final = 2
    PREEMPTED: Final = 3
    ABORTED: Final = 4
    FINISHED: Final = 5
    REJECTED: Final = 6


EVENT_NAMES = (
    "arrived",
    "scheduled",
    "first_token",
    "preempted",
    "aborted",
    "finished",
    "rejected",
)


class Execution:
    """One request the engine runs. `idx` indexes the run's execution table.

    While decoding, an execution is not touched per step: `decode_from_step`,
    `tokens_at_join` and `generated_at_join` (its first decode step, KV tokens and output
    tokens then) give its state at any later step, and `last_step` is the step that schedules
    its last token.
    """

    __slots__ = (
        "admission",
        "attached",
        "blocks_held",
        "cache_seg",
        "cached",
        "cached_blocks",
        "call",
        "cancel_sent",
        "creator",
        "decode_from_step",
        "execution_id",
        "first_token_seen",
        "generated",
        "generated_at_join",
        "idx",
        "last_step",
        "max_tokens",
        "num_computed",
        "output_tokens",
        "preemptions",
        "prompt_tokens",
        "scheduled_once",
        "state",
        "target",
        "tokens_at_join",
    )

    def __init__(
        self,
        idx: int,
        execution_id: str,
        prompt_tokens: int,
        output_tokens: int,
        max_tokens: int,
        call: object = None,
    ) -> None:
        self.idx = idx
        self.execution_id = execution_id
        self.prompt_tokens = prompt_tokens
        self.output_tokens = output_tokens
        self.max_tokens = max_tokens
        self.call = call
        self.creator: object = None
        self.attached: list[object] = []
        self.cancel_sent = False
        self.state = NEW
        self.admission = 0  # admission order (1, 2, ...); 0 until first admitted
        self.cached = 0  # prompt tokens found in the prefix cache
        self.cached_blocks = 0
        self.target = prompt_tokens  # tokens to compute before decoding (prompt + output so far)
        self.num_computed = 0
        self.generated = 0
        self.generated_at_join = 0
        self.tokens_at_join = 0
        self.decode_from_step = 0
        self.last_step = -1
        self.blocks_held = 0
        self.first_token_seen = False
        self.scheduled_once = False
        self.preemptions = 0
        # while preempted: its entry [owner, blocks] in the engine's free-block queue, the
        # blocks of its KV cache still in the prefix cache (None once re-admitted or evicted)
        self.cache_seg: list[Any] | None = None


class EngineListener(Protocol):
    def on_finished(self, ex: Execution, t: float) -> None: ...
    def on_aborted(self, ex: Execution, t: float) -> None: ...
    def on_rejected(self, ex: Execution, t: float) -> None: ...


class EngineConfig:
    __slots__ = (
        "async_depth",
        "block_size",
        "max_num_batched_tokens",
        "max_num_queued_reqs",
        "max_num_queued_tokens",
        "max_num_seqs",
        "num_blocks",
        "prefix_tokens",
        "retry_prompt_cached",
        "waiting_cap",
    )

    def __init__(
        self,
        *,
        max_num_batched_tokens: int = 8192,
        max_num_seqs: int = 256,
        block_size: int = 16,
        num_blocks: int = 62_500,
        prefix_tokens: int = 2000,
        waiting_cap: int | None = None,
        async_depth: int = 2,
        max_num_queued_reqs: int | None = None,
        max_num_queued_tokens: int | None = None,
        retry_prompt_cached: bool = False,
    ) -> None:
        self.retry_prompt_cached = retry_prompt_cached
        self.max_num_batched_tokens = max_num_batched_tokens
        self.max_num_seqs = max_num_seqs
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.prefix_tokens = prefix_tokens
        self.waiting_cap = waiting_cap
        self.async_depth = async_depth
        self.max_num_queued_reqs = max_num_queued_reqs
        self.max_num_queued_tokens = max_num_queued_tokens
