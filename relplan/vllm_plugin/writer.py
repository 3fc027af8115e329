"""The trace writer of the vLLM stat-logger plugin (docs/vllm-plugin.md).

Standard library only: vLLM imports this module at engine start, so it must not pull in
relplan's analysis stack (polars, duckdb, ...). It turns the stats objects vLLM hands a stat
logger into canonical engine-trace records (docs/formats.md, Engine trace) and writes them as
JSON Lines parts from a background thread:

- one `stats` record per engine iteration (running and waiting counts, batched tokens split
  into prefill and decode, preemptions, KV-cache usage, prefix-cache queries and hits);
- for every request the frontend sees finish, its lifecycle as `event` records: `arrived`
  (with the prompt length), `scheduled`, `first_token`, then `finished` or `aborted`.

Every field is read with `getattr` and a default, so a vLLM release that adds or drops one
still yields the records it can. The engine's thread only appends to a bounded queue; when the
queue is full rows are counted as dropped, never waited for. Any error disables the writer
with one log line.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
import time
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import Any

# A child of vLLM's own logger, so the lines reach vLLM's handler (its log, its format, INFO).
log = logging.getLogger("vllm.relplan_trace")

ENV_DIR = "RELPLAN_TRACE_DIR"
ENV_ROWS = "RELPLAN_TRACE_ROWS"
ENV_SECONDS = "RELPLAN_TRACE_SECONDS"
ENV_REPLICA = "RELPLAN_TRACE_REPLICA"
ENV_QUEUE = "RELPLAN_TRACE_QUEUE"

# FinishReason in vllm/v1/engine/__init__.py (0.32): STOP 0, LENGTH 1, ABORT 2, ERROR 3,
# REPETITION 4. Only ABORT becomes an `aborted` event; the rest end as `finished`.
_ABORT = 2
_REASONS = {0: "stop", 1: "length", 2: "abort", 3: "error", 4: "repetition"}

Row = dict[str, Any]


def _num(obj: Any, name: str, default: float = 0.0) -> float:
    v = getattr(obj, name, default)
    try:
        return float(v)
    except (TypeError, ValueError):
        return default


def _int(obj: Any, name: str, default: int = 0) -> int:
    v = getattr(obj, name, default)
    try:
        return int(v)
    except (TypeError, ValueError):
        return default


def finish_reason(value: Any) -> str:
    """`stop`, `length`, `abort`, ... for a FinishReason (an IntEnum) or its int or string."""
    try:
        return _REASONS.get(int(value), str(value))
    except (TypeError, ValueError):
        return str(value).lower()


def step_row(
    step: int, scheduler_stats: Any, iteration_stats: Any, replica: str | None
) -> Row | None:
    """One `stats` record for an iteration; None when vLLM handed neither object."""
    if scheduler_stats is None and iteration_stats is None:
        return None
    t = _num(iteration_stats, "iteration_timestamp", 0.0) if iteration_stats is not None else 0.0
    if t <= 0.0:
        t = time.time()
    details = getattr(scheduler_stats, "iteration_details", None)
    if details is not None:
        # --enable-logging-iteration-details: the scheduler's own split of the step's tokens.
        prefill = _int(details, "num_ctx_tokens")
        decode = _int(details, "num_generation_tokens")
        elapsed_ms: float | None = _num(details, "elapsed_ms")
        iteration: int | None = _int(details, "iteration_index")
    else:
        prompt = getattr(iteration_stats, "prompt_token_stats", None)
        if prompt is not None:
            prefill = _int(prompt, "computed")
        else:
            prefill = _int(iteration_stats, "num_prompt_tokens")
        decode = _int(iteration_stats, "num_generation_tokens")
        elapsed_ms = None
        iteration = None
    row: Row = {
        "type": "stats",
        # The plugin's own count of iterations: SchedulerStats.step_counter is a data-parallel
        # wave counter (0.32, vllm/v1/engine/core.py) and resets.
        "step": step,
        "t_issue": t,
        "num_batched_tokens": prefill + decode,
        "prompt_computed": prefill,
        "decode_tokens": decode,
        "num_preempted": _int(iteration_stats, "num_preempted_reqs"),
        "replica": replica,
    }
    if elapsed_ms is not None:
        row["elapsed_ms"] = elapsed_ms
        row["vllm_iteration"] = iteration
    if scheduler_stats is not None:
        row["num_running"] = _int(scheduler_stats, "num_running_reqs")
        row["num_waiting"] = _int(scheduler_stats, "num_waiting_reqs") + _int(
            scheduler_stats, "num_skipped_waiting_reqs"
        )
        kv = _num(scheduler_stats, "kv_cache_usage")
        row["kv_usage"] = min(max(kv, 0.0), 1.0)
        prefix = getattr(scheduler_stats, "prefix_cache_stats", None)
        if prefix is not None:
            row["prefix_queries"] = _int(prefix, "queries")
            row["prefix_hits"] = _int(prefix, "hits")
    return row


def request_rows(finished: Any, t_end: float, replica: str | None) -> list[Row]:
    """The lifecycle `event` records of one FinishedRequestStats, ending at `t_end`.

    vLLM keeps its per-request timestamps on two clocks (arrival on the frontend's wall clock,
    scheduled and token times on the engine core's monotonic clock) and hands out only
    intervals, so the times are laid back from the end: the last token at `t_end`, the first
    token `decode_time` before it, the first schedule `prefill_time` before that, the arrival
    `e2e_latency` before the end.
    """
    rid = getattr(finished, "request_id", None)
    if rid is None:
        return []
    rid = str(rid)
    e2e = max(_num(finished, "e2e_latency"), 0.0)
    decode = max(_num(finished, "decode_time"), 0.0)
    prefill = max(_num(finished, "prefill_time"), 0.0)
    first_token = t_end - decode
    scheduled = first_token - prefill
    arrived = min(t_end - e2e, scheduled)
    reason = finish_reason(getattr(finished, "finish_reason", 0))
    generated = _int(finished, "num_generation_tokens")
    base: Row = {"type": "event", "execution_id": rid, "replica": replica}
    rows: list[Row] = [
        {
            **base,
            "t": arrived,
            "event": "arrived",
            "prompt_tokens": _int(finished, "num_prompt_tokens"),
            "max_tokens": getattr(finished, "max_tokens_param", None),
        }
    ]
    if generated > 0 or reason != "abort":
        rows.append({**base, "t": scheduled, "event": "scheduled"})
    if generated > 0:
        rows.append({**base, "t": first_token, "event": "first_token"})
    rows.append(
        {
            **base,
            "t": t_end,
            "event": "aborted" if reason == "abort" else "finished",
            "finish_reason": reason,
            "output_tokens": generated,
            "cached_tokens": _int(finished, "num_cached_tokens"),
            "preemptions": _int(finished, "num_preemptions"),
        }
    )
    return rows


class TraceWriter:
    """Buffers records and writes them as rotated JSON Lines parts into `directory`.

    `add` never blocks and never raises: each call's rows go to a queue of at most
    `queue_items` calls (iterations) that a daemon thread drains. A part is closed (written to `.part` then renamed to `.jsonl`, so a reader never
    sees half a file) every `rows` rows or `seconds` seconds, whichever comes first.
    """

    def __init__(
        self,
        directory: Path,
        *,
        rows: int = 50_000,
        seconds: float = 10.0,
        queue_items: int = 10_000,
        prefix: str | None = None,
    ) -> None:
        self.directory = directory
        self.rows = max(1, rows)
        self.seconds = max(0.05, seconds)
        self.prefix = prefix or f"engine-{os.getpid()}-{int(time.time())}"
        self.disabled = False
        self.dropped = 0
        self.written = 0
        self.cpu_s = 0.0  # the writer thread's own CPU time (time.thread_time), after each write
        self.parts: list[Path] = []
        self._queue: queue.Queue[list[Row] | None] = queue.Queue(maxsize=max(1, queue_items))
        self._seq = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="relplan-trace", daemon=True)
        directory.mkdir(parents=True, exist_ok=True)
        self._thread.start()

    def add(self, rows: list[Row]) -> None:
        """Hand rows to the writer thread; counts them as dropped when its queue is full."""
        if self.disabled or not rows:
            return
        try:
            self._queue.put_nowait(rows)
        except queue.Full:
            if self.dropped == 0:
                log.warning("relplan trace: writer queue full; dropping rows (counted)")
            self.dropped += len(rows)

    def close(self, timeout: float = 5.0) -> None:
        """Flush what is queued and stop the thread (waits at most `timeout` seconds)."""
        if not self._thread.is_alive():
            return
        self._stop.set()
        with suppress(queue.Full):
            self._queue.put(None, timeout=timeout)
        self._thread.join(timeout)

    def _disable(self, exc: BaseException) -> None:
        self.disabled = True
        log.error("relplan trace disabled after a write error: %s", exc)

    def _run(self) -> None:
        buf: list[Row] = []
        opened = time.monotonic()
        while True:
            timeout = max(0.0, self.seconds - (time.monotonic() - opened))
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                item = []
            if item:
                buf.extend(item)
            end = item is None
            due = time.monotonic() - opened >= self.seconds
            if buf and (end or due or len(buf) >= self.rows) and not self.disabled:
                try:
                    self._write(buf)
                except Exception as exc:  # the engine must never see this
                    self._disable(exc)
                buf = []
                self.cpu_s = time.thread_time()
            if due or not buf:
                opened = time.monotonic()
            if end:
                return

    def _write(self, rows: Iterable[Row]) -> None:
        self._seq += 1
        final = self.directory / f"{self.prefix}-{self._seq:05d}.jsonl"
        tmp = final.with_suffix(".part")
        n = 0
        with tmp.open("w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, separators=(",", ":")))
                fh.write("\n")
                n += 1
        os.replace(tmp, final)
        self.parts.append(final)
        self.written += n


class TraceRecorder:
    """What the vLLM stat logger delegates to: stats objects in, records to a TraceWriter."""

    def __init__(self, writer: TraceWriter, replica: str | None = None) -> None:
        self.writer = writer
        self.replica = replica
        self.step = 0
        self.disabled = False
        self.details_seen = False  # a call with iteration details was seen
        # What the plugin costs, measured by itself: calls to record(), the time spent in them
        # (on vLLM's output loop), and the wall time since it started.
        self.calls = 0
        self.busy_s = 0.0
        self.started = time.monotonic()

    def cost(self) -> str:
        """One line on what the plugin has cost so far (logged with vLLM's stats line)."""
        wall = max(time.monotonic() - self.started, 1e-9)
        each = self.busy_s / self.calls * 1e6 if self.calls else 0.0
        return (
            f"relplan trace cost: {self.calls} record() calls took {self.busy_s * 1e3:.1f} ms"
            f" on vLLM's output loop ({each:.0f} us each, {100 * self.busy_s / wall:.3f} % of"
            f" {wall:.0f} s); the writer thread used {self.writer.cpu_s * 1e3:.1f} ms CPU"
            f" ({100 * self.writer.cpu_s / wall:.3f} %) for {self.writer.written} rows"
        )

    def record(self, scheduler_stats: Any, iteration_stats: Any) -> None:
        """Turn one iteration's stats into records; never raises."""
        if self.disabled or self.writer.disabled:
            return
        began = time.perf_counter()
        try:
            rows: list[Row] = []
            details = getattr(scheduler_stats, "iteration_details", None)
            self.details_seen = self.details_seen or details is not None
            # With iteration details on, vLLM attaches them to every step that scheduled
            # tokens (0.32: EngineCore.capture_iteration_details); a call without them then
            # carries only finished requests or idle stats and is not a step.
            if details is not None or not self.details_seen:
                self.step += 1
                row = step_row(self.step, scheduler_stats, iteration_stats, self.replica)
                if row is not None:
                    rows.append(row)
                else:
                    self.step -= 1
            if iteration_stats is not None:
                t_end = _num(iteration_stats, "iteration_timestamp", 0.0) or time.time()
                for f in getattr(iteration_stats, "finished_requests", None) or ():
                    rows.extend(request_rows(f, t_end, self.replica))
            self.writer.add(rows)
        except Exception as exc:  # a vLLM release shaped differently: stop, say so once
            self.disabled = True
            log.error("relplan trace disabled: could not read vLLM's stats: %r", exc)
        self.calls += 1
        self.busy_s += time.perf_counter() - began


def from_env(env: dict[str, str] | None = None) -> TraceRecorder | None:
    """A recorder writing into $RELPLAN_TRACE_DIR, or None (with one log line) without it."""
    env = dict(os.environ) if env is None else env
    directory = env.get(ENV_DIR)
    if not directory:
        log.warning("relplan trace: %s is not set; the plugin writes nothing", ENV_DIR)
        return None
    try:
        writer = TraceWriter(
            Path(directory),
            rows=int(env.get(ENV_ROWS, "50000")),
            seconds=float(env.get(ENV_SECONDS, "10")),
            queue_items=int(env.get(ENV_QUEUE, "10000")),
        )
    except Exception as exc:
        log.error("relplan trace disabled: cannot write into %s: %s", directory, exc)
        return None
    return TraceRecorder(writer, env.get(ENV_REPLICA) or None)
