"""Workloads: planned arrivals and prompt/output lengths, synthetic or from real traces.

Synthetic (docs/simulate.md, Built-in scenarios): Poisson arrivals per phase at `rate_x` x C^ (or
`rate_per_s`), restarted at each phase boundary; prompts Normal(mean, sd) rounded, at least
prefix + 1; outputs lognormal(ln median, sigma) rounded, at least 1, capped by `max_tokens`.
Arrivals and lengths come from separate seeded `random.Random` streams, so two conditions
with the same seed (and the same C^) see the same calls.

Traces (`workload.trace`):
- `azure`: Azure LLM inference trace CSV with columns `TIMESTAMP,ContextTokens,GeneratedTokens`
  (timestamps like `2023-11-16 18:15:46.6805900`);
- `burstgpt`: BurstGPT CSV with `Timestamp` (seconds), `Request tokens`, `Response tokens`
  (other columns such as `Model` and `Log Type` are ignored; failed requests with 0 response
  tokens keep their arrival and get 1 output token);
- `mooncake`: Mooncake JSON Lines with `timestamp` (milliseconds), `input_length`,
  `output_length` (other fields such as `hash_ids` are ignored);
- `proxy`: a relplan proxy log (docs/formats.md, Proxy attempts log; Parquet, CSV or JSONL): first attempts
  give arrivals (`t_planned`, else `t_sent`) and `prompt_tokens`; a proxy log has no output
  lengths, so those are drawn from the synthetic output distribution (`max_tokens` from the
  log when present).
With `use = "arrivals"` the trace's times (from `start_s`, divided by `time_scale`) replace the
phases' Poisson arrivals, cut at the end of the last phase; with `use = "lengths"` the arrivals
stay Poisson and each call's lengths are drawn (with replacement) from the trace's records.
Prompts shorter than the shared prefix simply get a shorter cache hit.
"""

from __future__ import annotations

import json
import math
import random
from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple, TextIO

from relplan.errors import InputError
from relplan.sim.scenario import Scenario, WorkloadSpec

Calls = tuple[list[float], list[int], list[int]]  # planned times (s from t0), prompts, outputs


def phase_bounds(wl: WorkloadSpec) -> list[tuple[str, float, float]]:
    out = []
    t = 0.0
    for p in wl.phases:
        out.append((p.name, t, t + p.seconds))
        t += p.seconds
    return out


def phase_rate(p_rate_x: float | None, p_rate: float | None, capacity: float | None) -> float:
    if p_rate is not None:
        return p_rate
    assert p_rate_x is not None
    assert capacity is not None
    return p_rate_x * capacity


def poisson_arrivals(wl: WorkloadSpec, capacity: float | None, rng: random.Random) -> list[float]:
    times: list[float] = []
    expo = rng.expovariate
    for p, (_, start, end) in zip(wl.phases, phase_bounds(wl), strict=False):
        rate = phase_rate(p.rate_x, p.rate_per_s, capacity)
        if rate <= 0:
            continue
        t = start
        while True:
            t += expo(rate)
            if t >= end:
                break
            times.append(t)
    return times


def draw_lengths(wl: WorkloadSpec, n: int, rng: random.Random) -> tuple[list[int], list[int]]:
    prompts: list[int] = []
    outs: list[int] = []
    lo = wl.prefix_tokens + 1
    mu = math.log(wl.output_median)
    for _ in range(n):
        p = round(rng.gauss(wl.prompt_mean, wl.prompt_sd))
        prompts.append(p if p >= lo else lo)
        o = round(rng.lognormvariate(mu, wl.output_sigma))
        outs.append(min(wl.max_tokens, max(1, o)))
    return prompts, outs


# Lengths this process drew from a fresh stream, by everything the draw reads: a what-if
# replays one workload under each control (they change the proxy, client or engine only),
# and drawing its 2,237 lengths again took 3.5 ms of each replay's 9 ms of set-up. The last
# few draws are kept; each use gets copies.
_DRAWN: dict[tuple[object, ...], tuple[list[int], list[int]]] = {}
_DRAWN_KEPT = 8


