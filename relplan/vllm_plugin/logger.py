"""The class vLLM loads from the `vllm.stat_logger_plugins` entry-point group (docs/vllm-plugin.md).

vLLM (0.32: vllm/v1/metrics/loggers.py, load_stat_logger_plugin_factories) requires a subclass
of `StatLoggerBase`; it builds one per engine with `(vllm_config, engine_index)` and calls
`record(scheduler_stats, iteration_stats, ...)` from the API server's output loop after every
batch of engine-core outputs. All the work is in `writer` (stdlib only).
"""

from __future__ import annotations

import atexit
import os
from typing import Any

from vllm.v1.metrics.loggers import StatLoggerBase

from relplan.vllm_plugin.writer import ENV_REPLICA, TraceRecorder, from_env, log


class RelplanTraceLogger(StatLoggerBase):  # type: ignore[misc]
    """Writes the engine trace into $RELPLAN_TRACE_DIR; does nothing when it is unset."""

    def __init__(self, vllm_config: Any, engine_index: int = 0) -> None:
        self.engine_index = engine_index
        env = dict(os.environ)
        if engine_index and not env.get(ENV_REPLICA):
            env[ENV_REPLICA] = f"engine{engine_index}"
        self.recorder: TraceRecorder | None = None
        try:
            self.recorder = from_env(env)
        except Exception as exc:
            log.error("relplan trace disabled: %r", exc)
        if self.recorder is not None:
            atexit.register(self.recorder.writer.close)

    def record(
        self,
        scheduler_stats: Any,
        iteration_stats: Any,
        mm_cache_stats: Any = None,
        engine_idx: int = 0,
    ) -> None:
        if self.recorder is not None:
            self.recorder.record(scheduler_stats, iteration_stats)

    def log_engine_initialized(self) -> None:
        if self.recorder is not None:
            log.info("relplan trace: writing into %s", self.recorder.writer.directory)

    def log(self) -> None:
        rec = self.recorder
        if rec is None:
            return
        log.info("%s", rec.cost())
        if rec.writer.dropped:
            log.warning("relplan trace: %d rows dropped so far (queue full)", rec.writer.dropped)
