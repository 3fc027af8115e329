"""Text of the `heavy_requests` and `stuck` analyses for `relplan analyze` (registry rows name
these functions; the report's sections are relplan/report/sections/heavy_requests.py)."""

from __future__ import annotations

from relplan.analyses.context import RunContext
from relplan.analyses.heavy_requests import HeavyRequests
from relplan.analyses.stuck import StuckEpisodes
from relplan.tables import format_table
from relplan.values import MISSING, clock, num

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
