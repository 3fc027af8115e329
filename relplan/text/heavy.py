"""Text of the `heavy_requests` and `stuck` analyses for `relplan analyze` (registry rows name
these functions), and the cells of the report's tables (relplan/report/sections/heavy_requests.py
arranges them)."""

from __future__ import annotations

from relplan.analyses.context import RunContext
from relplan.analyses.heavy_requests import HeavyRequest, HeavyRequests, RequestLimit
from relplan.analyses.stuck import StuckEpisodes
from relplan.tables import format_table
from relplan.text.report import cell_number
from relplan.values import MISSING, clock, num, percent, short

_MEASURE = {"prefill": "prefill", "kv": "KV", "duration": "longest"}


def render_heavy_requests(h: HeavyRequests, ctx: RunContext | None = None) -> str:
    del ctx  # the same signature for every analysis; this one needs only its model
    lines = [f"The requests that hurt (top {h.top_k} per measure)"]
    rows = [
        [
            f"{_MEASURE[r.measure]} #{r.rank}",
            MISSING if r.call_id is None else f"{r.call_id}/{r.attempt}",
            r.execution_id or MISSING,
            r.model or MISSING,
            num(r.prompt_tokens),
            num(r.prefill_tokens),
            num(r.max_tokens),
            num(r.prefill_gpu_s, 2),
            num(r.kv_block_s),
            num(r.duration_s, 1),
            r.outcome or MISSING,
        ]
        for rs in (h.by_prefill, h.by_kv, h.by_duration)
        for r in rs
    ]
    if rows:
        head = ["measure", "call/attempt", "execution", "model", "prompt", "computed", "max_tokens"]
        head += ["prefill s", "KV block-s", "duration s", "outcome"]
        lines.append(format_table(head, rows))
    if h.limits:
        lines.append(
            format_table(
                ["limit on", "tier", "n", "limit", "cuts top", "cuts others"],
                [
                    [
                        x.measure,
                        x.tier or "all models",
                        num(x.n),
                        num(x.limit),
                        f"{x.cuts_top} of {x.top_n}",
                        num(x.cuts_rest),
                    ]
                    for x in h.limits
                ],
            )
        )
    seen = [t for t in h.timeouts if t.attempts]
    if seen:
        lines.append(
            format_table(
                ["cut by", "attempts", "measured", "min s", "median s", "max s"],
                [
                    [
                        t.kind.replace("_", " "),
                        num(t.attempts),
                        t.measured,
                        num(t.min_s, 1),
                        num(t.median_s, 1),
                        num(t.max_s, 1),
                    ]
                    for t in seen
                ],
            )
        )
    lines.append(h.finding)
    return "\n".join(lines)


def render_stuck(s: StuckEpisodes, ctx: RunContext | None = None) -> str:
    lines = [f"Stuck replicas (from the {s.source})"]
    if s.episodes:
        t0 = ctx.t0 if ctx is not None else 0.0
        rows = [
            [
                e.replica or MISSING,
                e.node or MISSING,
                clock(t0 + e.start_s) if ctx is not None else num(e.start_s, 0),
                num(e.duration_s, 0) + (" (ongoing)" if e.ongoing else ""),
                "yes" if e.alerted else "no",
                num(e.streams_caught),
            ]
            for e in s.episodes
        ]
        head = ["replica", "node", "from", "duration s", "alerted", "streams caught"]
        lines.append(format_table(head, rows))
    lines.append(s.finding)
    return "\n".join(lines)


# --- the report's tables (relplan/report/sections/heavy_requests.py) ----------------------

_REPORT_MEASURE = {"prefill": "most prefill", "kv": "most KV cache", "duration": "longest"}
_REPORT_KIND = {
    "first_token": "timeout to first token",
    "between_tokens": "timeout between tokens",
    "total": "total timeout",
    "unknown": "cut, timeout unknown",
}


