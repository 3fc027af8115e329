"""One drill end to end (docs/drill.md): check the endpoint, measure or take Ĉ, plan, send,
record, ingest, and the delivery verdict from relplan's delivery analysis.

`prepare` does everything before the first planned call (so the CLI can print the plan);
`execute` runs it. Both return plain data; the text is in `relplan.text.drill`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import random
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from relplan import __version__
from relplan.drill import plan as plan_mod
from relplan.drill.capacity import Level, Ramp
from relplan.drill.policies import Policy, RetryBudget
from relplan.drill.prompts import Lengths, make_prompt, prefix_words
from relplan.errors import InputError, UsageError
from relplan.values import short

if TYPE_CHECKING:
    from relplan.ingest.outcome import IngestReport


@dataclass
class DrillOptions:
    url: str
    out: Path
    phases: list[plan_mod.PhaseSpec]
    capacity: float | None  # None: measure it (--capacity auto)
    policy: Policy
    deadline: float = 10.0
    cancel: bool = True
    budget: RetryBudget | None = None
    seed: int = 1
    model: str | None = None
    api: str = "completions"
    stream: bool = True
    ignore_eos: bool = True
    prompt_tokens: Lengths = field(default_factory=lambda: Lengths("fixed", 2000))
    prefix_tokens: int = 64
    output_tokens: Lengths = field(default_factory=lambda: Lengths("fixed", 64))
    metrics_url: str | None = ""  # "": URL's /metrics; None: no scraping
    scrape_every: float = 1.0
    max_in_flight: int = 256
    max_duration: float = 900.0
    yes: bool = False
    name: str = "drill"
    ramp_seconds: float = 30.0
    ramp_max: int = 64
    flags: dict[str, Any] = field(default_factory=dict)


@dataclass
class Prepared:
    opts: DrillOptions
    root: str
    model: str
    ramp: Ramp | None
    capacity: float
    plan: plan_mod.Plan
    calls: int
    ignore_eos: bool
    id_prefix: str
    notes: list[str]
    folder: Any  # writer.Folder, opened

    @property
    def expected_peak_in_flight(self) -> float:
        return self.plan.peak_rate * self.opts.deadline

    @property
    def expected_peak_with_retries(self) -> float:
        return self.expected_peak_in_flight * (self.opts.policy.retries + 1)


@dataclass
class Outcome:
    prepared: Prepared
    t0: float
    attempts: int
    calls_started: int
    delivered_calls: int
    refused_cap: int
    refused_budget: int
    interrupted: bool
    hard_stopped: bool
    scrapes: int
    scrape_failed: int
    last_scrape_error: str | None
    ingest: IngestReport  # what `relplan ingest` stored of the drill's files
    delivery: Any  # relplan.analyses.delivery.Delivery
    wall_s: float


def root_url(url: str) -> str:
    """`http://127.0.0.1:8000` from the URL as given (a trailing /v1 or / is dropped)."""
    p = urllib.parse.urlsplit(url.strip())
    if p.scheme not in ("http", "https") or not p.hostname:
        raise UsageError("URL", f"{url!r}: expected http://HOST:PORT (an OpenAI-compatible server)")
    try:
        p.port  # noqa: B018  # a bad port raises here
    except ValueError:
        raise UsageError("URL", f"{url!r}: the port is not a number in 1-65535") from None
    path = p.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[:-3]
    return urllib.parse.urlunsplit((p.scheme, p.netloc, path, "", ""))


def is_loopback(url: str) -> bool:
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _probe(root: str, model: str, api: str, ignore_eos: bool) -> tuple[bool, str, list[str]]:
    """One tiny completion (max_tokens 1, X-Request-Id drill-probe): the endpoint serves the
    model; ignore_eos is dropped when the server refuses it (HTTP 400 naming it); the reply's id
    tells how the server names executions (vLLM: `cmpl-<X-Request-Id>`)."""
    import httpx

    from relplan.drill.client import Endpoint

    ep = Endpoint(root, model, api, stream=False, ignore_eos=ignore_eos)
    notes: list[str] = []
    for _ in range(2):
        try:
            resp = httpx.post(
                ep.url,
                json=ep.body("hello", 1),
                headers={"X-Request-Id": "drill-probe"},
                timeout=60,
                trust_env=False,
            )
        except httpx.HTTPError as exc:
            raise InputError(f"the probe completion failed ({exc})", ep.url) from None
        if resp.status_code == 400 and ep.ignore_eos and "ignore_eos" in resp.text:
            ep.ignore_eos = False
            notes.append("the server refused ignore_eos: outputs may end before max_tokens")
            continue
        if resp.status_code != 200:
            text = " ".join(resp.text[:200].split())
            raise InputError(f"the probe completion got HTTP {resp.status_code}: {text}", ep.url)
        try:
            data = resp.json()
            ok = isinstance(data, dict) and isinstance(data.get("choices"), list)
        except ValueError:
            ok = False
        if not ok:
            raise InputError(
                "the probe completion is not an OpenAI completion (no choices)", ep.url
            )
        prefix = ""
        rid = str(data.get("id", ""))
        if rid.endswith("-drill-probe"):
            prefix = rid[: -len("drill-probe")]
        return ep.ignore_eos, prefix, notes
    return ep.ignore_eos, "", notes


def prepare(opts: DrillOptions, on_level: Callable[[Level], None] | None = None) -> Prepared:
    from relplan.drill.client import Endpoint, check_models
    from relplan.drill.writer import Folder, check_out

    root = root_url(opts.url)
    if not is_loopback(root) and not opts.yes:
        raise UsageError(
            "URL",
            f"{root} is not a loopback address: a drill overloads the server on purpose;"
            " give --yes to run it against this server",
        )
    if opts.deadline <= 0:
        raise UsageError("--deadline", "must be more than 0 s")
    if opts.max_in_flight < 1:
        raise UsageError("--max-in-flight", "must be 1 or more")
    check_out(opts.out)
    models = check_models(root, timeout=10)
    if opts.model is None and not models:
        raise InputError("the server lists no model; give --model", root + "/v1/models")
    model = opts.model or models[0]
    ignore_eos, id_prefix, notes = _probe(root, model, opts.api, opts.ignore_eos)
    # The plan without Ĉ would fail later; check the duration first, before a ramp runs.
    duration = sum(p.seconds for p in opts.phases)
    if duration > opts.max_duration:
        raise UsageError(
            "--max-duration",
            f"the phases last {short(duration)} s, more than --max-duration {short(opts.max_duration)} s",
        )
    existed = opts.out.exists()
    folder = Folder(opts.out).__enter__()
    ramp: Ramp | None = None
    capacity = opts.capacity
    if capacity is None:
        ep = Endpoint(root, model, opts.api, opts.stream, ignore_eos, id_prefix)
        try:
            ramp = _ramp(ep, opts, folder, on_level)
        except KeyboardInterrupt:
            # Ctrl-C before the drill started: "nothing stored" stays true.
            folder.__exit__(None, None, None)
            folder.remove(existed)
            raise
        if ramp.capacity is None:
            folder.__exit__(None, None, None)
            folder.remove(existed)
            raise InputError("the ramp delivered no call: Ĉ cannot be measured", root)
        capacity = ramp.capacity
    plan = plan_mod.build_plan(opts.phases, capacity, opts.seed)
    return Prepared(
        opts,
        root,
        model,
        ramp,
        capacity,
        plan,
        len(plan.arrivals),
        ignore_eos,
        id_prefix,
        notes,
        folder,
    )


def _ramp(ep: Any, opts: DrillOptions, folder: Any, on_level: Any) -> Ramp:
    from relplan.drill.capacity import measure

    return measure(
        ep,
        level_seconds=opts.ramp_seconds,
        prefix=prefix_words(opts.prefix_tokens),
        prompts=opts.prompt_tokens,
        outputs=opts.output_tokens,
        seed=opts.seed,
        sink=folder.ramp_attempt,
        max_concurrency=opts.ramp_max,
        progress=on_level,
    )


def call_specs(p: Prepared) -> list[Any]:
    from relplan.drill.client import CallSpec

    rng = random.Random(p.opts.seed * 65_537 + 1)
    prefix = prefix_words(p.opts.prefix_tokens)
    out = []
    for i, (t, phase) in enumerate(p.plan.arrivals):
        length = p.opts.prompt_tokens.draw(rng)
        max_tokens = p.opts.output_tokens.draw(rng)
        out.append(
            CallSpec(plan_mod.call_id(i), t, phase, make_prompt(prefix, length, rng), max_tokens)
        )
    return out


def metrics_url(p: Prepared) -> str | None:
    if p.opts.metrics_url is None:
        return None
    return p.opts.metrics_url or p.root + "/metrics"


async def _scrape_loop(url: str, every: float, folder: Any) -> None:
    from relplan.record import scrape

    start = time.monotonic()
    tick = 0
    while True:
        taken = time.time()
        try:
            body = await asyncio.to_thread(scrape, url, min(10.0, max(every, 1.0)))
        except InputError as exc:
            folder.scrape_error(str(exc))
        else:
            folder.scrape(taken, body)
        tick = max(tick + 1, int((time.monotonic() - start) / every) + 1)
        await asyncio.sleep(max(0.0, start + tick * every - time.monotonic()))


def execute(
    p: Prepared,
    *,
    tick: Callable[[float, Any], None] | None = None,
    on_start: Callable[[float], None] | None = None,
) -> Outcome:
    from relplan.drill.client import Drill, DrillConfig, Endpoint

    o = p.opts
    folder = p.folder
    cfg = DrillConfig(
        endpoint=Endpoint(p.root, p.model, o.api, o.stream, p.ignore_eos, p.id_prefix),
        policy=o.policy,
        deadline=o.deadline,
        cancel=o.cancel,
        max_in_flight=o.max_in_flight,
        budget=o.budget,
        seed=o.seed,
        hard_stop=o.max_duration,
        drain_end=p.plan.duration,
    )
    drill = Drill(cfg, call_specs(p), folder.attempt, tick=tick)
    scrape_url = metrics_url(p)
    wall = time.monotonic()

    async def main() -> None:
        scraper = None
        if scrape_url is not None:
            scraper = asyncio.create_task(_scrape_loop(scrape_url, o.scrape_every, folder))
        try:
            await drill.run(on_start)
        finally:
            if scraper is not None:
                scraper.cancel()
                await asyncio.gather(scraper, return_exceptions=True)

    try:
        asyncio.run(main())
    finally:
        folder.__exit__(None, None, None)
    wall_s = time.monotonic() - wall
    c = drill.counters
    hard = drill.elapsed() >= o.max_duration - 1e-6
    folder.manifest(manifest(p, drill.t0, c, hard, scrape_url))
    rep = folder.ingest()
    return Outcome(
        prepared=p,
        t0=drill.t0,
        attempts=folder.attempts,
        calls_started=c.calls_started,
        delivered_calls=c.delivered,
        refused_cap=c.refused_cap,
        refused_budget=c.refused_budget,
        interrupted=c.interrupted > 0,
        hard_stopped=hard,
        scrapes=folder.scrapes,
        scrape_failed=folder.scrape_failed,
        last_scrape_error=folder.last_scrape_error,
        ingest=rep,
        delivery=delivery(folder.out),
        wall_s=wall_s,
    )


def manifest(p: Prepared, t0: float, c: Any, hard: bool, scrape_url: str | None) -> Any:
    from relplan.models import Phase, RunManifest

    o = p.opts
    return RunManifest(
        name=o.name,
        t0=t0,
        phases=[Phase(name=s.name, start=s.start, end=s.end) for s in p.plan.spans],
        capacity_calls_per_s=p.capacity,
        deadline_s=o.deadline,
        overload_phase=p.plan.overload_phase,
        notes=f"relplan drill of {p.root} ({p.model})",
        meta={
            "generator": f"relplan {__version__} drill",
            "url": p.root,
            "model": p.model,
            "seed": o.seed,
            "policy": o.policy.spec,
            "retry_before_first_token": o.policy.before_first_token,
            "retry_budget": None
            if o.budget is None
            else {"ratio": o.budget.ratio, "ttl_s": o.budget.ttl, "min_per_s": o.budget.min_per_s},
            "cancellation": "on" if o.cancel else "off",
            "api": o.api,
            "stream": o.stream,
            "ignore_eos": p.ignore_eos,
            "execution_id_prefix": p.id_prefix,
            "prompt_tokens": o.prompt_tokens.text(),
            "prefix_tokens": o.prefix_tokens,
            "output_tokens": o.output_tokens.text(),
            "phases": [ph.text() for ph in o.phases],
            "phase_rates_calls_per_s": {s.name: s.rate_per_s for s in p.plan.spans},
            "capacity_source": "given (--capacity)" if p.ramp is None else "ramp",
            "ramp": None if p.ramp is None else [asdict(lv) for lv in p.ramp.levels],
            "calls_planned": p.calls,
            "calls_started": c.calls_started,
            "attempts_sent": c.sent,
            "refused_in_flight_cap": c.refused_cap,
            "refused_retry_budget": c.refused_budget,
            "interrupted": c.interrupted > 0,
            "hard_stopped": hard,
            "metrics_url": scrape_url,
            "max_in_flight": o.max_in_flight,
            "max_duration_s": o.max_duration,
            "flags": o.flags,
        },
    )


def delivery(out: Path) -> Any:
    """relplan's delivery analysis (per phase, and its recovery verdict) on the workspace."""
    from relplan.analyses import AnalyzeOptions, analyze
    from relplan.drill.writer import WORKSPACE
    from relplan.workspace import open_workspace

    with open_workspace(out / WORKSPACE, read_only=True) as con:
        return analyze(con, AnalyzeOptions(only=["delivery"])).delivery
