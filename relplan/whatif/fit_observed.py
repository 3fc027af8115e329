"""The client's and the proxy's behaviour as the incident shows it (relplan whatif fit).

- client: deadline = the most common duration of attempts the client cut (when at least half
  have it), else D from run.json; retries = the highest attempt number; backoff = the smallest
  and largest gap between an attempt's end and the call's next attempt. `ClientFlags` given
  on the command line override each.
- proxy: cancellation `immediate` when at least half the executions whose client left were
  aborted within 0.5 s (median), `deferred(S)` when aborted S s later, else `off`; coalescing
  when retries were attached to a running execution. Limits that refused attempts are not
  fitted: the provenance says how many were refused.
Each function appends one `Provenance` per fitted part and returns the scenario table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import duckdb

from relplan import sql
from relplan.analyses import RunContext
from relplan.analyses.wording import Words
from relplan.sim.scenario import whole
from relplan.whatif.model import Provenance

# The client's and the proxy's provenance, worded by relplan/text/whatif.py.
Said = Literal[
    "deadline",
    "deadline_cut",
    "deadline_given",
    "retries",
    "retries_seen",
    "backoff",
    "backoff_gaps",
    "delivery_window",
    "window_given",
    "proxy_unobserved",
    "cancellation",
    "cancellation_unseen",
    "cancellation_seen",
    "cancellation_rare",
    "coalescing",
    "coalescing_seen",
    "refusals_seen",
    "no_deadline",
    "no_cut",
    "retries_assumed",
    "proxy_assumed",
    "limits_assumed",
]
_say: Words[Said] = Words("relplan.text.whatif")

# vLLM's log stamps whole seconds: an abort logged up to this long before the proxy's end of the
# attempt still came after it.
LOG_RESOLUTION_S = 1.0


@dataclass(frozen=True)
class ClientFlags:
    """Client settings given on the command line: each overrides what the data shows."""

    deadline_s: float | None = None
    max_retries: int | None = None
    backoff_min_s: float | None = None
    backoff_max_s: float | None = None


def fit_client(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, flags: ClientFlags, prov: list[Provenance]
) -> dict[str, Any]:
    client: dict[str, Any] = {}
    cut = sql.one(con, "whatif/cut_attempts") if ctx.has_proxy else None
    if flags.deadline_s is not None:
        client["deadline_s"] = flags.deadline_s
        prov.append(
            Provenance(
                part="client", value=_say("deadline", seconds=flags.deadline_s), source="--deadline"
            )
        )
    elif (
        cut is not None
        and cut["gone"]
        and cut["mode_s"] is not None
        and 2 * cut["at_mode"] >= cut["gone"]
    ):
        client["deadline_s"] = float(cut["mode_s"])
        prov.append(
            Provenance(
                part="client",
                value=_say("deadline", seconds=cut["mode_s"]),
                source=_say("deadline_cut", lasted=cut["at_mode"], cut=cut["gone"]),
            )
        )
    elif ctx.deadline_s is not None:
        client["deadline_s"] = ctx.deadline_s
        prov.append(
            Provenance(
                part="client",
                value=_say("deadline", seconds=ctx.deadline_s),
                source=_say("deadline_given", source=ctx.deadline_source),
            )
        )
    else:
        client["deadline_s"] = math.inf
        prov.append(Provenance(part="client", value=_say("no_deadline"), source=_say("no_cut")))

    d = client["deadline_s"]
    gaps = (
        sql.one(con, "whatif/retry_gaps", {"deadline_s": d if math.isfinite(d) else None})
        if ctx.has_proxy
        else None
    )
    if flags.max_retries is not None:
        client["max_retries"] = flags.max_retries
        prov.append(
            Provenance(
                part="client",
                value=_say("retries", retries=flags.max_retries),
                source="--max-retries",
            )
        )
    elif gaps is not None and gaps["max_attempt"] is not None:
        client["max_retries"] = int(gaps["max_attempt"])
        prov.append(
            Provenance(
                part="client",
                value=_say("retries", retries=int(gaps["max_attempt"])),
                source=_say("retries_seen", retries=gaps["retries"], calls=gaps["calls"]),
            )
        )
    else:
        client["max_retries"] = 0
        prov.append(
            Provenance(
                part="client", value=_say("retries", retries=0), source=_say("retries_assumed")
            )
        )

    lo, hi = flags.backoff_min_s, flags.backoff_max_s
    source = "--backoff"
    if (lo is None or hi is None) and gaps is not None and gaps["gaps"]:
        lo = float(gaps["gap_min_s"]) if lo is None else lo
        hi = float(gaps["gap_max_s"]) if hi is None else hi
        source = _say("backoff_gaps", gaps=gaps["gaps"])
    if lo is not None and hi is not None:
        lo, hi = round(max(0.0, lo), 3), round(max(lo, hi), 3)
        client["backoff_min_s"], client["backoff_max_s"] = lo, hi
        prov.append(
            Provenance(part="client", value=_say("backoff", low_s=lo, high_s=hi), source=source)
        )
    if ctx.delivery_window_s is not None:
        client["delivery_window_s"] = ctx.delivery_window_s
        prov.append(
            Provenance(
                part="client",
                value=_say("delivery_window", seconds=ctx.delivery_window_s),
                source=_say("window_given", source=ctx.delivery_window_source),
            )
        )
    return client


def fit_proxy(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, prov: list[Provenance]
) -> dict[str, Any]:
    if not (ctx.has_proxy and ctx.has_events):
        prov.append(
            Provenance(
                part="proxy",
                value=_say("proxy_assumed"),
                source=_say("proxy_unobserved"),
            )
        )
        return {"cancellation": "off", "coalesce": False}
    r = sql.one(con, "whatif/proxy_controls_observed", {"resolution_s": LOG_RESOLUTION_S})
    assert r is not None
    gone = int(r["gone_with_execution"])
    aborted = int(r["aborted_after_gone"])
    proxy: dict[str, Any] = {}
    if gone == 0:
        proxy["cancellation"] = "off"
        prov.append(
            Provenance(
                part="proxy",
                value=_say("cancellation", cancellation="off"),
                source=_say("cancellation_unseen"),
            )
        )
    elif 2 * aborted >= gone:
        delay = float(r["abort_delay_median_s"] or 0.0)
        proxy["cancellation"] = (
            "immediate" if delay < 0.5 else f"deferred({whole(round(delay, 1))})"
        )
        prov.append(
            Provenance(
                part="proxy",
                value=_say("cancellation", cancellation=proxy["cancellation"]),
                source=_say("cancellation_seen", aborted=aborted, gone=gone, delay_s=delay),
            )
        )
    else:
        proxy["cancellation"] = "off"
        prov.append(
            Provenance(
                part="proxy",
                value=_say("cancellation", cancellation="off"),
                source=_say("cancellation_rare", aborted=aborted, gone=gone),
            )
        )
    attached = int(r["attached_retries"])
    proxy["coalesce"] = attached > 0
    prov.append(
        Provenance(
            part="proxy",
            value=_say("coalescing", coalesced=attached > 0),
            source=_say("coalescing_seen", attached=attached, retries=r["retries"]),
        )
    )
    if r["shed"]:
        prov.append(
            Provenance(
                part="proxy",
                value=_say("limits_assumed"),
                source=_say("refusals_seen", refused=r["shed"]),
            )
        )
    return proxy