def _name(r: HeavyRequest) -> str:
    if r.call_id is not None:
        attempt = f"/{r.attempt}" if r.attempt is not None else ""
        exe = f" ({r.execution_id})" if r.execution_id and r.measure != "duration" else ""
        return f"{r.call_id}{attempt}{exe}"
    return r.execution_id or "–"


def _figure(r: HeavyRequest) -> str:
    if r.measure == "prefill":
        return f"{cell_number(r.prefill_gpu_s, 2)} s of prefill steps"
    if r.measure == "kv":
        return f"{cell_number(r.kv_block_s, 0)} block-s"
    return f"{cell_number(r.duration_s)} s"


def _detail(r: HeavyRequest) -> str:
    parts = []
    if r.prompt_tokens is not None:
        parts.append(f"prompt {num(r.prompt_tokens)}")
    if r.prefill_tokens is not None and r.prefill_tokens != r.prompt_tokens:
        parts.append(f"{num(r.prefill_tokens)} computed")
    if r.max_tokens is not None:
        parts.append(f"max_tokens {num(r.max_tokens)}")
    if r.outcome is not None:
        parts.append(r.outcome)
    return ", ".join(parts) or "–"


def _limit_row(x: RequestLimit) -> list[str]:
    tier = x.tier or "all models"
    if x.limit is None:
        return [
            f"{x.measure} limit",
            "–",
            tier,
            "–",
            "–",
            f"{num(x.n)} values: too few to size",
        ]
    kept = "–" if x.rest_kept_share is None else percent(x.rest_kept_share, 1)
    return [
        f"{x.measure} limit",
        "–",
        tier,
        "–",
        f"≤ {num(x.limit)}",
        f"cuts {x.cuts_top} of the top {x.top_n} ({num(x.top_min)}–{num(x.top_max)}),"
        f" {num(x.cuts_rest)} of {num(x.n - x.top_n)} others (keeps {kept})",
    ]


def _cut_range(measured: str, lo: float | None, hi: float | None) -> str:
    """`elapsed 120.0 s` when every cut was the same, else `elapsed 110.0 s to 120.0 s`: a
    range of durations, never written like a stretch of the run."""
    if lo is None or hi is None:
        return f"{measured} unknown"
    if cell_number(lo) == cell_number(hi):
        return f"{measured} {cell_number(lo)} s"
    return f"{measured} {cell_number(lo)} s to {cell_number(hi)} s"


def heavy_report_rows(h: HeavyRequests) -> list[list[str]]:
    """The report's table of requests that hurt: the top requests per measure, the limits
    that would have capped them, the client timeouts observed."""
    rows: list[list[str]] = []
    for rs in (h.by_prefill, h.by_kv, h.by_duration):
        rows += [
            [
                f"{_REPORT_MEASURE[r.measure]} #{r.rank}",
                _name(r),
                r.model or "–",
                r.replica or "–",
                _figure(r),
                _detail(r),
            ]
            for r in rs
        ]
    rows += [_limit_row(x) for x in sorted(h.limits, key=lambda x: (x.measure, x.tier or ""))]
    for t in h.timeouts:
        if t.attempts:
            rows.append(
                [
                    _REPORT_KIND[t.kind],
                    f"{num(t.attempts)} attempts",
                    "–",
                    "–",
                    f"median {cell_number(t.median_s)} s",
                    _cut_range(t.measured, t.min_s, t.max_s),
                ]
            )
    return rows


def stuck_report_rows(s: StuckEpisodes, spans: list[str]) -> list[list[str]]:
    """The report's table of stuck episodes, one row each (`spans` the span column's cells)."""
    return [
        [
            e.replica or "–",
            e.node or "–",
            cell + (" (still stuck)" if e.ongoing else ""),
            f"{num(e.duration_s)} s",
            "yes" if e.alerted else f"no (under {short(s.for_s)} s more)",
            cell_number(e.peak_running, 0),
            "–"
            if e.streams_caught is None
            else f"{num(e.streams_caught)} ({num(e.streams_failed or 0)} not delivered)",
        ]
        for e, cell in zip(s.episodes, spans, strict=True)
    ]