def _fresh_lengths(wl: WorkloadSpec, n: int, stream: str) -> tuple[list[int], list[int]]:
    """`draw_lengths(wl, n, random.Random(stream))`, drawn once per process."""
    key = (
        wl.prompt_mean,
        wl.prompt_sd,
        wl.prefix_tokens,
        wl.output_median,
        wl.output_sigma,
        wl.max_tokens,
        n,
        stream,
    )
    drawn = _DRAWN.get(key)
    if drawn is None:
        drawn = draw_lengths(wl, n, random.Random(stream))
        if len(_DRAWN) >= _DRAWN_KEPT:
            del _DRAWN[next(iter(_DRAWN))]
        _DRAWN[key] = drawn
    return list(drawn[0]), list(drawn[1])


def make_calls(scn: Scenario, capacity: float | None, seed: int) -> tuple[Calls, list[int]]:
    """Planned calls of a run, plus each call's max_tokens."""
    wl = scn.workload
    rng_arr = random.Random(f"relplan/arrivals/{seed}")
    lengths = f"relplan/lengths/{seed}"
    if wl.trace is None:
        times = poisson_arrivals(wl, capacity, rng_arr)
        prompts, outs = _fresh_lengths(wl, len(times), lengths)
        return (times, prompts, outs), [wl.max_tokens] * len(times)
    records = read_trace(wl.trace.path, wl.trace.format)
    end = phase_bounds(wl)[-1][2]
    if wl.trace.use == "lengths":
        rng_len = random.Random(lengths)  # picks first, then lengths: not a fresh draw
        times = poisson_arrivals(wl, capacity, rng_arr)
        picks = [records[int(rng_len.random() * len(records))] for _ in times]
        _, syn_outs = draw_lengths(wl, len(times), rng_len)
        prompts = [max(1, r.prompt_tokens) for r in picks]
        outs = [
            o if r.output_tokens is None else max(1, r.output_tokens)
            for r, o in zip(picks, syn_outs, strict=False)
        ]
        maxt = [wl.max_tokens if r.max_tokens is None else r.max_tokens for r in picks]
        outs = [min(o, m) for o, m in zip(outs, maxt, strict=False)]
        return (times, prompts, outs), maxt
    t_first = records[0].t + wl.trace.start_s
    chosen = [r for r in records if r.t >= t_first and (r.t - t_first) / wl.trace.time_scale < end]
    times = [(r.t - t_first) / wl.trace.time_scale for r in chosen]
    _, syn_outs = _fresh_lengths(wl, len(chosen), lengths)
    prompts = [max(1, r.prompt_tokens) for r in chosen]
    maxt = [wl.max_tokens if r.max_tokens is None else r.max_tokens for r in chosen]
    outs = [
        min(m, o if r.output_tokens is None else max(1, r.output_tokens))
        for r, o, m in zip(chosen, syn_outs, maxt, strict=False)
    ]
    return (times, prompts, outs), maxt


# ---- trace readers ---------------------------------------------------------------------


class TraceRecord(NamedTuple):
    """One request of a trace: its time (s), prompt length and, when known, output length
    and max_tokens."""

    t: float
    prompt_tokens: int
    output_tokens: int | None
    max_tokens: int | None


def detect_format(path: str) -> str:
    p = Path(path)
    name = p.name.lower()
    if name.endswith((".parquet", ".pq")):
        return "proxy"
    try:
        with open(p, encoding="utf-8") as fh:
            head = fh.readline()
    except OSError as exc:
        raise InputError(f"cannot read trace: {exc.strerror}", path) from None
    if head.lstrip().startswith("{"):
        return "proxy" if '"call_id"' in head else "mooncake"
    if "ContextTokens" in head and "GeneratedTokens" in head:
        return "azure"
    if "Request tokens" in head and "Response tokens" in head:
        return "burstgpt"
    if "call_id" in head:
        return "proxy"
    raise InputError(
        "cannot tell the trace format: expected an Azure CSV (TIMESTAMP,ContextTokens,"
        "GeneratedTokens), Mooncake JSONL or a relplan proxy log",
        path,
        1,
    )


