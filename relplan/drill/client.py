"""The HTTP attempts of a drill: one async attempt against an OpenAI-compatible endpoint, and
the open-loop driver that sends the planned calls with their retries (docs/drill.md).

The only importer of httpx in relplan; loaded by `relplan drill` only.

An attempt is one POST with the headers `X-Request-Id: <call_id>-<attempt>`,
`X-Relplan-Call: <call_id>` and `X-Relplan-Attempt: <attempt>`. It ends as:
- `delivered`: status 200 and the whole response read (the SSE stream's `[DONE]`, or the JSON
  body) before the deadline D;
- `client_gone`: D passed first (or the drill was stopped). With cancellation on the
  connection is closed at D, so the server sees the client leave; with it off the attempt
  counts as given up at D (its record ends there and the retry may start) while the response
  is still read to its end in the background, as a gateway with `proxy_ignore_client_abort
  on` does;
- `shed`: status 429 or 503 (the server refused it), or the client refused to send it (the
  in-flight cap, the retry budget; status empty);
- `error`: any other status, a connection failure, or a body that is not OpenAI's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from relplan.drill.policies import Policy, RetryBudget
from relplan.errors import InputError
from relplan.values import short
from relplan.wording import Words

# Why an attempt's reply is not a delivered completion (`Reading.error`), worded by
# relplan/text/drill.py (relplan/wording.py).
Said = Literal["http_status", "stream_error", "no_choices", "no_done", "transport", "not_openai"]
_say: Words[Said] = Words("relplan.text.drill")

SHED_STATUSES = frozenset({429, 503})


@dataclass
class Endpoint:
    root: str  # scheme://host:port[/prefix], without /v1
    model: str
    api: str = "completions"  # completions | chat
    stream: bool = True
    ignore_eos: bool = True
    # How the server names an execution after the X-Request-Id it was sent: "cmpl-" for vLLM
    # (its reply id is `cmpl-<X-Request-Id>`, `chatcmpl-` for chat), "" for a server that
    # does not use it (the X-Request-Id itself is recorded then).
    id_prefix: str = ""

    @property
    def url(self) -> str:
        path = "/v1/chat/completions" if self.api == "chat" else "/v1/completions"
        return self.root + path

    def body(self, prompt: str, max_tokens: int) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens}
        if self.api == "chat":
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        if self.stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        if self.ignore_eos:
            body["ignore_eos"] = True
        return body


@dataclass
class Record:
    """One line of attempts.jsonl (docs/formats.md, Proxy attempts log)."""

    call_id: str
    attempt: int
    t_planned: float
    t_sent: float
    t_end: float
    outcome: str
    status: int | None
    model: str
    prompt_tokens: int | None
    max_tokens: int
    execution_id: str | None

    def json(self) -> str:
        return json.dumps(self.__dict__, separators=(",", ":"))


@dataclass
class Reading:
    """What the reader learnt of one attempt so far."""

    status: int | None = None
    execution_id: str | None = None
    prompt_tokens: int | None = None
    first_token: float | None = None
    complete: bool = False
    retry_after: float | None = None
    error: str | None = None


def headers(call_id: str, attempt: int) -> dict[str, str]:
    return {
        "X-Request-Id": f"{call_id}-{attempt}",
        "X-Relplan-Call": call_id,
        "X-Relplan-Attempt": str(attempt),
    }


def _retry_after(resp: httpx.Response) -> float | None:
    ms = resp.headers.get("retry-after-ms")
    raw = resp.headers.get("retry-after")
    with contextlib.suppress(ValueError):
        if ms is not None:
            return float(ms) / 1000
        if raw is not None:
            return float(raw)
    return None


def _take_chunk(r: Reading, data: dict[str, Any], now: float) -> None:
    if r.execution_id is None and isinstance(data.get("id"), str):
        r.execution_id = data["id"]
    usage = data.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("prompt_tokens"), int):
        r.prompt_tokens = usage["prompt_tokens"]
    for ch in data.get("choices") or []:
        if not isinstance(ch, dict):
            continue
        delta = ch.get("delta")
        text = ch.get("text") or (delta.get("content") if isinstance(delta, dict) else None)
        if text and r.first_token is None:
            r.first_token = now


async def read_attempt(
    client: httpx.AsyncClient,
    ep: Endpoint,
    hdrs: dict[str, str],
    body: dict[str, Any],
    r: Reading,
    now: Callable[[], float],
) -> None:
    """Send one attempt and read its response into `r` (never raises but CancelledError)."""
    try:
        async with client.stream("POST", ep.url, json=body, headers=hdrs) as resp:
            r.status = resp.status_code
            if resp.status_code != 200:
                r.retry_after = _retry_after(resp)
                text = (await resp.aread())[:200].decode("utf-8", "replace")
                r.error = _say("http_status", status=resp.status_code, body=text)
                return
            if ep.stream:
                async for line in resp.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    payload = line[5:].strip()
                    if payload == "[DONE]":
                        r.complete = True
                        break
                    data = json.loads(payload)
                    if isinstance(data, dict):
                        if "error" in data and "choices" not in data:
                            r.error = _say("stream_error", error=data["error"])
                            return
                        _take_chunk(r, data, now())
            else:
                data = json.loads(await resp.aread())
                if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
                    r.error = _say("no_choices")
                    return
                _take_chunk(r, data, now())
                r.complete = True
            if not r.complete:
                r.error = _say("no_done")
    except httpx.HTTPError as exc:
        r.error = _say("transport", exc=exc)
    except (ValueError, UnicodeDecodeError) as exc:
        r.error = _say("not_openai", exc=exc)


def outcome_of(r: Reading, gave_up: bool) -> str:
    if gave_up:
        return "client_gone"
    if r.status == 200 and r.complete and r.error is None:
        return "delivered"
    if r.status in SHED_STATUSES:
        return "shed"
    return "error"


@dataclass(frozen=True)
class CallSpec:
    call_id: str
    t_planned: float  # seconds from the start
    phase: str
    prompt: str
    max_tokens: int

    @property
    def prompt_words(self) -> int:
        """The prompt's length in words: its prompt_tokens when no reply gave the usage."""
        return len(self.prompt.split())


