"""Fit an incident: from a workspace, the scenario that replays it, with where each part came from.

The client and proxy parts are fitted in fit_observed.py; this module does the calls, the
engine and the scenario file.

docs/whatif.md (The fit) describes the choices; in short:
- calls: first attempts in the proxy log (planned arrival, prompt tokens, max_tokens), the
  output length from the engine trace's finished execution of the call; calls without one
  get a length drawn from the lognormal fitted to the known ones (fixed seed). Without a proxy
  log, the engine trace's `arrived` events are the calls;
- client: deadline = the most common duration of attempts the client cut; retries = the
  highest attempt number; backoff = the smallest and largest gap between an attempt's end and
  the call's next attempt; flags override each;
- proxy: cancellation (immediate, deferred by the median abort delay, or off) from what the
  engine did with executions whose client had left; coalescing from retries attached to a
  running execution;
- engine: the named profile (`--profile`, default h100-7b), its speed scaled so that its
  calibrated Ĉ is the Ĉ the data shows; the shared prefix from the engine's cached tokens.

The calls are written as a Mooncake JSON Lines trace beside the scenario (`<stem>.calls.jsonl`:
`timestamp` in ms, `input_length`, `output_length`), which the simulator reads with
`workload.trace` (use = arrivals). The trace's first call is the simulation's time 0, so the
first phase is shortened by the first call's offset from t0.
"""

from __future__ import annotations

import json
import math
import random
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from relplan import sql
from relplan.analyses import AnalyzeOptions, RunContext, resolve_context
from relplan.errors import NoDataError
from relplan.whatif.fit_observed import ClientFlags, fit_client, fit_proxy
from relplan.whatif.model import Provenance
from relplan.whatif.toml_out import dump_toml

__all__ = ["DEFAULT_PROFILE", "ClientFlags", "Fitted", "PlannedCall", "fit_incident", "write_calls"]

DEFAULT_PROFILE = "h100-7b"


@dataclass
class Fitted:
    data: dict[str, Any]  # raw scenario settings (what scenario.toml holds)
    provenance: list[Provenance]
    calls_path: Path
    ctx: RunContext
    profile_path: Path | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def client(self) -> dict[str, Any]:
        c: dict[str, Any] = self.data["client"]
        return c


@dataclass(frozen=True)
class PlannedCall:
    t: float  # epoch seconds
    prompt: int
    output: int | None
    max_tokens: int | None