# Traces read by this process, by format and the SHA-256 of the file's bytes: the what-if
# replays its fitted trace once per control and seed, and parsing it again each time took a
# third of a replay's set-up. RELPLAN_TRACE_CACHE=0 turns it off.
_READ: dict[tuple[str, str, bytes], list[TraceRecord]] = {}


def read_trace(path: str, fmt: str = "auto") -> list[TraceRecord]:
    """The trace's records in time order. A file read before by this process, with the same
    bytes, is not parsed again (the bytes are hashed before and after the parse: a file that
    changed meanwhile is not kept)."""
    import hashlib
    import os

    if os.environ.get("RELPLAN_TRACE_CACHE", "1") == "0":
        return _read_trace(path, fmt)

    def digest() -> bytes | None:
        try:
            return hashlib.sha256(Path(path).read_bytes()).digest()
        except OSError:
            return None  # the reader says why

    before = digest()
    key = (path, fmt, before or b"")
    if before is not None and key in _READ:
        return list(_READ[key])
    recs = _read_trace(path, fmt)
    if before is not None and digest() == before:
        _READ[key] = list(recs)
    return recs


def _read_trace(path: str, fmt: str) -> list[TraceRecord]:
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "azure":
        recs = _read_azure(path)
    elif fmt == "burstgpt":
        recs = _read_burstgpt(path)
    elif fmt == "mooncake":
        recs = _read_mooncake(path)
    else:
        recs = _read_proxy(path)
    if not recs:
        raise InputError("the trace holds no requests", path)
    recs.sort(key=lambda r: r.t)
    return recs


def _int_field(value: object, what: str, path: str, line: int) -> int:
    try:
        f = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(
            f"{what} must be a whole number of tokens, got {value!r}", path, line
        ) from None
    if f < 0 or f != int(f):
        raise InputError(f"{what} must be a whole number of tokens >= 0, got {value!r}", path, line)
    return int(f)


def _read_azure(path: str) -> list[TraceRecord]:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return _parse_azure(fh, path)
    except OSError as exc:
        raise InputError(f"cannot read trace: {exc.strerror}", path) from None


def _parse_azure(fh: TextIO, path: str) -> list[TraceRecord]:
    import csv

    out: list[TraceRecord] = []
    reader = csv.reader(fh)
    header = next(reader, None)
    if header is None:
        raise InputError(
            "empty file, expected a header TIMESTAMP,ContextTokens,GeneratedTokens", path, 1
        )
    cols = [h.strip() for h in header]
    try:
        it, ic, ig = (
            cols.index("TIMESTAMP"),
            cols.index("ContextTokens"),
            cols.index("GeneratedTokens"),
        )
    except ValueError:
        raise InputError(
            f"expected columns TIMESTAMP,ContextTokens,GeneratedTokens, got {','.join(cols)}",
            path,
            1,
        ) from None
    for line, row in enumerate(reader, start=2):
        if not row:
            continue
        if len(row) < len(cols):
            raise InputError(f"expected {len(cols)} fields, got {len(row)}", path, line)
        raw = row[it].strip()
        try:
            ts = datetime.fromisoformat(raw)
        except ValueError:
            raise InputError(
                f"TIMESTAMP {raw!r} is not a date-time like 2023-11-16 18:15:46.680590",
                path,
                line,
            ) from None
        if ts.tzinfo is None:
            ts = ts.replace(tzinfo=timezone.utc)
        out.append(
            TraceRecord(
                ts.timestamp(),
                _int_field(row[ic], "ContextTokens", path, line),
                _int_field(row[ig], "GeneratedTokens", path, line),
                None,
            )
        )
    return out