@dataclass
class Counters:
    sent: int = 0
    in_flight: int = 0
    delivered: int = 0
    calls_started: int = 0
    calls_done: int = 0
    refused_cap: int = 0
    refused_budget: int = 0
    interrupted: int = 0  # Ctrl-C presses


@dataclass
class DrillConfig:
    endpoint: Endpoint
    policy: Policy
    deadline: float
    cancel: bool
    max_in_flight: int
    budget: RetryBudget | None = None
    seed: int = 0
    connect_timeout: float = 5.0
    hard_stop: float = float("inf")  # seconds from the start: cancel everything
    drain_end: float = float("inf")  # seconds from the start: stop background reads


Sink = Callable[[Record], None]
Tick = Callable[[float, Counters], None]


def make_client(cfg_connect_timeout: float, limit: int) -> httpx.AsyncClient:
    # No read timeout: the deadline D is enforced around the whole attempt.
    return httpx.AsyncClient(
        timeout=httpx.Timeout(None, connect=cfg_connect_timeout),
        limits=httpx.Limits(max_connections=limit, max_keepalive_connections=limit),
        trust_env=False,
    )


@dataclass
class Drill:
    """Sends `calls` open loop, retries by the policy, hands every finished attempt to `sink`."""

    cfg: DrillConfig
    calls: list[CallSpec]
    sink: Sink
    t0: float = 0.0  # epoch of the start, set by run()
    counters: Counters = field(default_factory=Counters)
    tick: Tick | None = None
    tick_every: float = 1.0

    def __post_init__(self) -> None:
        self._m0 = 0.0
        self._stop_sending = asyncio.Event()
        self._kill = asyncio.Event()
        self._readers: set[asyncio.Task[None]] = set()
        self._background: set[asyncio.Task[None]] = set()
        self._rng = random.Random(self.cfg.seed * 1_000_003 + 17)

    # time
    def now(self) -> float:
        return self.t0 + (time.monotonic() - self._m0)

    def elapsed(self) -> float:
        return time.monotonic() - self._m0

    def stop_sending(self) -> None:
        self._stop_sending.set()

    def kill(self) -> None:
        self._stop_sending.set()
        self._kill.set()

    def _on_sigint(self) -> None:
        self.counters.interrupted += 1
        if self.counters.interrupted == 1:
            self.stop_sending()
        else:
            self.kill()

    async def run(self, on_start: Callable[[float], None] | None = None) -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        try:
            limit = self.cfg.max_in_flight + 1
            async with make_client(self.cfg.connect_timeout, limit) as client:
                self.client = client
                self._m0 = time.monotonic()
                self.t0 = time.time()
                if on_start is not None:
                    on_start(self.t0)
                ticker = asyncio.create_task(self._ticker())
                killer = asyncio.create_task(self._killer())
                try:
                    tasks = await self._schedule()
                    await self._finish(tasks)
                finally:
                    ticker.cancel()
                    killer.cancel()
                    if self.tick is not None:
                        self.tick(self.elapsed(), self.counters)
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signal.SIGINT)

    async def _ticker(self) -> None:
        while self.tick is not None:
            self.tick(self.elapsed(), self.counters)
            await asyncio.sleep(self.tick_every)

    async def _killer(self) -> None:
        """At the hard stop (--max-duration) everything in flight is cancelled."""
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._kill.wait(), self.cfg.hard_stop - self.elapsed())
        self.kill()
        for t in [*self._readers, *self._background]:
            t.cancel()

    async def _wait_stop(self, seconds: float) -> bool:
        """Sleep `seconds`; True when sending was stopped meanwhile."""
        if seconds > 0:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stop_sending.wait(), seconds)
        return self._stop_sending.is_set()

    async def _schedule(self) -> list[asyncio.Task[None]]:
        tasks: list[asyncio.Task[None]] = []
        for spec in self.calls:
            if await self._wait_stop(spec.t_planned - self.elapsed()):
                break
            tasks.append(asyncio.create_task(self._call(spec)))
            self.counters.calls_started += 1
        return tasks

    async def _finish(self, tasks: list[asyncio.Task[None]]) -> None:
        if tasks:
            await asyncio.wait(tasks)
        # Background reads (cancellation off) run until the drain ends, then are closed.
        pending = set(self._background)
        if pending:
            left = self.cfg.drain_end - self.elapsed()
            if not self._stop_sending.is_set() and left > 0:
                await asyncio.wait(pending, timeout=left)
            elif self._stop_sending.is_set() and not self._kill.is_set():
                kill = asyncio.create_task(self._kill.wait())
                await asyncio.wait({*pending, kill}, return_when=asyncio.FIRST_COMPLETED)
                kill.cancel()
                if not self._kill.is_set():
                    await asyncio.wait(pending)
            for t in list(self._background):
                t.cancel()
            if self._background:
                await asyncio.wait(set(self._background))

    def _refused(self, spec: CallSpec, attempt: int) -> None:
        t = self.now()
        self.sink(
            Record(
                spec.call_id,
                attempt,
                self.t0 + spec.t_planned,
                t,
                t,
                "shed",
                None,
                self.cfg.endpoint.model,
                spec.prompt_words,
                spec.max_tokens,
                None,
            )
        )

    async def _call(self, spec: CallSpec) -> None:
        pol = self.cfg.policy
        try:
            for k in range(pol.retries + 1):
                if (
                    k > 0
                    and self.cfg.budget is not None
                    and not self.cfg.budget.try_retry(self.elapsed())
                ):
                    self.counters.refused_budget += 1
                    self._refused(spec, k)
                    return
                if self.counters.in_flight >= self.cfg.max_in_flight:
                    self.counters.refused_cap += 1
                    self._refused(spec, k)
                    return
                if k == 0 and self.cfg.budget is not None:
                    self.cfg.budget.first_attempt(self.elapsed())
                r, outcome = await self._attempt(spec, k)
                if outcome == "delivered":
                    self.counters.delivered += 1
                    return
                if k == pol.retries or self._stop_sending.is_set():
                    return
                status = None if outcome == "client_gone" else r.status
                if status == 200:
                    status = None  # a broken 200 stream is retried like a lost connection
                if not pol.retryable(status, got_token=r.first_token is not None):
                    return
                if await self._wait_stop(pol.wait_s(k, self._rng, r.retry_after)):
                    return
        finally:
            self.counters.calls_done += 1

    async def _attempt(self, spec: CallSpec, k: int) -> tuple[Reading, str]:
        ep = self.cfg.endpoint
        r = Reading()
        t_sent = self.now()
        # An attempt that was sent is an execution even when no reply named it (the deadline
        # came first): it is recorded under the id the server gives it (docs/drill.md).
        sent_id = f"{ep.id_prefix}{spec.call_id}-{k}"
        self.counters.sent += 1
        self.counters.in_flight += 1
        reader = asyncio.create_task(
            read_attempt(
                self.client,
                ep,
                headers(spec.call_id, k),
                ep.body(spec.prompt, spec.max_tokens),
                r,
                self.now,
            )
        )
        self._readers.add(reader)

        def done(task: asyncio.Task[None]) -> None:
            self.counters.in_flight -= 1
            self._readers.discard(task)
            self._background.discard(task)

        reader.add_done_callback(done)
        await asyncio.wait({reader}, timeout=self.cfg.deadline)
        gave_up = not reader.done() or reader.cancelled()
        t_end = self.now()

        def emit(final: Reading) -> None:
            outcome = outcome_of(final, gave_up)
            self.sink(
                Record(
                    spec.call_id,
                    k,
                    self.t0 + spec.t_planned,
                    t_sent,
                    t_end,
                    outcome,
                    final.status,
                    ep.model,
                    spec.prompt_words if final.prompt_tokens is None else final.prompt_tokens,
                    spec.max_tokens,
                    None if outcome == "shed" else final.execution_id or sent_id,
                )
            )

        if not gave_up:
            emit(r)
            return r, outcome_of(r, False)
        if self.cfg.cancel or self._kill.is_set():
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            emit(r)
        else:
            # cancellation off: the response is read to its end in the background; the
            # record (given up at D) is written when the read ends, with the id it learnt.
            self._readers.discard(reader)
            self._background.add(reader)
            reader.add_done_callback(lambda _t: emit(r))
        return r, "client_gone"


def check_models(root: str, timeout: float) -> list[str]:
    """GET /v1/models: the model ids, or an InputError saying why this is no OpenAI server."""
    url = root + "/v1/models"
    try:
        resp = httpx.get(url, timeout=timeout, trust_env=False)
    except httpx.ConnectError as exc:
        raise InputError(f"cannot connect ({exc}); is the server running?", url) from None
    except httpx.TimeoutException:
        raise InputError(f"no answer within {short(timeout)} s", url) from None
    except httpx.HTTPError as exc:
        raise InputError(f"the request failed ({exc})", url) from None
    if resp.status_code != 200:
        raise InputError(
            f"HTTP {resp.status_code}; expected 200 and a model list: is this an"
            " OpenAI-compatible server (vLLM, or a gateway in front of it)?",
            url,
        )
    try:
        data = resp.json()
        ids = [str(m["id"]) for m in data["data"]]
    except (ValueError, KeyError, TypeError):
        raise InputError(
            "the reply is not an OpenAI model list ({'data': [{'id': ...}]}):"
            " not an OpenAI-compatible server",
            url,
        ) from None
    return ids