def _calls(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> tuple[list[PlannedCall], str]:
    if ctx.has_proxy:
        rows = sql.rows(con, "whatif/planned_calls")
        calls = []
        for r in rows:
            if r["prompt_tokens"] is None:
                raise NoDataError(
                    f"call {r['call_id']!r} (proxy log source {r['source_id']}, row "
                    f"{r['source_row']}) has no prompt_tokens: the replay needs every call's "
                    "prompt length (docs/formats.md, Proxy attempts log)"
                )
            calls.append(
                PlannedCall(
                    float(r["t_planned"]),
                    int(r["prompt_tokens"]),
                    None if r["output_tokens"] is None else int(r["output_tokens"]),
                    None if r["max_tokens"] is None else int(r["max_tokens"]),
                )
            )
        return calls, "first attempts in the proxy log"
    if ctx.has_events:
        rows = sql.rows(con, "whatif/engine_arrivals")
        calls = [
            PlannedCall(
                float(r["t"]),
                int(r["prompt_tokens"] or 1),
                None if r["output_tokens"] is None else int(r["output_tokens"]),
                None,
            )
            for r in rows
        ]
        return calls, "executions' `arrived` events in the engine trace"
    raise NoDataError(
        "whatif needs the calls: a proxy log (first attempts) or an engine trace (arrived "
        "events); a metrics-only workspace cannot be replayed call by call"
    )


def _lognormal(outputs: list[int]) -> tuple[float, float]:
    logs = [math.log(o) for o in outputs if o > 0]
    if len(logs) < 2:
        return 300.0, 0.44
    return math.exp(statistics.median(logs)), statistics.pstdev(logs)


def write_calls(path: Path, calls: list[PlannedCall], outputs: list[int]) -> None:
    """The calls as a Mooncake JSONL trace, times in ms from the first call."""
    t_first = calls[0].t
    lines = [
        json.dumps(
            {
                "timestamp": round((c.t - t_first) * 1000.0, 3),
                "input_length": c.prompt,
                "output_length": o,
            }
        )
        for c, o in zip(calls, outputs, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _phases(ctx: RunContext, t_first: float, calls: list[PlannedCall]) -> list[dict[str, Any]]:
    offset = t_first - ctx.t0
    spans = [(p.name, p.start_s, p.end_s) for p in ctx.phases if p.end_s > p.start_s]
    if not spans:
        spans = [("incident", 0.0, ctx.s(ctx.t_end))]
    out: list[dict[str, Any]] = []
    for i, (name, a, b) in enumerate(spans):
        start = max(a, offset) if i == 0 else a
        seconds = b - start
        if seconds <= 0:
            continue
        n = sum(1 for c in calls if ctx.t0 + a <= c.t < ctx.t0 + b)
        out.append({"name": name, "seconds": round(seconds, 6), "rate_per_s": n / (b - a)})
    return out


def _engine(
    con: duckdb.DuckDBPyConnection,
    ctx: RunContext,
    profile: str | None,
    capacity: float,
    out_dir: Path,
    stem: str,
    prov: list[Provenance],
) -> tuple[dict[str, Any], Path | None]:
    from relplan.sim.profiles import load_profile, lookup_capacity
    from relplan.sim.scenario import EngineSpec, Scenario

    name = profile or DEFAULT_PROFILE
    prof, label = load_profile(name)
    base, _ = lookup_capacity(Scenario(name="calibration", engine=EngineSpec(profile=name)), prof)
    engine: dict[str, Any] = {"profile": name}
    written: Path | None = None
    if base is not None and abs(base / capacity - 1.0) > 0.02:
        scaled = prof.model_copy(update={"speed": round(prof.speed * base / capacity, 4)})
        written = out_dir / f"{stem}.profile.toml"
        pdata = scaled.model_dump(mode="json")
        pdata["provenance"] = dict(pdata.get("provenance") or {})
        pdata["provenance"]["speed"] = (
            f"relplan whatif fit: {prof.speed:g} x {base:g} / {capacity:g} (the profile's "
            f"calibrated C^ over the C^ of the incident)"
        )
        written.write_text(dump_toml(pdata), encoding="utf-8")
        engine["profile"] = str(written.resolve())
        prov.append(
            Provenance(
                part="engine",
                value=f"profile {name} at speed {scaled.speed:g}",
                source=f"{label} scaled so that its C^ {base:g} becomes the incident's {capacity:g} calls/s",
            )
        )
    else:
        why = "" if base is None else f" (its C^ {base:g} calls/s is within 2 % of the incident's)"
        prov.append(
            Provenance(
                part="engine",
                value=f"profile {name}",
                source=("--profile" if profile else "the default profile") + why,
            )
        )
    if ctx.has_steps:
        r = sql.one(con, "whatif/prefix_cached")
        if (
            r is not None
            and r["executions"]
            and r["mode_tokens"] is not None
            and 2 * r["at_mode"] >= r["executions"]
        ):
            prov.append(
                Provenance(
                    part="lengths",
                    value=f"shared prefix {r['mode_tokens']} tokens",
                    source=f"cached tokens of {r['at_mode']} of {r['executions']} executions' first step",
                )
            )
            engine["_prefix_tokens"] = int(r["mode_tokens"])
    return engine, written


def fit_incident(
    con: duckdb.DuckDBPyConnection,
    out: Path,
    *,
    flags: ClientFlags | None = None,
    profile: str | None = None,
    capacity: float | None = None,
    opts: AnalyzeOptions | None = None,
) -> Fitted:
    """Fit the workspace's incident and write `out` (scenario TOML) and its calls trace."""
    ctx = resolve_context(con, opts or AnalyzeOptions())
    cap = capacity if capacity is not None else ctx.capacity
    if cap is None:
        raise NoDataError(
            "whatif needs the capacity C^ of the incident's engine: give --capacity or a "
            "run.json with capacity_calls_per_s"
        )
    calls, calls_source = _calls(con, ctx)
    if not calls:
        raise NoDataError("the workspace holds no calls to replay")
    prov: list[Provenance] = [
        Provenance(
            part="arrivals", value=f"{len(calls)} calls at their planned times", source=calls_source
        )
    ]
    known = [c.output for c in calls if c.output is not None]
    median, sigma = _lognormal(known)
    rng = random.Random("relplan/whatif/fit")
    mu = math.log(median)
    max_tokens = max((c.max_tokens for c in calls if c.max_tokens is not None), default=2048)
    outputs = [
        c.output
        if c.output is not None
        else max(1, min(c.max_tokens or max_tokens, round(rng.lognormvariate(mu, sigma))))
        for c in calls
    ]
    prov.append(
        Provenance(
            part="lengths",
            value=f"{len(calls)} prompt lengths; {len(known)} output lengths",
            source=f"prompt_tokens of the first attempts; generated tokens of finished executions; "
            f"{len(calls) - len(known)} others drawn from lognormal(median {median:.0f}, sigma {sigma:.2f})",
        )
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    stem = out.name.split(".")[0] or "scenario"
    calls_path = out.parent / f"{stem}.calls.jsonl"
    write_calls(calls_path, calls, outputs)
    prompts = [c.prompt for c in calls]
    client = fit_client(con, ctx, flags or ClientFlags(), prov)
    proxy = fit_proxy(con, ctx, prov)
    engine, profile_path = _engine(con, ctx, profile, cap, out.parent, stem, prov)
    prefix = engine.pop("_prefix_tokens", 0)
    prov.append(
        Provenance(
            part="capacity",
            value=f"C^ {cap:g} calls/s",
            source="--capacity" if capacity is not None else f"from {ctx.capacity_source}",
        )
    )
    phases = _phases(ctx, calls[0].t, calls)
    names = {p["name"] for p in phases}
    data: dict[str, Any] = {
        "name": f"{_run_name(con)}-whatif",
        "description": "relplan whatif fit: the incident's calls, client, proxy and engine as observed",
        "seed": 1,
        "capacity_calls_per_s": cap,
        "overload_phase": ctx.overload_phase if ctx.overload_phase in names else None,
        "workload": {
            "phases": phases,
            "prompt_mean": statistics.fmean(prompts),
            "prompt_sd": statistics.pstdev(prompts) if len(prompts) > 1 else 0.0,
            "prefix_tokens": prefix,
            "output_median": round(median, 3),
            "output_sigma": round(sigma, 4),
            "max_tokens": max_tokens,
            "trace": {"path": str(calls_path.resolve()), "format": "mooncake", "use": "arrivals"},
        },
        "client": client,
        "proxy": proxy,
        "engine": engine,
    }
    if data["overload_phase"] is None:
        del data["overload_phase"]
    text = (
        "# "
        + "\n# ".join(f"{p.part}: {p.value} ({p.source})" for p in prov)
        + "\n"
        + dump_toml(data)
    )
    out.write_text(text, encoding="utf-8")
    return Fitted(data, prov, calls_path, ctx, profile_path)


def _run_name(con: duckdb.DuckDBPyConnection) -> str:
    r = sql.one(con, "whatif/run_name")
    return str(r["name"]) if r is not None and r["name"] else "incident"