def _read_burstgpt(path: str) -> list[TraceRecord]:
    import csv

    out: list[TraceRecord] = []
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh)
            cols = [h.strip() for h in next(reader, [])]
            try:
                it, ip, io = (
                    cols.index("Timestamp"),
                    cols.index("Request tokens"),
                    cols.index("Response tokens"),
                )
            except ValueError:
                raise InputError(
                    "expected BurstGPT columns Timestamp, Request tokens, Response tokens, got "
                    + ",".join(cols),
                    path,
                    1,
                ) from None
            for line, row in enumerate(reader, start=2):
                if not row:
                    continue
                if len(row) < len(cols):
                    raise InputError(f"expected {len(cols)} fields, got {len(row)}", path, line)
                try:
                    ts = float(row[it])
                except ValueError:
                    raise InputError(
                        f"Timestamp must be seconds, got {row[it]!r}", path, line
                    ) from None
                out.append(
                    TraceRecord(
                        ts,
                        _int_field(row[ip], "Request tokens", path, line),
                        _int_field(row[io], "Response tokens", path, line),
                        None,
                    )
                )
    except OSError as exc:
        raise InputError(f"cannot read trace: {exc.strerror}", path) from None
    return out


def _read_mooncake(path: str) -> list[TraceRecord]:
    try:
        with open(path, encoding="utf-8") as fh:
            return _parse_mooncake(fh, path)
    except OSError as exc:
        raise InputError(f"cannot read trace: {exc.strerror}", path) from None


def _parse_mooncake(fh: TextIO, path: str) -> list[TraceRecord]:
    out: list[TraceRecord] = []
    for line, text in enumerate(fh, start=1):
        if not text.strip():
            continue
        try:
            rec = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc.msg}", path, line) from None
        if not isinstance(rec, dict):
            raise InputError("expected a JSON object per line", path, line)
        for key in ("timestamp", "input_length", "output_length"):
            if key not in rec:
                raise InputError(f"missing field {key!r} (Mooncake JSONL)", path, line)
        ts = rec["timestamp"]
        if not isinstance(ts, (int, float)) or isinstance(ts, bool):
            raise InputError(f"timestamp must be milliseconds, got {ts!r}", path, line)
        out.append(
            TraceRecord(
                float(ts) / 1000.0,
                _int_field(rec["input_length"], "input_length", path, line),
                _int_field(rec["output_length"], "output_length", path, line),
                None,
            )
        )
    return out


def _read_proxy(path: str) -> list[TraceRecord]:
    import polars as pl

    p = Path(path)
    try:
        if p.suffix in (".parquet", ".pq"):
            df = pl.read_parquet(p)
        elif p.suffix == ".csv":
            df = pl.read_csv(p, infer_schema_length=10000)
        else:
            df = pl.read_ndjson(p)
    except Exception as exc:  # polars raises many kinds; the message names the problem
        raise InputError(f"cannot read proxy log: {exc}", path) from None
    for col in ("call_id", "attempt", "t_sent"):
        if col not in df.columns:
            raise InputError(
                f"proxy log lacks column {col!r} (docs/formats.md, Proxy attempts log)", path
            )
    if "prompt_tokens" not in df.columns:
        raise InputError("proxy log lacks prompt_tokens, needed for a workload", path)
    first = df.with_row_index("_row").filter(pl.col("attempt") == 0)
    line_offset = 2 if p.suffix == ".csv" else 1
    tcol = "t_planned" if "t_planned" in df.columns else "t_sent"
    out: list[TraceRecord] = []
    has_max = "max_tokens" in df.columns
    for row in first.iter_rows(named=True):
        t = row[tcol] if row[tcol] is not None else row["t_sent"]
        if isinstance(t, datetime):
            t = t.timestamp()
        if not isinstance(t, (int, float)) or row["prompt_tokens"] is None:
            raise InputError(
                f"first attempt of call {row['call_id']!r} lacks a time or prompt_tokens",
                path,
                row["_row"] + line_offset,
            )
        mt = row["max_tokens"] if has_max else None
        out.append(
            TraceRecord(
                float(t), int(row["prompt_tokens"]), None, int(mt) if mt is not None else None
            )
        )
    return out
