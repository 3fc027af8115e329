"""A loopback OpenAI-compatible server that behaves like an engine: `slots` requests run at a
time (the rest wait in a queue), each takes `prefill_s` per prompt word then `token_s` per
output token. It answers GET /v1/models, POST /v1/completions (SSE when `stream`, else JSON;
ids derived from X-Request-Id as vLLM 0.32 replies: `cmpl-<X-Request-Id>`) and GET /metrics (vLLM's
names for the gauges and counters the drill scrapes). A client that closes its connection
before the response ends is counted in `aborted` and its work stops, as vLLM aborts it.

Standard library only (asyncio streams), in a thread of its own:
`with FakeOpenAI(slots=2) as srv: srv.url`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any


@dataclass
class FakeOpenAI:
    slots: int = 4
    token_s: float = 0.002
    prefill_s: float = 0.0
    queue_cap: int | None = None  # more waiting than this: 503
    model: str = "fake-model"
    accept_ignore_eos: bool = True
    # what the server saw
    started: int = 0
    finished: int = 0
    aborted: int = 0
    shed: int = 0
    request_ids: list[str] = field(default_factory=list)
    headers_seen: list[dict[str, str]] = field(default_factory=list)
    running: int = 0
    waiting: int = 0
    prompt_tokens_total: int = 0

    def __post_init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *exc: object) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._main())
            left = asyncio.all_tasks(self._loop)
            for t in left:
                t.cancel()
            self._loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        finally:
            self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        self._sem = asyncio.Semaphore(self.slots)
        server = await asyncio.start_server(self._conn, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()

    async def _conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                hdrs = {}
                for ln in lines[1:]:
                    if ":" in ln:
                        k, v = ln.split(":", 1)
                        hdrs[k.strip().lower()] = v.strip()
                n = int(hdrs.get("content-length", "0"))
                body = await reader.readexactly(n) if n else b""
                keep = await self._handle(method, path, hdrs, body, reader, writer)
                if not keep:
                    break
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    def _send(self, writer: asyncio.StreamWriter, status: int, body: bytes, ctype: str) -> None:
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 503: "Service Unavailable"}
        writer.write(
            f"HTTP/1.1 {status} {reason.get(status, 'X')}\r\nContent-Type: {ctype}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )

    def metrics_text(self) -> bytes:
        m = f'model_name="{self.model}"'
        return (
            "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
            "# TYPE vllm:num_requests_running gauge\n"
            f"vllm:num_requests_running{{{m}}} {self.running}\n"
            "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
            "# TYPE vllm:num_requests_waiting gauge\n"
            f"vllm:num_requests_waiting{{{m}}} {self.waiting}\n"
            "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n"
            "# TYPE vllm:prompt_tokens_total counter\n"
            f"vllm:prompt_tokens_total{{{m}}} {self.prompt_tokens_total}\n"
        ).encode()

    async def _handle(
        self,
        method: str,
        path: str,
        hdrs: dict[str, str],
        body: bytes,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> bool:
        if method == "GET" and path == "/v1/models":
            data = {"object": "list", "data": [{"id": self.model, "object": "model"}]}
            self._send(writer, 200, json.dumps(data).encode(), "application/json")
            await writer.drain()
            return False
        if method == "GET" and path == "/metrics":
            self._send(writer, 200, self.metrics_text(), "text/plain; version=0.0.4")
            await writer.drain()
            return False
        if method != "POST" or path != "/v1/completions":
            self._send(writer, 404, b'{"detail":"Not Found"}', "application/json")
            await writer.drain()
            return False
        req: dict[str, Any] = json.loads(body)
        if "ignore_eos" in req and not self.accept_ignore_eos:
            self._send(writer, 400, b'{"error":"unknown field ignore_eos"}', "application/json")
            await writer.drain()
            return False
        rid = hdrs.get("x-request-id", secrets.token_hex(4))
        self.request_ids.append(rid)
        self.headers_seen.append(hdrs)
        full = self.running >= self.slots and self.waiting >= (self.queue_cap or 0)
        if self.queue_cap is not None and full:
            self.shed += 1
            self._send(writer, 503, b'{"error":"queue full"}', "application/json")
            await writer.drain()
            return False
        work = asyncio.create_task(self._complete(rid, req, writer))
        gone = asyncio.create_task(reader.read(1))  # b"" when the client closes
        done, _ = await asyncio.wait({work, gone}, return_when=asyncio.FIRST_COMPLETED)
        if work in done and not gone.done():
            gone.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await gone
            return bool(work.result())
        if work not in done:
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await work
            self.aborted += 1
        return False

    async def _complete(self, rid: str, req: dict[str, Any], writer: asyncio.StreamWriter) -> bool:
        prompt = str(req.get("prompt", ""))
        words = len(prompt.split())
        n_out = int(req.get("max_tokens", 16))
        cid = f"cmpl-{rid}"
        self.waiting += 1
        queued = True
        try:
            async with self._sem:
                self.waiting -= 1
                queued = False
                self.running += 1
                self.started += 1
                try:
                    await asyncio.sleep(words * self.prefill_s)
                    self.prompt_tokens_total += words
                    return await self._emit(cid, req, words, n_out, writer)
                finally:
                    self.running -= 1
        finally:
            if queued:
                self.waiting -= 1

    async def _emit(
        self, cid: str, req: dict[str, Any], words: int, n_out: int, writer: asyncio.StreamWriter
    ) -> bool:
        usage = {"prompt_tokens": words, "completion_tokens": n_out, "total_tokens": words + n_out}
        if not req.get("stream"):
            await asyncio.sleep(n_out * self.token_s)
            data = {
                "id": cid,
                "object": "text_completion",
                "model": self.model,
                "choices": [{"index": 0, "text": " tok" * n_out, "finish_reason": "length"}],
                "usage": usage,
            }
            self._send(writer, 200, json.dumps(data).encode(), "application/json")
            await writer.drain()
            self.finished += 1
            return False
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
        )
        for i in range(n_out):
            await asyncio.sleep(self.token_s)
            chunk = {
                "id": cid,
                "object": "text_completion",
                "model": self.model,
                "choices": [
                    {
                        "index": 0,
                        "text": " tok",
                        "finish_reason": "length" if i == n_out - 1 else None,
                    }
                ],
                "usage": None,
            }
            writer.write(f"data: {json.dumps(chunk)}\n\n".encode())
            await writer.drain()
        if (req.get("stream_options") or {}).get("include_usage"):
            last = {
                "id": cid,
                "object": "text_completion",
                "model": self.model,
                "choices": [],
                "usage": usage,
            }
            writer.write(f"data: {json.dumps(last)}\n\n".encode())
        writer.write(b"data: [DONE]\n\n")
        await writer.drain()
        self.finished += 1
        return False
